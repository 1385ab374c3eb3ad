// What a test run left behind on the shared Postgres and Redis: the databases and keys whose
// names carry the run's tag (see uniqueName in services.ts). Only this run's names are looked
// at, so a run beside it (another checkout, a developer's `npx vitest`) is neither reported nor
// touched. Used by the global teardown (clean up, record) and by test/run-tests.mjs (the leak
// check that fails the run).
import { Redis } from 'ioredis';
import pg from 'pg';
import { hasPostgres, hasRedis, PG_ADMIN_URL, REDIS_TEST_URL, unlinkMatching } from './services.ts';

export interface Leftovers {
  /** Redis keys, grouped by test prefix: `{ 'paprika_t_…:': ['workers:index', …] }`. */
  keys: Record<string, string[]>;
  databases: string[];
  /** Which services could be looked at. */
  checked: { redis: boolean; postgres: boolean };
}

const RUN_TAG = /^r[0-9a-z]+$/;

function keyPattern(run: string): string {
  if (!RUN_TAG.test(run)) throw new Error(`not a run tag: ${JSON.stringify(run)}`);
  return `*paprika_t_*_${run}:*`;
}

async function runKeys(run: string): Promise<string[]> {
  const redis = new Redis(REDIS_TEST_URL, { lazyConnect: true, maxRetriesPerRequest: 2, connectTimeout: 2000, retryStrategy: () => null });
  redis.on('error', () => {});
  await redis.connect();
  const found = new Set<string>();
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', keyPattern(run), 'COUNT', 1000);
      cursor = next;
      for (const k of keys) found.add(k);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return [...found].sort();
}

async function runDatabases(run: string, c: pg.Client): Promise<string[]> {
  if (!RUN_TAG.test(run)) throw new Error(`not a run tag: ${JSON.stringify(run)}`);
  const { rows } = await c.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE $1 ORDER BY datname`, [`paprika\\_t\\_%\\_${run}`]);
  return rows.map((r) => r.datname);
}

function groupByPrefix(keys: string[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const key of keys) {
    const cut = key.indexOf(':') + 1;
    (out[key.slice(0, cut)] ??= []).push(key.slice(cut));
  }
  return out;
}

/** Find this run's leftovers; with `remove`, delete them too (and report what was there). */
export async function runLeftovers(run: string, opts: { remove: boolean }): Promise<Leftovers> {
  const result: Leftovers = { keys: {}, databases: [], checked: { redis: false, postgres: false } };
  if (hasRedis) {
    const keys = await runKeys(run);
    if (opts.remove && keys.length > 0) await unlinkMatching(keyPattern(run));
    result.keys = groupByPrefix(keys);
    result.checked.redis = true;
  }
  if (hasPostgres) {
    const c = new pg.Client({ connectionString: PG_ADMIN_URL });
    await c.connect();
    try {
      result.databases = await runDatabases(run, c);
      if (opts.remove) for (const name of result.databases) await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    } finally {
      await c.end();
    }
    result.checked.postgres = true;
  }
  return result;
}

export function leftoverCount(l: Leftovers): number {
  return Object.values(l.keys).reduce((n, ks) => n + ks.length, 0) + l.databases.length;
}

/** Lines naming every leftover, for the runner's output. */
export function describeLeftovers(l: Leftovers): string[] {
  const lines: string[] = [];
  for (const [prefix, keys] of Object.entries(l.keys)) lines.push(`  redis ${prefix} ${keys.length} key(s): ${keys.slice(0, 8).join(', ')}${keys.length > 8 ? ', …' : ''}`);
  for (const db of l.databases) lines.push(`  postgres database ${db}`);
  return lines;
}
