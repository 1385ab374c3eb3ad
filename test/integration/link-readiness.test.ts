// When a link may take work. A new link is not picked before the hub knows the worker's disk:
// with 0 % assumed, a worker on a full disk would take jobs between its hello and its first
// heartbeat (CI caught the cli-slice PAPRIKA_DISK_MAX_PCT test doing so after a hub restart).
// An old link is not picked once a newer link of the same worker says hello: a job sent there
// would never be read.
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openJobStore } from '../../hub-core/src/adapters/sql/sql-job-store.ts';
import { encode } from '../../hub-core/src/wire/protocol.ts';
import { startSimAgent } from '../harness/agents.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { waitFor } from '../harness/processes.ts';
import { enrollRaw, openRawLink, provenHello, rawLink } from '../harness/raw-link.ts';
import { json, post } from '../harness/http.ts';

describe('a link whose disk the hub does not know yet (PAPRIKA_DISK_MAX_PCT=50)', () => {
  let hub: TestHub;
  beforeAll(async () => {
    hub = await startTestHub({ PAPRIKA_DISK_MAX_PCT: '50', PAPRIKA_REDRIVE_MIN_AGE_S: '0', PAPRIKA_QUEUE_REDRIVE_INTERVAL_S: '0.1' });
  });
  afterAll(async () => {
    await hub?.stop();
  });

  it('takes no job until a heartbeat reports the disk, then takes the queued one', async () => {
    const link = await rawLink(hub.url, 'w-nodisk', { disk_pct: undefined });
    const job = await post(`${hub.url}/jobs`, { kind: 'sleep', spec: { ms: 10 } });
    expect(job.status).toBe('queued');
    await new Promise((r) => setTimeout(r, 400)); // several redrive passes
    expect((await fetch(`${hub.url}/jobs/${job.id}`).then(json)).status).toBe('queued');
    expect(link.frames.some((f) => f.type === 'assign')).toBe(false);

    link.ws.send(encode({ type: 'heartbeat', in_flight: 0, cpu_pct: 1, mem_pct: 1, disk_pct: 10, lanes: [] }));
    const assign = await waitFor('assign after the heartbeat', async () => link.frames.find((f) => f.type === 'assign'), 5000, 10);
    expect(assign.job_id).toBe(job.id);
    link.ws.close();
  });

  it('takes no job when the hello reports a disk over the limit, and one at once when under it', async () => {
    const full = await rawLink(hub.url, 'w-fulldisk', { disk_pct: 80 });
    const queued = await post(`${hub.url}/jobs`, { kind: 'sleep', spec: { ms: 10 } });
    expect(queued.status).toBe('queued');
    const workers = (await fetch(`${hub.url}/admin/workers`).then(json)).workers;
    expect(workers.find((w: any) => w.worker_id === 'w-fulldisk')?.disk_pct).toBe(80);

    const roomy = await rawLink(hub.url, 'w-roomy', { disk_pct: 20 });
    const next = await post(`${hub.url}/jobs`, { kind: 'sleep', spec: { ms: 10 } });
    // The queued job or the new one goes to w-roomy; none ever goes to w-fulldisk.
    await waitFor('w-roomy busy', async () => roomy.frames.some((f) => f.type === 'assign'), 5000, 10);
    expect([queued.id, next.id]).toContain(roomy.frames.find((f) => f.type === 'assign').job_id);
    expect(full.frames.some((f) => f.type === 'assign')).toBe(false);
    full.ws.close();
    roomy.ws.close();
  });
});

describe('a link that becomes pickable by its first heartbeat (redrive off)', () => {
  let hub: TestHub;
  beforeAll(async () => {
    hub = await startTestHub({ PAPRIKA_QUEUE_REDRIVE_DISABLE: '1', PAPRIKA_ASSIGN_WAIT_S: '5' });
  });
  afterAll(async () => {
    await hub?.stop();
  });

  it('wakes the POST /jobs waiting for a lane: the job runs there instead of staying queued', async () => {
    const link = await rawLink(hub.url, 'w-late-disk', { disk_pct: undefined });
    const pending = post(`${hub.url}/jobs`, { kind: 'sleep', spec: { ms: 10 } });
    await new Promise((r) => setTimeout(r, 300)); // the POST is waiting inline
    expect(link.frames.some((f) => f.type === 'assign')).toBe(false);
    link.ws.send(encode({ type: 'heartbeat', in_flight: 0, cpu_pct: 1, mem_pct: 1, disk_pct: 10, lanes: [] }));
    const job = await pending;
    expect(job).toMatchObject({ status: 'running', worker_id: 'w-late-disk' });
    link.ws.close();
  });

  it('stops waiting when the client hangs up, and not before', async () => {
    const client = new AbortController();
    const pending = fetch(`${hub.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'sleep', spec: { ms: 1 } }), signal: client.signal }).catch((err: unknown) => err);
    await waitFor('POST waiting inline', async () => hub.hub.jobs.pendingInline === 1, 3000, 10);
    await new Promise((r) => setTimeout(r, 500));
    expect(hub.hub.jobs.pendingInline).toBe(1); // still waiting: reading the body did not end it
    client.abort();
    await pending;
    await waitFor('inline wait ended', async () => hub.hub.jobs.pendingInline === 0, 3000, 10); // well before the 5 s ASSIGN_WAIT
  });
});

describe('the old link of a worker whose new link is saying hello', () => {
  let hub: TestHub;
  let store: Awaited<ReturnType<typeof openJobStore>>;
  let stall: { entered: () => void; release: Promise<void> } | undefined;
  beforeAll(async () => {
    // The only stand-in here: the store (real PGlite) is slowed on one call so that the hello
    // stays in progress while the test posts a job; otherwise that window is a few ms.
    store = await openJobStore({});
    const getWorkerStatus = store.getWorkerStatus.bind(store);
    store.getWorkerStatus = async (id) => {
      const s = stall;
      if (s) {
        s.entered();
        await s.release;
      }
      return getWorkerStatus(id);
    };
    hub = await startTestHub({ PAPRIKA_REDRIVE_MIN_AGE_S: '0', PAPRIKA_QUEUE_REDRIVE_INTERVAL_S: '0.1', PAPRIKA_ASSIGN_WAIT_S: '0.3' }, { store });
  });
  afterAll(async () => {
    await hub?.stop();
    await store?.close();
  });

  it('takes no job; the job waits and goes over the new link once it is welcomed', async () => {
    const old = await rawLink(hub.url, 'w-swap');
    let release!: () => void;
    let entered!: () => void;
    const inHello = new Promise<void>((r) => (entered = r));
    stall = { entered, release: new Promise<void>((r) => (release = r)) };

    const secret = await enrollRaw(hub.url, 'w-swap');
    const { ws, frames, nonce } = await openRawLink(hub.url, 'w-swap');
    ws.send(provenHello('w-swap', secret, nonce, { fresh: false }));
    await inHello;

    const job = await post(`${hub.url}/jobs`, { kind: 'sleep', spec: { ms: 10 } });
    expect(job.status).toBe('queued');
    expect(old.frames.some((f) => f.type === 'assign')).toBe(false);

    stall = undefined;
    release();
    const assign = await waitFor('assign over the new link', async () => frames.find((f) => f.type === 'assign'), 5000, 10);
    expect(assign.job_id).toBe(job.id);
    expect(old.frames.some((f) => f.type === 'assign')).toBe(false);
    expect((await fetch(`${hub.url}/jobs/${job.id}`).then(json)).status).toBe('running');
    ws.close();
  });

  it('a hello whose link closed meanwhile does not replace the newer link that linked first', async () => {
    let release!: () => void;
    let entered!: () => void;
    const inHello = new Promise<void>((r) => (entered = r));
    stall = { entered, release: new Promise<void>((r) => (release = r)) };
    const secret = await enrollRaw(hub.url, 'w-late-hello');
    const { ws: first, nonce } = await openRawLink(hub.url, 'w-late-hello');
    first.send(provenHello('w-late-hello', secret, nonce));
    await inHello;
    first.terminate();
    stall = undefined;

    const second = await rawLink(hub.url, 'w-late-hello', { fresh: false });
    release(); // the first hello goes on, for a link that is gone
    await new Promise((r) => setTimeout(r, 300));
    expect(second.ws.readyState).toBe(WebSocket.OPEN);
    expect(second.frames.some((f) => f.type === 'welcome')).toBe(true);
    const job = await post(`${hub.url}/jobs`, { kind: 'sleep', spec: { ms: 10 } });
    expect(job).toMatchObject({ status: 'running', worker_id: 'w-late-hello' });
    expect(second.frames.some((f) => f.type === 'assign' && f.job_id === job.id)).toBe(true);
    second.ws.close();
  });
});

describe("the hub's heartbeat period", () => {
  let hub: TestHub;
  beforeAll(async () => {
    hub = await startTestHub({ PAPRIKA_HEARTBEAT_S: '0.1', PAPRIKA_WORKER_TTL_S: '0.6' });
  });
  afterAll(async () => {
    await hub?.stop();
  });

  it('wins over the worker\'s own: a worker configured for 60 s beats every 0.1 s and stays alive past the TTL', async () => {
    const agent = await startSimAgent(hub.url, 1, { heartbeatS: 60 });
    try {
      const seen = new Set<number>();
      const until = Date.now() + 1500;
      while (Date.now() < until) {
        const link = hub.hub.localLinks.get(agent.workerId);
        if (link) seen.add(link.last_seen_ms);
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(seen.size).toBeGreaterThanOrEqual(5);
      const row = (await fetch(`${hub.url}/admin/workers`).then(json)).workers.find((w: any) => w.worker_id === agent.workerId);
      expect(row.alive).toBe(true);
    } finally {
      await agent.stop();
    }
  });
});
