// Runs once before the suite: drop test databases left behind by an interrupted earlier run.
import pg from 'pg';
import { PG_ADMIN_URL } from './services.ts';

export default async function setup(): Promise<void> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL });
  try {
    await c.connect();
    const { rows } = await c.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE 'paprika_t_%'`);
    const dayAgo = Date.now() - 6 * 3600_000;
    for (const { datname } of rows) {
      const created = parseInt(datname.split('_')[2] ?? '', 36);
      if (Number.isFinite(created) && created < dayAgo) await c.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    }
  } catch {
    // No Postgres: the tests that need it say so themselves.
  } finally {
    await c.end().catch(() => {});
  }
}
