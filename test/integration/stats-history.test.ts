// GET /admin/stats/history: the charts' 15 min / 1 h / 24 h ranges, bucketed in Postgres from
// the recorded fleet samples and the finished jobs. Every bucket is present (empty ones too),
// the window ends on a bucket boundary, and a bad range is a 400 that changes nothing.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../hub-core/src/ports/clock.ts';
import { json } from '../harness/http.ts';
import { realBackends, startTestHub, type TestHub } from '../harness/hub.ts';
import { requireServices } from '../harness/services.ts';

const run = requireServices(['postgres', 'redis']);
// 10:07:45 UTC: the 15 min window (30 s buckets) is 09:53:00 → 10:08:00.
const NOW = Date.parse('2026-12-03T10:07:45Z');

describe.skipIf(!run)('GET /admin/stats/history on Postgres', () => {
  let hub: TestHub;
  let drop = async () => {};
  const clock = new ManualClock(NOW);

  beforeAll(async () => {
    const b = await realBackends();
    drop = b.drop;
    hub = await startTestHub({ ...b.env, PAPRIKA_ADMIN_TOKEN: 'adm', PAPRIKA_BIND: '127.0.0.1' }, { clock });
    const store = hub.hub.store;
    // Two hubs' samples in the bucket at 10:00:00, one sample at 10:00:30, one far outside the 15 min window.
    await store.history.record({ at: new Date('2026-12-03T10:00:05Z'), hubId: 'a', queued: 3, oldestQueuedS: 12, inFlight: 2, capacity: 4 });
    await store.history.record({ at: new Date('2026-12-03T10:00:20Z'), hubId: 'b', queued: 5, oldestQueuedS: 20, inFlight: 4, capacity: 4 });
    await store.history.record({ at: new Date('2026-12-03T10:00:31Z'), hubId: 'a', queued: 0, oldestQueuedS: null, inFlight: 1, capacity: 4 });
    await store.history.record({ at: new Date('2026-12-03T09:00:00Z'), hubId: 'a', queued: 99, oldestQueuedS: 1, inFlight: 1, capacity: 1 });
    // Two succeeded and one failed job in the 10:01:00 bucket.
    for (const [i, status] of (['succeeded', 'succeeded', 'failed'] as const).entries()) {
      const id = randomUUID();
      const now = new Date(Date.parse('2026-12-03T10:01:10Z') + i * 1000);
      await store.insertRunningJob({ id, kind: 'sleep', spec: { ms: 1 }, hubId: 'h', idempotencyKey: null, now }, { workerId: 'w1', hubId: 'h', lane: 0, assignmentId: `a-${i}`, novncUrl: null, now, deadlineAt: new Date(NOW + 60_000) });
      await store.finishJob(id, { assignmentId: `a-${i}`, workerId: 'w1', status, result: null, error: status === 'failed' ? 'x' : null, now });
    }
  }, 60_000);
  afterAll(async () => {
    await hub?.stop();
    await drop();
  });

  const get = (q: string, token = 'adm') => fetch(`${hub.url}/admin/stats/history${q}`, { headers: { authorization: `Bearer ${token}` } });

  it('buckets 15 min into 30 s buckets ending on the boundary after now, empty buckets included', async () => {
    const res = await get('?range=15m');
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body.range).toBe('15m');
    expect(body.bucket_s).toBe(30);
    expect(body.from).toBe('2026-12-03T09:53:00.000Z');
    expect(body.to).toBe('2026-12-03T10:08:00.000Z');
    expect(body.buckets).toHaveLength(30);
    const at = (iso: string) => body.buckets.find((b: { t: string }) => b.t === iso);
    // Two hubs' samples in one bucket: the deepest queue, the oldest age, the mean load.
    expect(at('2026-12-03T10:00:00.000Z')).toMatchObject({ queued: 5, oldest_queued_s: 20, in_flight: 3, capacity: 4, succeeded: 0, failed: 0 });
    expect(at('2026-12-03T10:00:30.000Z')).toMatchObject({ queued: 0, oldest_queued_s: null, in_flight: 1 });
    expect(at('2026-12-03T10:01:00.000Z')).toMatchObject({ succeeded: 2, failed: 1, queued: null, in_flight: null });
    // A bucket with no sample says so (null), it is not a zero.
    expect(at('2026-12-03T09:53:00.000Z')).toMatchObject({ succeeded: 0, failed: 0, queued: null, capacity: null });
    // Nothing from 09:00 leaks in.
    expect(body.buckets.some((b: { queued: number | null }) => b.queued === 99)).toBe(false);
  });

  it('1 h has 60 one-minute buckets, 24 h has 48 half-hour buckets', async () => {
    const h = await json(await get('?range=1h'));
    expect([h.bucket_s, h.buckets.length, h.to]).toEqual([60, 60, '2026-12-03T10:08:00.000Z']);
    expect(h.buckets.find((b: { t: string }) => b.t === '2026-12-03T09:00:00.000Z')).toBeUndefined();
    const d = await json(await get('?range=24h'));
    expect([d.bucket_s, d.buckets.length, d.to]).toEqual([1800, 48, '2026-12-03T10:30:00.000Z']);
    // 09:00 and 10:00 samples both count in their half-hour buckets.
    expect(d.buckets.find((b: { t: string }) => b.t === '2026-12-03T09:00:00.000Z').queued).toBe(99);
    expect(d.buckets.find((b: { t: string }) => b.t === '2026-12-03T10:00:00.000Z')).toMatchObject({ queued: 5, succeeded: 2, failed: 1 });
  });

  it('refuses an unknown range, extra parameters and a missing admin token', async () => {
    for (const q of ['?range=7d', '?range=', '?range=15m&x=1', '?range[]=15m', `?range=${'1'.repeat(5000)}`]) {
      const res = await get(q);
      expect(res.status, q).toBe(400);
      expect((await json(res)).code).toBe('bad_request');
    }
    expect((await get('?range=1h', 'wrong')).status).toBe(401);
    expect((await fetch(`${hub.url}/admin/stats/history`)).status).toBe(401);
  });
});
