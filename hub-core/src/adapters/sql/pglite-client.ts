import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import type { SqlClient } from './sql-client.ts';

/**
 * PGlite's own start parameters plus a small buffer cache. Its default (Postgres's 128 MB
 * shared_buffers, inside the WebAssembly memory) cost the hub ~125 MiB of RSS for a job table
 * the OS page cache holds anyway.
 */
const START_PARAMS = ['--single', '-F', '-O', '-j', '-c', 'search_path=public', '-c', 'exit_on_error=false', '-c', 'log_checkpoints=false', '-c', 'max_worker_processes=0', '-c', 'max_parallel_workers=0', '-c', 'max_parallel_workers_per_gather=0', '-c', 'io_method=sync', '-c', 'max_parallel_maintenance_workers=0', '-c', 'shared_buffers=16MB', '-c', 'wal_buffers=512kB'];

/**
 * A WebAssembly memory never shrinks, and initdb grows PGlite's to ~630 MiB: on a fresh data
 * directory, run initdb in a worker thread whose memory goes with it, then open the directory
 * here (~200 MiB less for the hub's whole life).
 */
async function initDataDir(dir: string): Promise<void> {
  if (fs.existsSync(path.join(dir, 'PG_VERSION'))) return;
  const pglite = import.meta.resolve('@electric-sql/pglite');
  const code = `const { workerData } = require('node:worker_threads');
import(workerData.pglite).then(async ({ PGlite }) => { const db = new PGlite(workerData.dir); await db.waitReady; await db.close(); });`;
  const worker = new Worker(code, { eval: true, workerData: { pglite, dir } });
  await new Promise<void>((resolve, reject) => {
    worker.once('error', reject);
    worker.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`PGlite initdb in ${dir} exited with ${code}`))));
  });
}

/** Embedded Postgres in `dir` (or in memory when dir is undefined): the default without DATABASE_URL. */
export async function pgliteClient(dir: string | undefined): Promise<SqlClient> {
  if (dir) {
    fs.mkdirSync(dir, { recursive: true });
    await initDataDir(dir);
  }
  const db = new PGlite(dir, { startParams: START_PARAMS });
  await db.waitReady;
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
      await db.close();
    },
  };
}
