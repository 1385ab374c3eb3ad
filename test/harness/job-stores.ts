// A SqlJobStore on either backend the job-store tests run against: embedded PGlite, or a
// database of its own on the local Postgres (dropped by `drop`).
import { openJobStore, type SqlJobStore } from '../../hub-core/src/adapters/sql/sql-job-store.ts';
import { createTestDatabase } from './services.ts';

export async function openBackendJobStore(backend: 'pglite' | 'postgres'): Promise<{ store: SqlJobStore; drop: () => Promise<void> }> {
  if (backend === 'pglite') return { store: await openJobStore({}), drop: async () => {} };
  const db = await createTestDatabase();
  return { store: await openJobStore({ databaseUrl: db.url }), drop: db.drop };
}
