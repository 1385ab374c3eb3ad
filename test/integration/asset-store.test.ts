// The asset stores a hub chooses (README § Where assets live): the job_assets table on real
// Postgres and on PGlite (the same SQL), and files; each with the size bound and retention
// pass driven by a ManualClock.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileAssetStore } from '../../hub-core/src/adapters/files/file-asset-store.ts';
import { WithLegacyFileAssets } from '../../hub-core/src/adapters/files/legacy-file-assets.ts';
import { SqlAssetStore } from '../../hub-core/src/adapters/sql/sql-asset-store.ts';
import { openJobStore, type SqlJobStore } from '../../hub-core/src/adapters/sql/sql-job-store.ts';
import { loadConfig } from '../../hub-core/src/config.ts';
import { deleteExpiredAssets } from '../../hub-core/src/loops/asset-retention-loop.ts';
import { AssetTooLargeError, type AssetStore } from '../../hub-core/src/ports/asset-store.ts';
import { ManualClock } from '../../hub-core/src/ports/clock.ts';
import { realBackends, startTestHub } from '../harness/hub.ts';
import { createTestDatabase, requireServices } from '../harness/services.ts';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
const DAY_MS = 86_400_000;

for (const backend of ['postgres', 'pglite', 'files'] as const) {
  const run = backend !== 'postgres' || requireServices(['postgres']);
  describe.skipIf(!run)(`asset store on ${backend}`, () => {
    const clock = new ManualClock(Date.parse('2026-01-01T00:00:00Z'));
    let store: AssetStore;
    let jobs: SqlJobStore | undefined;
    let cleanup = async () => {};

    beforeAll(async () => {
      if (backend === 'files') {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-assets-'));
        store = new FileAssetStore(dir, clock);
        cleanup = async () => fs.rmSync(dir, { recursive: true, force: true });
        return;
      }
      const db = backend === 'postgres' ? await createTestDatabase() : undefined;
      jobs = await openJobStore({ databaseUrl: db?.url });
      store = new SqlAssetStore(jobs.db, clock, 1024);
      cleanup = async () => {
        await jobs?.close();
        await db?.drop();
      };
    });
    afterAll(() => cleanup());

    it('stores, lists and serves assets with their content type; a repeat overwrites', async () => {
      const id = randomUUID();
      await store.put(id, 'screenshot.png', 'image/png', PNG);
      await store.put(id, 'page.html', 'text/html', Buffer.from('<h1>x</h1>'));
      await store.put(id, 'page.html', 'text/html; charset=utf-8', Buffer.from('<h1>y</h1>'));
      expect(await store.list(id)).toEqual(['page.html', 'screenshot.png']);
      const got = await store.get(id, 'screenshot.png');
      expect(got?.contentType).toBe('image/png');
      expect(got?.data.equals(PNG)).toBe(true);
      expect((await store.get(id, 'page.html'))?.data.toString()).toBe('<h1>y</h1>');
      expect(await store.list(randomUUID())).toEqual([]);
    });

    it('answers nothing for a missing asset or an unsafe key, and refuses to store one', async () => {
      const id = randomUUID();
      expect(await store.get(id, 'nope.png')).toBeUndefined();
      expect(await store.get(id, '../x')).toBeUndefined();
      expect(await store.get('../etc', 'passwd')).toBeUndefined();
      expect(await store.list('../etc')).toEqual([]);
      await expect(store.put(id, '../evil', 'text/plain', Buffer.from('x'))).rejects.toThrow(/unsafe/);
    });

    it.skipIf(backend === 'files')('refuses an asset over its size limit and stores nothing', async () => {
      const id = randomUUID();
      await expect(store.put(id, 'big.png', 'image/png', Buffer.alloc(1025))).rejects.toBeInstanceOf(AssetTooLargeError);
      expect(await store.list(id)).toEqual([]);
    });

    it('the retention pass deletes what was stored before PAPRIKA_ASSET_RETENTION_S, by the injected clock, and keeps the rest', async () => {
      const config = loadConfig({ PAPRIKA_ASSET_RETENTION_S: String(7 * 86400) });
      const d = { config, assets: store, clock, log: pino({ level: 'silent' }) };
      clock.advance(8 * DAY_MS);
      await deleteExpiredAssets(d); // whatever the tests above stored
      const old = randomUUID();
      await store.put(old, 'screenshot.png', 'image/png', PNG);
      clock.advance(5 * DAY_MS);
      const recent = randomUUID();
      await store.put(recent, 'screenshot.png', 'image/png', PNG);
      clock.advance(1 * DAY_MS);
      expect(await deleteExpiredAssets(d)).toBe(0); // 6 days: both kept
      expect(await store.list(old)).toEqual(['screenshot.png']);
      clock.advance(1 * DAY_MS + 1000);
      expect(await deleteExpiredAssets(d)).toBe(1);
      expect(await store.list(old)).toEqual([]);
      expect(await store.get(old, 'screenshot.png')).toBeUndefined();
      expect(await store.list(recent)).toEqual(['screenshot.png']);
    });
  });
}

// An upgrade from a release that kept a Postgres hub's assets as files under PAPRIKA_DATA_DIR/assets:
// the upgraded hub still lists, serves and ages out those files; new assets go to the table.
describe.skipIf(!requireServices(['postgres']))('assets kept as files by an older hub on DATABASE_URL', () => {
  it('are listed and served after the upgrade, and the retention pass ages them out', async () => {
    const backends = await realBackends();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-legacy-assets-'));
    fs.mkdirSync(path.join(dataDir, 'assets'));
    const h = await startTestHub({ ...backends.env, PAPRIKA_DATA_DIR: dataDir });
    try {
      const res = await fetch(`${h.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'sleep', spec: { ms: 0 } }) });
      const job = (await res.json()) as { id: string };
      const clock = new ManualClock(Date.now());
      await new FileAssetStore(path.join(dataDir, 'assets'), clock).put(job.id, 'screenshot.png', 'image/png', PNG);
      const read = (await (await fetch(`${h.url}/jobs/${job.id}`)).json()) as { assets: string[] };
      expect(read.assets).toEqual(['screenshot.png']);
      const asset = await fetch(`${h.url}/jobs/${job.id}/assets/screenshot.png`);
      expect(asset.status).toBe(200);
      expect(asset.headers.get('content-type')).toBe('image/png');
      expect(Buffer.from(await asset.arrayBuffer()).equals(PNG)).toBe(true);

      const both = new WithLegacyFileAssets(new FileAssetStore(path.join(dataDir, 'new'), clock), new FileAssetStore(path.join(dataDir, 'assets'), clock));
      await both.put(job.id, 'page.html', 'text/html', Buffer.from('<p>'));
      expect(await both.list(job.id)).toEqual(['page.html', 'screenshot.png']);
      expect(fs.existsSync(path.join(dataDir, 'assets', job.id, 'page.html'))).toBe(false); // new ones never go to the old place
      clock.advance(8 * DAY_MS);
      expect(await both.deleteStoredBefore(new Date(clock.now() - 7 * DAY_MS), 10)).toBe(2);
      expect(await both.list(job.id)).toEqual([]);
    } finally {
      await h.stop();
      await backends.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
