// One suite, two registries: Redis (real server, own key prefix) and the in-process one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryRegistry } from '../../hub-core/src/adapters/memory/memory-registry.ts';
import { RedisRegistry } from '../../hub-core/src/adapters/redis/redis-registry.ts';
import { ManualClock, systemClock } from '../../hub-core/src/ports/clock.ts';
import { waitFor } from '../harness/processes.ts';
import { HUB_HISTORY_S, type Registry, type WorkerSnapshot } from '../../hub-core/src/ports/registry.ts';
import { dropRedisPrefix, REDIS_TEST_URL, requireServices, testRedisPrefix } from '../harness/services.ts';

const snap = (id: string, hub = 'hub-a', over: Partial<WorkerSnapshot> = {}): WorkerSnapshot => ({
  worker_id: id,
  hub_id: hub,
  lan_ip: '10.0.0.1',
  hostname: 'h',
  status: 'active',
  in_flight: 1,
  max_concurrent: 2,
  lane_novnc_urls: ['u0', 'u1'],
  novnc_url: null,
  disk_pct: 12.5,
  cpu_pct: 3,
  mem_pct: 40,
  last_seen_ms: 1000,
  version: '1',
  platform: 'linux-x64',
  lanes: [{ index: 0, view_url: 'u0', busy: true, job_id: 'j1', session_id: null }],
  kinds: ['sleep', 'session'],
  left_at_ms: null,
  ...over,
});

for (const kind of ['memory', 'redis'] as const) {
  const run = kind === 'memory' || requireServices(['redis']);
  describe.skipIf(!run)(`${kind} registry`, () => {
    let reg: Registry;
    let prefix = '';
    beforeAll(async () => {
      prefix = testRedisPrefix();
      reg = kind === 'redis' ? await RedisRegistry.connect(REDIS_TEST_URL, prefix, 120) : new MemoryRegistry(systemClock);
    });
    afterAll(async () => {
      await reg?.close();
      if (kind === 'redis') await dropRedisPrefix(prefix);
    });

    it('hands out IP-derived ids, the same again for the same IP, the long form on collision', async () => {
      expect(await reg.claimWorkerId('10.10.5.150', 'a')).toBe('w5150');
      expect(await reg.claimWorkerId('10.10.5.150', 'a')).toBe('w5150');
      expect(await reg.claimWorkerId('10.10.51.50', 'b')).toBe('w10-10-51-50');
    });

    it('never gives one id to two IPs when they register at once', async () => {
      const ids = await Promise.all(['10.20.7.11', '10.20.71.1'].map((ip) => reg.claimWorkerId(ip, 'x')));
      expect(new Set(ids).size).toBe(2);
    });

    it('publishes worker snapshots and reads the fleet back intact', async () => {
      await reg.publishWorkers([snap('wa'), snap('wb', 'hub-b', { novnc_url: 'vnc', lane_novnc_urls: [] })]);
      const fleet = await reg.readFleet(1500);
      const a = fleet.find((w) => w.worker_id === 'wa');
      expect(a).toEqual(snap('wa'));
      expect(fleet.find((w) => w.worker_id === 'wb')?.novnc_url).toBe('vnc');
    });

    it('keeps a goodbye: the snapshot says when it left, and a later hello clears it', async () => {
      await reg.publishWorkers([snap('wl', 'hub-a', { left_at_ms: 5000 })]);
      expect((await reg.readFleet(1500)).find((w) => w.worker_id === 'wl')?.left_at_ms).toBe(5000);
      await reg.publishWorkers([snap('wl', 'hub-a', { kinds: null })]);
      expect((await reg.readFleet(1500)).find((w) => w.worker_id === 'wl')).toMatchObject({ left_at_ms: null, kinds: null });
    });

    it('forgets a worker at once when asked: its row and owner go, the rest stay', async () => {
      await reg.publishWorkers([snap('wf1'), snap('wf2')]);
      await reg.setOwner('wf1', 'hub-a');
      expect(await reg.forgetWorker('wf1')).toBe(true);
      expect(await reg.forgetWorker('wf1')).toBe(false);
      const ids = (await reg.readFleet(1500)).map((w) => w.worker_id);
      expect(ids).toContain('wf2');
      expect(ids).not.toContain('wf1');
      expect(await reg.getOwner('wf1')).toBeUndefined();
    });

    it('forgets a worker by itself PAPRIKA_WORKER_FORGET_S after its last publish', async () => {
      const clock = new ManualClock(1_000_000);
      const short = kind === 'redis' ? await RedisRegistry.connect(REDIS_TEST_URL, prefix, 0.1, { forgetS: 0.3 }) : new MemoryRegistry(clock, 0.3);
      try {
        await short.publishWorkers([snap('wgone')]);
        await short.setOwner('wgone', 'hub-a');
        expect((await short.readFleet(1500)).map((w) => w.worker_id)).toContain('wgone');
        clock.advance(301);
        await waitFor('forgotten', async () => !(await short.readFleet(1500)).some((w) => w.worker_id === 'wgone'), 5000, 50);
        expect(await short.getOwner('wgone')).toBeUndefined();
      } finally {
        await short.close();
      }
    });

    it('releases the owner only for the hub that wrote it (A → B hand-off in the bad order)', async () => {
      await reg.setOwner('wh', 'hub-A');
      await reg.setOwner('wh', 'hub-B'); // B registers first…
      expect(await reg.releaseOwnerIfMine('wh', 'hub-A')).toBe(false); // …then A's late unregister
      expect(await reg.getOwner('wh')).toBe('hub-B');
      expect(await reg.releaseOwnerIfMine('wh', 'hub-B')).toBe(true);
      expect(await reg.getOwner('wh')).toBeUndefined();
    });

    it('keeps session owners with a TTL', async () => {
      await reg.setSessionOwner('s1', 'hub-A', 0.2);
      expect(await reg.getSessionOwner('s1')).toBe('hub-A');
      await new Promise((r) => setTimeout(r, 350));
      expect(await reg.getSessionOwner('s1')).toBeUndefined();
    });

    it('lists live hubs and, after their TTL, recently dead ones', async () => {
      const now = Date.now();
      await reg.heartbeatHub({ hub_id: 'hub-live', url: 'http://l', started_at: now, workers: 3, free_lanes: 2 }, 10, now);
      await reg.heartbeatHub({ hub_id: 'hub-dead', url: 'http://d', started_at: now, workers: 1, free_lanes: 0 }, 0.1, now);
      await new Promise((r) => setTimeout(r, 250));
      const hubs = await reg.listHubs(Date.now(), 60);
      expect(hubs.find((h) => h.hub_id === 'hub-live')).toMatchObject({ alive: true, workers: 3, url: 'http://l' });
      expect(hubs.find((h) => h.hub_id === 'hub-dead')).toMatchObject({ alive: false });
    });

    it('a short window only filters: a hub dead for minutes stays listed for HUB_HISTORY_S, then goes', async () => {
      const now = Date.now();
      await reg.heartbeatHub({ hub_id: 'hub-minutes', url: 'http://m', started_at: now, workers: 0, free_lanes: 0 }, 0.05, now - 120_000);
      await reg.heartbeatHub({ hub_id: 'hub-ancient', url: 'http://a', started_at: now, workers: 0, free_lanes: 0 }, 0.05, now - (HUB_HISTORY_S + 10) * 1000);
      await new Promise((r) => setTimeout(r, 150)); // rows expired (Redis counts the TTL from now)
      // A forward or a start-up check asks only for hubs seen within HUB_TTL...
      expect((await reg.listHubs(now, 90)).map((h) => h.hub_id)).not.toContain('hub-minutes');
      // ...and the console still shows the one that died two minutes ago.
      const listed = await reg.listHubs(now, HUB_HISTORY_S);
      expect(listed.find((h) => h.hub_id === 'hub-minutes')).toMatchObject({ alive: false });
      expect(listed.map((h) => h.hub_id)).not.toContain('hub-ancient');
    });
  });
}
