// A hub started on a database a newer release migrated: the migrations it does not ship are
// named in a warning at start (it said nothing, and then misread what newer hubs wrote).
import { Writable } from 'node:stream';
import pg from 'pg';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate } from '../../hub-core/src/adapters/sql/migrate.ts';
import { pgClient } from '../../hub-core/src/adapters/sql/pg-client.ts';
import { startHub } from '../../hub-core/src/app/hub.ts';
import { createTestDatabase, PG_ADMIN_URL, requireServices } from '../harness/services.ts';

/** A logger whose lines are kept, parsed. */
function keptLog() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, logger: pino({ level: 'info' }, stream) };
}

describe.skipIf(!requireServices(['postgres']))('a hub on a database a newer release migrated', () => {
  const drops: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const d of drops) await d();
  });

  it('names the migrations it does not ship in a warning, and still starts', async () => {
    const db = await createTestDatabase();
    drops.push(db.drop);
    const sql = pgClient(db.url, { max: 1 });
    try {
      expect((await migrate(sql)).unknown).toEqual([]);
    } finally {
      await sql.close();
    }
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    try {
      // And a name of this release's range it does not ship (one renamed since): not newer.
      await admin.query("INSERT INTO schema_migrations (name) VALUES ('990_from_a_newer_release.sql'), ('991_and_another.sql'), ('002_renamed_since.sql')");
    } finally {
      await admin.end();
    }

    const { lines, logger } = keptLog();
    const hub = await startHub({ env: { PAPRIKA_PORT: '0', DATABASE_URL: db.url }, logger });
    try {
      const warned = lines.filter((l) => l.level === 40 && Array.isArray(l.unknown_migrations));
      expect(warned).toHaveLength(1);
      expect(warned[0].unknown_migrations).toEqual(['990_from_a_newer_release.sql', '991_and_another.sql']);
      expect(String(warned[0].msg)).toMatch(/^DATABASE_URL was migrated by a newer release than this hub \(990_from_a_newer_release\.sql, 991_and_another\.sql unknown here\)/);
      expect((await fetch(`${hub.url}/healthz`)).status).toBe(200);
    } finally {
      await hub.stop();
    }
  });

  it('says nothing on a database of its own release', async () => {
    const db = await createTestDatabase();
    drops.push(db.drop);
    const { lines, logger } = keptLog();
    const hub = await startHub({ env: { PAPRIKA_PORT: '0', DATABASE_URL: db.url }, logger });
    try {
      expect(lines.filter((l) => 'unknown_migrations' in l)).toEqual([]);
      expect(lines.some((l) => l.msg === 'hub listening' || String(l.msg).startsWith('hub listening'))).toBe(true);
    } finally {
      await hub.stop();
    }
  });

  it('names a Postgres that answered with an error as refusing the start-up, not as unreachable', async () => {
    const url = new URL(PG_ADMIN_URL);
    url.pathname = `/paprika_no_such_database_${Date.now().toString(36)}`;
    const err = await startHub({ env: { PAPRIKA_PORT: '0', DATABASE_URL: url.toString() }, logger: pino({ level: 'silent' }) }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(/^DATABASE_URL: Postgres at \S+ refused the hub's start-up: database "paprika_no_such_database_\w+" does not exist/);
  });
});
