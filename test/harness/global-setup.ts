// Runs once around the suite. Before: give the run its tag (unless test/run-tests.mjs did) and
// drop test databases an interrupted earlier run left behind. After: a backstop that deletes
// whatever databases and keys of this run are still there, and says so loudly. It does not
// hide a leak: it records what it found in PAPRIKA_TEST_LEAKS_FILE, and the runner's leak
// check counts it as a failed test.
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { ensureConsoleBuilt } from './console-build.ts';
import { describeLeftovers, leftoverCount, runLeftovers } from './leftovers.ts';
import { newRunTag, PG_ADMIN_URL } from './services.ts';

async function dropStaleDatabases(): Promise<void> {
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

export default async function setup(): Promise<() => Promise<void>> {
  // Set before vitest starts its workers, which inherit it: every name they make carries it.
  const run = (process.env.PAPRIKA_TEST_RUN ||= newRunTag());
  await dropStaleDatabases();
  await ensureConsoleBuilt();
  return async function teardown() {
    const leaksFile = process.env.PAPRIKA_TEST_LEAKS_FILE;
    try {
      const found = await runLeftovers(run, { remove: true });
      if (leaksFile) {
        fs.mkdirSync(path.dirname(leaksFile), { recursive: true });
        fs.writeFileSync(leaksFile, JSON.stringify({ run, ...found }, null, 2));
      }
      if (leftoverCount(found) > 0) {
        console.error(`\n!!! test run ${run} left ${leftoverCount(found)} database(s)/key(s) behind (now deleted); a test is missing its clean-up:\n${describeLeftovers(found).join('\n')}\n`);
      }
    } catch (err) {
      console.error(`test teardown: could not look for leftovers of run ${run}: ${(err as Error).message}`);
    }
  };
}
