import fs from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import type { SqlClient } from './sql-client.ts';

/** Embedded Postgres in `dir` (or in memory when dir is undefined): the default without DATABASE_URL. */
export async function pgliteClient(dir: string | undefined): Promise<SqlClient> {
  if (dir) fs.mkdirSync(dir, { recursive: true });
  const db = dir ? new PGlite(dir) : new PGlite();
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
