// Real Postgres and Redis for tests: each test gets its own database and its own key prefix,
// so files running in parallel never collide. Without the services the tests skip loudly —
// except under CI=true, where a missing service is a failure.
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { Redis } from 'ioredis';
import pg from 'pg';
import { freePort } from '../../hub-core/src/http/free-port.ts';

export const PG_ADMIN_URL = process.env.PAPRIKA_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_TEST_URL = process.env.PAPRIKA_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0';

function reachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port, timeout: 1000 }, () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
    s.on('timeout', () => {
      s.destroy();
      resolve(false);
    });
  });
}

const pgUrl = new URL(PG_ADMIN_URL);
const redisUrl = new URL(REDIS_TEST_URL);
export const hasPostgres = await reachable(pgUrl.hostname, Number(pgUrl.port || 5432));
export const hasRedis = await reachable(redisUrl.hostname, Number(redisUrl.port || 6379));

export function requireServices(names: Array<'postgres' | 'redis'>): boolean {
  const missing = names.filter((n) => (n === 'postgres' ? !hasPostgres : !hasRedis));
  if (missing.length === 0) return true;
  if (process.env.CI === 'true') throw new Error(`CI=true but ${missing.join(' and ')} is not reachable: start it (see .ci/run)`);
  console.warn(`\n!!! SKIPPING: ${missing.join(' and ')} not reachable on 127.0.0.1 — these tests did not run !!!\n`);
  return false;
}

/**
 * The tag of this test run (`r` + base-36 start time + random), set by test/run-tests.mjs or
 * the global setup. Every name below ends with it, so the run's leak check and clean-up find
 * exactly the databases and keys of this run, never those of a run beside it.
 */
export const TEST_RUN = process.env.PAPRIKA_TEST_RUN ?? '';
export const newRunTag = () => `r${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;

/** `prefix_<base-36 ms>_<random>[_<run tag>]`: the global setup reads the time from field 3. */
export const uniqueName = (prefix: string) => `${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}${TEST_RUN ? `_${TEST_RUN}` : ''}`;

/** A fresh database; drop() removes it (and its connections). */
export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = uniqueName('paprika_t');
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export const testRedisPrefix = () => `${uniqueName('paprika_t')}:`;

/**
 * A hub a test starts on the shared Redis must write under a test prefix: keys under the
 * production prefix would outlive the test and escape the leak check. A private server
 * (startPrivateRedis) is the test's own and may use any prefix.
 */
export function assertTestRedisPrefix(env: Record<string, string | undefined>): void {
  if (!env.REDIS_URL) return;
  let host: string;
  try {
    host = new URL(env.REDIS_URL).host;
  } catch {
    return; // loadConfig names the bad value
  }
  if (host !== new URL(REDIS_TEST_URL).host) return;
  if (!env.PAPRIKA_REDIS_PREFIX?.startsWith('paprika_t_')) {
    throw new Error(`a test hub on the shared Redis needs PAPRIKA_REDIS_PREFIX from testRedisPrefix() (or realBackends()), got ${JSON.stringify(env.PAPRIKA_REDIS_PREFIX ?? '(unset)')}`);
  }
}

const globEscape = (s: string) => s.replace(/[*?[\]\\]/g, '\\$&');

/**
 * Delete every key under a test prefix (SCAN + UNLINK in batches; KEYS would block the server
 * the other files share). Refuses anything but a test prefix. Returns how many it deleted.
 */
export async function dropRedisPrefix(prefix: string, url = REDIS_TEST_URL): Promise<number> {
  if (!prefix.startsWith('paprika_t_')) throw new Error(`dropRedisPrefix: ${JSON.stringify(prefix)} is not a test prefix`);
  return unlinkMatching(`${globEscape(prefix)}*`, url);
}

/** UNLINK every key matching a SCAN pattern; returns the count. */
export async function unlinkMatching(pattern: string, url = REDIS_TEST_URL): Promise<number> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2, connectTimeout: 2000, retryStrategy: () => null });
  redis.on('error', () => {});
  await redis.connect();
  let deleted = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) deleted += await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return deleted;
}

/** The worker ids whose `…worker:{id}:owner` key under `prefix` names `hubId` (SCAN, not KEYS). */
export async function ownerKeysNaming(prefix: string, hubId: string, url = REDIS_TEST_URL): Promise<string[]> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2, connectTimeout: 2000, retryStrategy: () => null });
  redis.on('error', () => {});
  await redis.connect();
  const named: string[] = [];
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${globEscape(prefix)}worker:*:owner`, 'COUNT', 1000);
      cursor = next;
      const owners = keys.length > 0 ? await redis.mget(...keys) : [];
      keys.forEach((k, i) => {
        if (owners[i] === hubId) named.push(k.slice(prefix.length + 'worker:'.length, -':owner'.length));
      });
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return named;
}

/**
 * A Redis server of the test's own (redis-server on a free loopback port), for tests that
 * pause, flush or stop Redis: CLIENT PAUSE on the shared server would stall every other test.
 * `restart()` starts a new, empty server on the same port (no persistence: what a Redis that
 * lost its data looks like to the hubs).
 */
export async function startPrivateRedis(): Promise<{ url: string; stop: () => Promise<void>; pause: () => void; resume: () => void; restart: () => Promise<void> }> {
  const { spawn } = await import('node:child_process');
  const port = await freePort();
  const launch = async () => {
    const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    const exited = new Promise<void>((r) => child.on('exit', () => r()));
    const until = Date.now() + 10_000;
    while (!(await reachable('127.0.0.1', port))) {
      if (Date.now() > until || child.exitCode !== null) throw new Error('private redis-server did not start');
      await new Promise((r) => setTimeout(r, 50));
    }
    return { child, exited };
  };
  let server = await launch();
  const kill = async () => {
    server.child.kill('SIGCONT');
    server.child.kill('SIGKILL');
    await server.exited;
  };
  return {
    url: `redis://127.0.0.1:${port}/0`,
    /** SIGSTOP: the server keeps its connections and accepts new ones, and answers nothing. */
    pause: () => void server.child.kill('SIGSTOP'),
    resume: () => void server.child.kill('SIGCONT'),
    async restart() {
      await kill();
      server = await launch();
    },
    stop: kill,
  };
}
