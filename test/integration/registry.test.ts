// One suite, two registries: Redis (real server, own key prefix) and the in-process one.
// Expiry: the in-process registry runs on a ManualClock moved past the TTL; Redis counts its
// TTLs on the server, so the test waits until the key is gone.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryRegistry } from '../../hub-core/src/adapters/memory/memory-registry.ts';
import { RedisRegistry } from '../../hub-core/src/adapters/redis/redis-registry.ts';
import { DeadlineError, ManualClock, systemClock, type Clock } from '../../hub-core/src/ports/clock.ts';
import { HUB_HISTORY_S, type Registry, type WorkerSnapshot } from '../../hub-core/src/ports/registry.ts';
import { dropRedisPrefix, REDIS_TEST_URL, requireServices, testRedisPrefix } from '../harness/services.ts';
import { waitFor } from '../harness/wait.ts';

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
    const manual = kind === 'memory' ? new ManualClock(Date.now()) : undefined;
    const clock: Clock = manual ?? systemClock;
    /** Lets `ms` pass for the registry's TTLs, then waits until `gone` holds. */
    const expire = async (what: string, ms: number, gone: () => Promise<boolean>) => {
      manual?.advance(ms);
      await waitFor(what, async () => await gone(), 5000, 10);
    };
    beforeAll(async () => {
      prefix = testRedisPrefix();
      reg = kind === 'redis' ? await RedisRegistry.connect(REDIS_TEST_URL, prefix, 120) : new MemoryRegistry(clock);
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
      await expire('s1 expired', 250, async () => (await reg.getSessionOwner('s1')) === undefined);
      expect(await reg.getSessionOwner('s1')).toBeUndefined();
    });

    it('lists live hubs and, after their TTL, recently dead ones', async () => {
      const now = clock.now();
      await reg.heartbeatHub({ hub_id: 'hub-live', url: 'http://l', started_at: now, workers: 3, free_lanes: 2 }, 10, now);
      await reg.heartbeatHub({ hub_id: 'hub-dead', url: 'http://d', started_at: now, workers: 1, free_lanes: 0 }, 0.1, now);
      await expire('hub-dead row expired', 150, async () => (await reg.listHubs(clock.now(), 60)).find((h) => h.hub_id === 'hub-dead')?.alive === false);
      const hubs = await reg.listHubs(clock.now(), 60);
      expect(hubs.find((h) => h.hub_id === 'hub-live')).toMatchObject({ alive: true, workers: 3, url: 'http://l' });
      expect(hubs.find((h) => h.hub_id === 'hub-dead')).toMatchObject({ alive: false });
    });

    it('a short window only filters: a hub dead for minutes stays listed for HUB_HISTORY_S, then goes', async () => {
      const now = clock.now();
      await reg.heartbeatHub({ hub_id: 'hub-minutes', url: 'http://m', started_at: now, workers: 0, free_lanes: 0 }, 0.05, now - 120_000);
      await reg.heartbeatHub({ hub_id: 'hub-ancient', url: 'http://a', started_at: now, workers: 0, free_lanes: 0 }, 0.05, now - (HUB_HISTORY_S + 10) * 1000);
      // Rows expired (Redis counts the TTL from now, not from the heartbeat's time).
      await expire('both rows expired', 100, async () => (await reg.listHubs(now, HUB_HISTORY_S)).find((h) => h.hub_id === 'hub-minutes')?.alive === false);
      // A forward or a start-up check asks only for hubs seen within HUB_TTL...
      expect((await reg.listHubs(now, 90)).map((h) => h.hub_id)).not.toContain('hub-minutes');
      // ...and the console still shows the one that died two minutes ago.
      const listed = await reg.listHubs(now, HUB_HISTORY_S);
      expect(listed.find((h) => h.hub_id === 'hub-minutes')).toMatchObject({ alive: false });
      expect(listed.map((h) => h.hub_id)).not.toContain('hub-ancient');
    });
  });
}

describe.skipIf(!requireServices(['redis']))('redis registry fleet read', () => {
  it('reads the fleet from the compact rows, and from the hashes for workers published without a row (a hub of an older version) or with a row that does not parse', async () => {
    const prefix = testRedisPrefix();
    const reg = await RedisRegistry.connect(REDIS_TEST_URL, prefix, 120);
    try {
      await reg.publishWorkers([snap('wr1'), snap('wr2', 'hub-b'), snap('wr3')]);
      // What an older hub leaves: the hash and the index entry, no row; and a row gone bad.
      await reg.client.hdel(`${prefix}workers:rows`, 'wr2');
      await reg.client.hset(`${prefix}workers:rows`, 'wr3', '{not json');
      const fleet = await reg.readFleet(5000);
      expect(fleet.map((w) => w.worker_id).sort()).toEqual(['wr1', 'wr2', 'wr3']);
      expect(fleet.find((w) => w.worker_id === 'wr2')).toEqual(snap('wr2', 'hub-b'));
      expect(fleet.find((w) => w.worker_id === 'wr3')).toEqual(snap('wr3'));
      // A registered id that never linked has neither a row nor a last_seen: not in the fleet.
      await reg.claimWorkerId('10.77.0.1', 'never-linked');
      expect((await reg.readFleet(5000)).length).toBe(3);
    } finally {
      await reg.close();
      await dropRedisPrefix(prefix);
    }
  });
});

describe.skipIf(!requireServices(['redis']))('redis registry job-done announcements', () => {
  it("announces every job that ends in one event-loop turn in one message, heard by another hub's registry; a bare id (an older hub) and junk are tolerated", async () => {
    const prefix = testRedisPrefix();
    const a = await RedisRegistry.connect(REDIS_TEST_URL, prefix, 120);
    const b = await RedisRegistry.connect(REDIS_TEST_URL, prefix, 120);
    // A raw subscriber counts the messages on the channel.
    const raw = a.client.duplicate();
    const messages: string[] = [];
    try {
      raw.on('message', (_c: string, m: string) => messages.push(m));
      await raw.subscribe(`${prefix}jobs:done`);
      const heard: string[] = [];
      b.onJobDone((id) => id !== 'probe' && id !== 'marker' && heard.push(id));
      let probed = false;
      const stopProbe = b.onJobDone((id) => (probed ||= id === 'probe'));
      // b's subscription is made on its first listener: wait until a probe gets through.
      await waitFor('b subscribed', async () => (await a.announceJobDone('probe'), probed), 5000, 20);
      stopProbe();
      const ids = Array.from({ length: 1500 }, (_, i) => `job-${i}`);
      await Promise.all(ids.map((id) => a.announceJobDone(id)));
      await waitFor('all 1500 heard', async () => heard.length >= 1500, 5000, 10);
      expect(heard).toEqual(ids);
      // The raw subscriber reads on its own connection, maybe later than b: a marker published
      // after the batch on the same connection arrives after every message of it.
      await a.client.publish(`${prefix}jobs:done`, '["marker"]');
      await waitFor('the raw subscriber reached the marker', async () => messages.includes('["marker"]'), 5000, 10);
      // Probes still on the way are not counted.
      expect(messages.filter((m) => m !== '["probe"]' && m !== '["marker"]').length).toBe(2); // 1000 ids a message at most
      // What an older hub publishes (one bare id), and what names no job.
      await a.client.publish(`${prefix}jobs:done`, 'job-old');
      await a.client.publish(`${prefix}jobs:done`, '[not json');
      // Longer than any hub sends (1,000 ids of 200 characters at most): not parsed, its ids not heard.
      await a.client.publish(`${prefix}jobs:done`, JSON.stringify(['job-huge', ...Array.from({ length: 60_000 }, () => 'x'.repeat(20))]));
      await a.client.publish(`${prefix}jobs:done`, '[1,"job-mixed",null]');
      await waitFor('the mixed message heard', async () => heard.includes('job-mixed'), 5000, 10);
      expect(heard.slice(1500)).toEqual(['job-old', 'job-mixed']);
    } finally {
      raw.disconnect();
      await a.close();
      await b.close();
      await dropRedisPrefix(prefix);
    }
  });
});

// The adapter's two races against time run on the injected clock: no test waits them out.
describe.skipIf(!requireServices(['redis']))('redis registry deadlines', () => {
  it('gives up connecting to a Redis that accepts TCP and never answers, after timeoutMs on its clock', async () => {
    const sockets = new Set<net.Socket>();
    const server = net.createServer((s) => (sockets.add(s), s.on('error', () => {})));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const clock = new ManualClock(0);
      const connecting = RedisRegistry.connect(`redis://127.0.0.1:${port}`, testRedisPrefix(), 120, { timeoutMs: 10_000, clock });
      const outcome = connecting.then(() => 'connected', (err: Error) => err.message);
      await waitFor('the client to reach the silent server', async () => sockets.size > 0, 5000, 10);
      clock.advance(9_999);
      expect(await Promise.race([outcome, new Promise((r) => setImmediate(() => r('pending')))])).toBe('pending');
      clock.advance(1);
      expect(await outcome).toBe('no answer within 10 s');
    } finally {
      sockets.forEach((s) => s.destroy());
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('stops connecting at once when the start-up is aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(RedisRegistry.connect('redis://127.0.0.1:1', testRedisPrefix(), 120, { signal: controller.signal, clock: new ManualClock(0) })).rejects.toThrow('start-up aborted');
  });

  it('rejects a fleet read that outlives its deadline with DeadlineError', async () => {
    const prefix = testRedisPrefix();
    const clock = new ManualClock(0);
    const reg = await RedisRegistry.connect(REDIS_TEST_URL, prefix, 120, { clock });
    try {
      const read = reg.readFleet(150);
      clock.advance(150); // before Redis could answer: the deadline wins
      await expect(read).rejects.toBeInstanceOf(DeadlineError);
      expect(await reg.readFleet(150)).toEqual([]); // an answer inside the deadline is returned
      expect(clock.pending).toBe(0); // the settled read left no timer behind
    } finally {
      await reg.close();
      await dropRedisPrefix(prefix);
    }
  });
});
