import pg from 'pg';
import type { SqlClient } from './sql-client.ts';

// Keep bigint counts as numbers; they stay far below 2^53.
pg.types.setTypeParser(20, (v: string) => Number(v));

export function pgClient(url: string, opts: { max?: number } = {}): SqlClient {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 10,
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 10_000,
    // A dead server must fail requests quickly (503) instead of hanging POST /jobs.
    query_timeout: 15_000,
  });
  // An idle client losing its connection (Postgres restart) must not crash the hub.
  pool.on('error', () => {});
  return {
    kind: 'postgres',
    async query(text, params, name) {
      const r = name ? await pool.query({ name, text, values: params as unknown[] | undefined }) : await pool.query(text, params as unknown[] | undefined);
      return r.rows;
    },
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const out = await fn({
          query: async (text, params) => (await client.query(text, params as unknown[] | undefined)).rows,
          exec: async (sql) => {
            await client.query(sql);
          },
        });
        await client.query('COMMIT');
        return out;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    async close() {
      await pool.end();
    },
  };
}
