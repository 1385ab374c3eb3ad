import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import { PGlite } from '@electric-sql/pglite';
import type { SqlClient } from './sql-client.ts';
import { makeDirs } from '../../wire/files.ts';
import { lockDataDir, type DataDirLock } from './data-dir-lock.ts';

/**
 * PGlite's own start parameters plus a small buffer cache. Its default (Postgres's 128 MB
 * shared_buffers, inside the WebAssembly memory) cost the hub ~125 MiB of RSS for a job table
 * the OS page cache holds anyway.
 */
const START_PARAMS = ['--single', '-F', '-O', '-j', '-c', 'search_path=public', '-c', 'exit_on_error=false', '-c', 'log_checkpoints=false', '-c', 'max_worker_processes=0', '-c', 'max_parallel_workers=0', '-c', 'max_parallel_workers_per_gather=0', '-c', 'io_method=sync', '-c', 'max_parallel_maintenance_workers=0', '-c', 'shared_buffers=16MB', '-c', 'wal_buffers=512kB'];

/**
 * A WebAssembly memory never shrinks, and initdb grows PGlite's to ~630 MiB: on a fresh data
 * directory, run initdb in a child process whose memory goes with it, then open the directory
 * here. A child process, not a worker thread: the thread's malloc arena outlived it with ~65 MiB
 * that the hub then carried for its whole life (first start 250 MiB of PSS against 175 for a
 * restart on the same directory).
 */
async function initDataDir(dir: string): Promise<void> {
  if (fs.existsSync(path.join(dir, 'PG_VERSION'))) return;
  const pglite = import.meta.resolve('@electric-sql/pglite');
  const code = `const [pglite, dir] = process.argv.slice(-2);
try {
  const { PGlite } = await import(pglite);
  const db = new PGlite(dir);
  await db.waitReady;
  await db.close();
} catch (e) {
  process.stderr.write((e?.message || e?.name || String(e)) + (e?.errno !== undefined ? ' (errno ' + e.errno + ')' : ''));
  process.exit(1);
}`;
  // ELECTRON_RUN_AS_NODE: inside the desktop app process.execPath is Electron, which then runs as Node.
  const child = spawn(process.execPath, ['--input-type=module', '-e', code, '--', pglite, dir], {
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d: string) => (stderr = (stderr + d).slice(-4000)));
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`PGlite initdb in ${dir} exited with ${signal ?? code}${stderr.trim() ? `: ${stderr.trim()}` : ''}`)),
    );
  });
}

/**
 * PGlite's WebAssembly is compiled by V8's baseline compiler only. By default V8 also recompiles
 * the hot functions of the 9 MB module with its optimising compiler, in the background: that
 * code and the compiler's own memory cost the hub 35-80 MiB of RSS for good (measured: 160-170
 * against 200-250 MiB after 12,000 job-like statements), and the optimised code was no faster
 * on a hub's statements (steady-state CPU a job of three statements 1.02-1.20 ms against
 * 0.99-1.24 ms baseline-only; the optimising compile itself costs CPU while it runs). The flag
 * is process-wide; nothing else in a hub runs WebAssembly, and a hub on DATABASE_URL never sets it.
 */
function baselineWasmOnly(): void {
  v8.setFlagsFromString('--liftoff-only');
}

/** Embedded Postgres in `dir` (or in memory when dir is undefined): the default without DATABASE_URL. */
export async function pgliteClient(dir: string | undefined): Promise<SqlClient> {
  baselineWasmOnly();
  let lock: DataDirLock | undefined;
  let db: PGlite;
  try {
    if (dir) {
      makeDirs(dir);
      lock = lockDataDir(`${dir}.lock`);
      await initDataDir(dir);
    }
    db = new PGlite(dir, { startParams: START_PARAMS });
    await db.waitReady;
  } catch (err) {
    lock?.release();
    throw err;
  }
  return {
    kind: 'pglite',
    async query(text, params) {
      const r = await db.query(text, params as unknown[] | undefined);
      return r.rows as never[];
    },
    transaction(fn) {
      return db.transaction((tx) =>
        fn({
          query: async (text, params) => (await tx.query(text, params as unknown[] | undefined)).rows as never[],
          exec: async (sql) => {
            await tx.exec(sql);
          },
        }),
      );
    },
    async close() {
      try {
        await db.close();
      } finally {
        lock?.release();
      }
    },
  };
}
