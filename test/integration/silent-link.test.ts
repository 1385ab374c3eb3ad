// A worker link whose network dies without a FIN or RST (a pulled cable, a NAT or proxy that
// forgot the flow, a frozen hub behind a proxy that keeps the TCP up) must not hold a worker
// off the fleet: the agent, whose pings go unanswered, drops the link and re-links; the hub
// drops a link silent for PAPRIKA_WORKER_TTL_S. The silence is real: a TCP relay that stops
// passing bytes both ways and closes nothing.
import { afterEach, describe, expect, it } from 'vitest';
import { capturedLog, startSimAgent, type SimAgent } from '../harness/agents.ts';
import { startBlackholeProxy, type BlackholeProxy } from '../harness/blackhole-proxy.ts';
import { realBackends, startTestHub, type TestHub } from '../harness/hub.ts';
import { requireServices } from '../harness/services.ts';
import { openJobStore } from '../../hub-core/src/adapters/sql/sql-job-store.ts';
import type { JobStore } from '../../hub-core/src/ports/job-store.ts';
import { waitFor } from '../harness/wait.ts';
import { NGINX_BIN, startNginx } from '../harness/nginx.ts';

describe('a silent worker link', () => {
  let hub: TestHub | undefined;
  let proxy: BlackholeProxy | undefined;
  let agent: SimAgent | undefined;
  afterEach(async () => {
    await agent?.kill();
    await proxy?.close();
    await hub?.stop();
    agent = proxy = hub = undefined;
  });

  it('the agent drops a link its hub stopped answering, re-links through a path that works, and runs the next job', async () => {
    hub = await startTestHub({ PAPRIKA_HEARTBEAT_S: '0.2', PAPRIKA_WORKER_TTL_S: '30' });
    proxy = await startBlackholeProxy(hub.url);
    const { log, lines } = capturedLog();
    agent = await startSimAgent(proxy.url, 1, { heartbeatS: 0.2, linkSilenceMs: 1000, log });
    const linked = () => lines.filter((l) => l.msg === 'linked').length;
    expect(linked()).toBe(1);
    proxy.cut();
    await waitFor('the agent dropped the silent link', async () => lines.some((l) => l.msg === 'the hub answered nothing on this link; dropping it and re-linking'));
    await waitFor('the agent linked again', async () => linked() === 2);
    // The hub now holds the new link (the old one's socket at the hub is still open, but superseded).
    const res = await fetch(`${hub.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'sleep', spec: { ms: 0 } }) });
    const { id } = (await res.json()) as { id: string };
    const job = await waitFor('the job succeeded', async () => {
      const j = (await (await fetch(`${hub!.url}/jobs/${id}`)).json()) as { status: string; worker_id: string };
      return j.status === 'succeeded' ? j : undefined;
    });
    expect(job.worker_id).toBe(agent.workerId);
  });

  it('the hub drops a link silent for PAPRIKA_WORKER_TTL_S', async () => {
    hub = await startTestHub({ PAPRIKA_HEARTBEAT_S: '0.2', PAPRIKA_WORKER_TTL_S: '1', PAPRIKA_HUB_HEARTBEAT_S: '0.2' });
    proxy = await startBlackholeProxy(hub.url);
    // This agent never gives up on its side (an agent of an older version, or one frozen itself).
    agent = await startSimAgent(proxy.url, 1, { heartbeatS: 0.2, linkSilenceMs: 3_600_000 });
    const link = hub.hub.localLinks.get(agent.workerId)!;
    expect(link.open).toBe(true);
    // Heartbeats flow: the link outlives several TTLs while they do.
    const lastSeen = link.last_seen_ms;
    await waitFor('two more heartbeats', async () => link.last_seen_ms > lastSeen + 300);
    expect(link.open).toBe(true);
    proxy.cut();
    await waitFor('the hub dropped the silent link', async () => !link.open && hub!.hub.localLinks.get(agent!.workerId) !== link, 10_000);
  });
});

describe.skipIf(!requireServices(['postgres', 'redis']))('a worker that re-linked to another hub while the first still holds its silent link', () => {
  it("the first hub shows it alive on the other hub, and forwards an operator's status to it", async () => {
    const backends = await realBackends();
    const timing = { PAPRIKA_HEARTBEAT_S: '0.2', PAPRIKA_WORKER_TTL_S: '2', PAPRIKA_HUB_HEARTBEAT_S: '30' }; // B's sweep never runs in this test
    const a = await startTestHub({ ...backends.env, ...timing });
    const b = await startTestHub({ ...backends.env, ...timing });
    const proxy = await startBlackholeProxy(b.url);
    const agent = await startSimAgent(proxy.url, 1, { heartbeatS: 0.2, linkSilenceMs: 1000 });
    try {
      expect(b.hub.localLinks.get(agent.workerId)?.open).toBe(true);
      proxy.retarget(a.url);
      proxy.cut(); // B keeps its socket, silent; the agent's re-link reaches A
      await waitFor('linked on A', async () => a.hub.localLinks.get(agent.workerId)?.open === true);
      const row = () => fetch(`${b.url}/admin/workers`).then(async (r) => ((await r.json()) as { workers: Array<{ worker_id: string; hub_id: string; alive: boolean }> }).workers.find((w) => w.worker_id === agent.workerId));
      // Past the TTL B's own link is dead; B's view takes the live row A publishes.
      const seen = await waitFor('B shows the worker alive on A', async () => {
        const w = await row();
        return w?.hub_id === a.hub.config.hubId && w.alive ? w : undefined;
      });
      expect(seen.alive).toBe(true);
      expect(b.hub.localLinks.get(agent.workerId)?.open).toBe(true); // B still holds the stale socket
      const res = await fetch(`${b.url}/admin/workers/${agent.workerId}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status: 'drain' }) });
      expect(res.status).toBe(200);
      await waitFor("A's link drained", async () => a.hub.localLinks.get(agent.workerId)?.status === 'drain');
    } finally {
      await agent.kill();
      await proxy.close();
      await a.stop();
      await b.stop();
      await backends.drop();
    }
  });
});

describe.skipIf(!requireServices(['postgres']))('a link whose frames wait behind a stalled database', () => {
  it('is not dropped as silent: a frame counts as a sign of life when it arrives, not when its turn comes', async () => {
    // A Postgres that stops answering (frozen, failing over): a result's write waits, the
    // worker resends it, and the resend waits in the link's queue for the database, with the
    // heartbeats behind it. Counted only once handled, they made every link look silent after
    // PAPRIKA_WORKER_TTL_S and the hub dropped the whole fleet.
    const backends = await realBackends();
    const real = await openJobStore({ databaseUrl: backends.env.DATABASE_URL });
    let release!: () => void;
    const stalled = new Promise<void>((r) => (release = r));
    let blockedAt = 0;
    const slow = new Set(['getJob', 'finishJob', 'finishJobs']);
    const store = new Proxy(real, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver);
        if (typeof v !== 'function') return v;
        if (!slow.has(String(prop))) return v.bind(target);
        return async (...args: unknown[]) => {
          if (prop === 'getJob' && blockedAt === 0) blockedAt = Date.now();
          await stalled;
          return (v as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    }) as JobStore;
    const h = await startTestHub({ ...backends.env, PAPRIKA_HEARTBEAT_S: '0.2', PAPRIKA_WORKER_TTL_S: '1', PAPRIKA_HUB_HEARTBEAT_S: '0.2' }, { store });
    const a = await startSimAgent(h.url, 1, { heartbeatS: 0.2 });
    try {
      const link = h.hub.localLinks.get(a.workerId)!;
      const job = await (await fetch(`${h.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'sleep', spec: { ms: 0 } }) })).json();
      // The result's write waits; its resend reaches the queue and waits there.
      await waitFor('a resent result waits in the queue for the database', async () => blockedAt > 0);
      await waitFor('heartbeats heard for two TTLs while the queue waits', async () => link.last_seen_ms > blockedAt + 2000, 10_000);
      expect(link.open).toBe(true);
      expect(h.hub.localLinks.get(a.workerId)).toBe(link);
      release();
      await waitFor('the job succeeded', async () => (await real.getJob(job.id))?.status === 'succeeded');
    } finally {
      release();
      await a.kill();
      await h.stop();
      await real.close();
      await backends.drop();
    }
  });
});

describe.skipIf(!NGINX_BIN || !requireServices(['postgres', 'redis']))('a frozen hub behind the generated nginx config', () => {
  it("a worker whose hub froze (its kernel still accepts) re-links to another hub: its later attempts carry a hop that nginx's hash moves", async () => {
    // nginx counts a frozen hub as up (connections succeed), and its hash on the worker id sent
    // every re-link back to it: the worker stayed off the fleet for as long as the freeze lasted.
    const backends = await realBackends();
    const a = await startTestHub({ ...backends.env, PAPRIKA_HEARTBEAT_S: '0.2' });
    const b = await startTestHub({ ...backends.env, PAPRIKA_HEARTBEAT_S: '0.2' });
    const proxyA = await startBlackholeProxy(a.url);
    const nginx = await startNginx([new URL(proxyA.url).host, new URL(b.url).host]);
    const agents: SimAgent[] = [];
    try {
      // A worker whose link the hash puts on A (about one in two; bounded).
      let onA: SimAgent | undefined;
      for (let i = 0; i < 16 && !onA; i++) {
        const s = await startSimAgent(nginx.url, 1, { heartbeatS: 0.2, linkSilenceMs: 1000, handshakeTimeoutMs: 1000 });
        agents.push(s);
        if (a.hub.localLinks.get(s.workerId)?.open) onA = s;
      }
      expect(onA).toBeDefined();
      proxyA.freeze();
      await waitFor('linked on B', async () => b.hub.localLinks.get(onA!.workerId)?.open === true, 30_000);
    } finally {
      await Promise.all(agents.map((s) => s.kill()));
      await nginx.stop();
      await proxyA.close();
      await a.stop();
      await b.stop();
      await backends.drop();
    }
  });
});
