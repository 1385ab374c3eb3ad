// The incremental fleet read on a Redis of the test's own: hub A reads what hub B writes
// (a new worker, a changed row, a forgotten one) through the change log, keeps the snapshot of
// a worker that did not change, and reads everything again when the log cannot be trusted:
// Redis restarted empty, its counter went back, or a write bypassed the log (an older hub).
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FULL_FLEET_READ_EVERY_MS } from '../../hub-core/src/adapters/redis/redis-fleet-reader.ts';
import { RedisRegistry } from '../../hub-core/src/adapters/redis/redis-registry.ts';
import { ManualClock } from '../../hub-core/src/ports/clock.ts';
import type { WorkerSnapshot } from '../../hub-core/src/ports/registry.ts';
import { requireServices, startPrivateRedis } from '../harness/services.ts';
import { waitFor } from '../harness/wait.ts';

const PREFIX = 'fleet-log:';
const snap = (id: string, over: Partial<WorkerSnapshot> = {}): WorkerSnapshot => ({
  worker_id: id,
  hub_id: 'hub-b',
  lan_ip: '10.0.0.1',
  hostname: 'h',
  status: 'active',
  in_flight: 0,
  max_concurrent: 2,
  lane_novnc_urls: [],
  novnc_url: null,
  disk_pct: 1,
  cpu_pct: 1,
  mem_pct: 1,
  last_seen_ms: Date.now(),
  version: '1',
  platform: 'linux-x64',
  lanes: [],
  kinds: null,
  left_at_ms: null,
  ...over,
});
const byId = (ws: WorkerSnapshot[]) => Object.fromEntries(ws.map((w) => [w.worker_id, w]));

describe.skipIf(!requireServices(['redis']))('incremental fleet read', () => {
  let redis: Awaited<ReturnType<typeof startPrivateRedis>>;
  let clock: ManualClock;
  let a: RedisRegistry;
  let b: RedisRegistry;
  let admin: Redis;

  beforeEach(async () => {
    redis = await startPrivateRedis();
    clock = new ManualClock(0);
    a = await RedisRegistry.connect(redis.url, PREFIX, 120, { clock });
    b = await RedisRegistry.connect(redis.url, PREFIX, 120);
    admin = new Redis(redis.url);
    admin.on('error', () => {}); // reconnects after a restart by itself
  });
  afterEach(async () => {
    admin.disconnect();
    await a.close();
    await b.close();
    await redis.stop();
  });

  it("reads another hub's new, changed and forgotten workers at once, and keeps the snapshot of one that did not change", async () => {
    expect(await a.readFleet(5000)).toEqual([]);
    await b.publishWorkers([snap('w1'), snap('w2'), snap('w3')]);
    const first = byId(await a.readFleet(5000));
    expect(Object.keys(first).sort()).toEqual(['w1', 'w2', 'w3']);

    await b.publishWorkers([snap('w1', { in_flight: 2, status: 'drain' })]);
    expect(await b.forgetWorker('w3')).toBe(true);
    await b.publishWorkers([snap('w4')]);
    const second = byId(await a.readFleet(5000));
    expect(Object.keys(second).sort()).toEqual(['w1', 'w2', 'w4']);
    expect(second.w1).toMatchObject({ in_flight: 2, status: 'drain' });
    expect(second.w2).toBe(first.w2);
    // The read asked for the changes only: a row written behind the log's back is not in it...
    await admin.hset(`${PREFIX}workers:rows`, 'w2', JSON.stringify(snap('w2', { in_flight: 1 })));
    expect(byId(await a.readFleet(5000)).w2.in_flight).toBe(0);
    // ...until the periodic read of every row, which still keeps what did not change.
    clock.advance(FULL_FLEET_READ_EVERY_MS);
    const full = byId(await a.readFleet(5000));
    expect(full.w2.in_flight).toBe(1);
    expect(full.w1).toBe(second.w1);
  });

  it('after Redis restarted empty, reads what Redis holds: what hubs publish again, however far the new counter has come, and nothing before', async () => {
    await b.publishWorkers([snap('w1'), snap('w2')]);
    for (let i = 0; i < 5; i++) await b.publishWorkers([snap('w1', { in_flight: i % 2 })]);
    expect((await a.readFleet(5000)).length).toBe(2);
    await redis.restart();
    // Hub A reads nothing until seven batches are in: the new counter passes the cursor it holds.
    await waitFor('a publish once Redis is back', async () => b.publishWorkers([snap('w2', { in_flight: 0 })]).then(() => true, () => false));
    for (let i = 1; i < 7; i++) await b.publishWorkers([snap('w2', { in_flight: i })]);
    await b.publishWorkers([snap('w5')]);
    const after = byId(await a.readFleet(5000));
    expect(Object.keys(after).sort()).toEqual(['w2', 'w5']);
    expect(after.w2.in_flight).toBe(6);
    await redis.restart();
    await waitFor('a read once Redis is back', async () => (await a.readFleet(5000).catch(() => undefined))?.length === 0);
  });

  it('reads every row again when the counter went back under the same epoch (Redis restored from an older snapshot)', async () => {
    await b.publishWorkers([snap('w1')]);
    for (let i = 0; i < 5; i++) await b.publishWorkers([snap('w1', { in_flight: 1 })]);
    expect((await a.readFleet(5000)).length).toBe(1);
    await admin.set(`${PREFIX}workers:seq`, '1');
    // Written without the log, then one logged change that leaves the counter under hub A's cursor.
    await admin.hset(`${PREFIX}workers:rows`, 'w1', JSON.stringify(snap('w1', { in_flight: 2 })));
    await admin.sadd(`${PREFIX}workers:index`, 'w9');
    await b.publishWorkers([snap('w9')]);
    const after = byId(await a.readFleet(5000));
    expect(Object.keys(after).sort()).toEqual(['w1', 'w9']);
    expect(after.w1.in_flight).toBe(2);
  });

  it("drops a forgotten worker's entry from the change log after a while: the log holds the live fleet, and a reader that missed the entry reads every row instead of keeping a ghost", async () => {
    const changes = `${PREFIX}workers:changes`;
    // Hub C drops a forgotten id's entry at once (the default keeps it FORGOTTEN_LOG_MS).
    const c = await RedisRegistry.connect(redis.url, PREFIX, 120, { forgottenLogMs: 0 });
    try {
      await c.publishWorkers([snap('w1'), snap('w2'), snap('w3')]);
      const first = byId(await a.readFleet(5000));
      expect(Object.keys(first).sort()).toEqual(['w1', 'w2', 'w3']);

      // Ephemeral workers come and go: their ids do not pile up in the log.
      for (let i = 0; i < 50; i++) {
        await c.publishWorkers([snap(`tmp-${i}`)]);
        expect(await c.forgetWorker(`tmp-${i}`)).toBe(true);
      }
      expect(await c.forgetWorker('w3')).toBe(true);
      expect((await admin.zrange(changes, 0, -1)).sort()).toEqual(['w1', 'w2']);
      expect(await admin.zcard(`${PREFIX}workers:forgotten`)).toBe(0);

      // Hub A never read w3's forgetting: its cursor is below the floor, so it reads every row.
      const second = byId(await a.readFleet(5000));
      expect(Object.keys(second).sort()).toEqual(['w1', 'w2']);
      expect(second.w1).toBe(first.w1);
      // Past the floor it reads changes only again: a row written behind the log's back is not seen.
      await admin.hset(`${PREFIX}workers:rows`, 'w2', JSON.stringify(snap('w2', { in_flight: 1 })));
      await c.publishWorkers([snap('w1', { in_flight: 2 })]);
      const third = byId(await a.readFleet(5000));
      expect(third.w1.in_flight).toBe(2);
      expect(third.w2.in_flight).toBe(0);

      // An id that links again after it was forgotten keeps its entry: it is its latest change.
      expect(await b.forgetWorker('w2')).toBe(true); // hub B keeps the entry for now
      await c.publishWorkers([snap('w2')]);
      expect(await c.forgetWorker('w1')).toBe(true); // hub C's clean-up finds w2 due, with a row again
      expect(await admin.zrange(changes, 0, -1)).toEqual(['w2']);
      expect(await admin.zcard(`${PREFIX}workers:forgotten`)).toBe(0);
      expect(Object.keys(byId(await a.readFleet(5000)))).toEqual(['w2']);
    } finally {
      await c.close();
    }
  });

  it('with the default delay a forgotten id stays in the log, so readers drop it without reading every row', async () => {
    await b.publishWorkers([snap('w1'), snap('w2')]);
    expect((await a.readFleet(5000)).length).toBe(2);
    expect(await b.forgetWorker('w2')).toBe(true);
    expect(await admin.zscore(`${PREFIX}workers:changes`, 'w2')).not.toBeNull();
    expect(await admin.zscore(`${PREFIX}workers:forgotten`, 'w2')).not.toBeNull();
    // Incremental (a row written behind the log's back stays unseen) and w2 gone.
    await admin.hset(`${PREFIX}workers:rows`, 'w1', JSON.stringify(snap('w1', { in_flight: 1 })));
    const after = byId(await a.readFleet(5000));
    expect(Object.keys(after)).toEqual(['w1']);
    expect(after.w1.in_flight).toBe(0);
  });
});
