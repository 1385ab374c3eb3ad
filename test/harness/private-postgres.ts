// A PostgreSQL server of the test's own (initdb + postgres on a free loopback port), for runs
// that stop and restart Postgres: restarting the shared server would break every other test.
// As root, the server runs as the `postgres` user (it refuses to run as root).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { stablePort, waitFor } from './processes.ts';

export interface PrivatePostgres {
  url: string;
  port: number;
  /** Whether the server is running now. */
  readonly up: boolean;
  /** Stop the server: `fast` (clean shutdown) or `immediate` (like a crash: recovery on start). */
  down(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Start it again on the same port and data directory. */
  start(): Promise<void>;
  /** Stop for good and remove the data directory. */
  stop(): Promise<void>;
}

/** The directory with initdb and postgres: PAPRIKA_PG_BINDIR, else Debian's newest, else PATH. */
export function postgresBinDir(): string | undefined {
  const fromEnv = process.env.PAPRIKA_PG_BINDIR;
  if (fromEnv) return fromEnv;
  const base = '/usr/lib/postgresql';
  if (fs.existsSync(base)) {
    const versions = fs.readdirSync(base).filter((v) => fs.existsSync(path.join(base, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return path.join(base, versions[0], 'bin');
  }
  try {
    return path.dirname(execFileSync('which', ['initdb'], { encoding: 'utf8' }).trim());
  } catch {
    return undefined;
  }
}

function runAs(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = postgresBinDir();
  if (!bin) throw new Error('PostgreSQL server binaries not found (apt-get install postgresql, or set PAPRIKA_PG_BINDIR)');
  const ids = runAs();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-pg-'));
  const data = path.join(dir, 'data');
  if (ids.uid !== undefined) fs.chownSync(dir, ids.uid, ids.gid!);
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C', LC_ALL: 'C' };
  execFileSync(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8'], { ...ids, env, stdio: 'pipe', cwd: dir });
  const port = await stablePort();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let out = '';

  const start = async () => {
    // No fsync: a killed server keeps what it wrote (the OS has it), and only an OS crash
    // would lose it. synchronous_commit stays on: a commit the hub saw must survive a crash.
    const args = ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'full_page_writes=off', '-c', 'max_connections=300'];
    const c = spawn(path.join(bin, 'postgres'), args, { ...ids, env, cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    child = c;
    c.stdout!.on('data', (d) => (out = (out + d).slice(-8000)));
    c.stderr!.on('data', (d) => (out = (out + d).slice(-8000)));
    exited = new Promise((r) => c.on('exit', () => r()));
    await waitFor(`private postgres on ${port}`, async () => {
      if (c.exitCode !== null) throw new Error(`postgres exited (${c.exitCode}): ${out}`);
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
      try {
        await client.connect();
        await client.query('SELECT 1');
        return true;
      } finally {
        await client.end().catch(() => {});
      }
    }, 20_000, 50);
  };

  const down = async (mode: 'fast' | 'immediate' = 'fast') => {
    const c = child;
    if (!c || c.exitCode !== null) return;
    // SIGINT is the "fast" shutdown, SIGQUIT the "immediate" one (crash recovery at start).
    c.kill(mode === 'fast' ? 'SIGINT' : 'SIGQUIT');
    const t = setTimeout(() => c.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(t);
    child = undefined;
  };

  await start();
  return {
    url,
    port,
    get up() {
      return child !== undefined && child.exitCode === null;
    },
    down,
    start,
    async stop() {
      await down('fast');
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
