// Numbered migrations in hub-core/migrations, run at start-up, the same files on Postgres and
// PGlite. One transaction under an advisory lock: hubs that start together apply each once.
import fs from 'node:fs';
import path from 'node:path';
import { packageFile } from '../../package-files.ts';
import type { SqlClient } from './sql-client.ts';

export const MIGRATIONS_DIR = packageFile(import.meta.url, 'hub-core/migrations', '../../../migrations');
const LOCK_KEY = 727_411_001;

/**
 * What a start-up's migration did: the files it applied, and the migrations the database holds
 * numbered past this release's last one (a newer hub migrated it: this one may not read what
 * that one writes).
 */
export interface MigrationOutcome {
  applied: string[];
  unknown: string[];
}

export async function migrate(db: SqlClient, dir = MIGRATIONS_DIR): Promise<MigrationOutcome> {
  const files = fs
    .readdirSync(dir)
    .filter((f) => /^\d{3}_.+\.sql$/.test(f))
    .sort();
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [LOCK_KEY]);
    await tx.exec('CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    const done = new Set((await tx.query<{ name: string }>('SELECT name FROM schema_migrations')).map((r) => r.name));
    const applied: string[] = [];
    for (const file of files) {
      if (done.has(file)) continue;
      await tx.exec(fs.readFileSync(path.join(dir, file), 'utf8'));
      await tx.query('INSERT INTO schema_migrations (name) VALUES ($1)', [file]);
      applied.push(file);
    }
    // Newer: numbered past this release's last migration (a name of ours renamed later is not).
    const last = files.length > 0 ? Number(files[files.length - 1].slice(0, 3)) : 0;
    return { applied, unknown: [...done].filter((name) => /^\d{3}_/.test(name) && Number(name.slice(0, 3)) > last).sort() };
  });
}
