// The seed's layers 4–6 on real Postgres + Redis, with time scaled down through the env:
// redrive, the stale-job reconciler, the fleet cache under a paused Redis, start-up safety.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSimAgent, spawnWorker, type SimAgent, type WorkerProcess } from '../harness/agents.ts';
import { realBackends, startTestHub, type TestHub } from '../harness/hub.ts';
import { ObservedClock } from '../harness/clocks.ts';
import { waitFor } from '../harness/processes.ts';
import { requireServices, startPrivateRedis } from '../harness/services.ts';
import { json, post } from '../harness/http.ts';

const getJob = (url: string, id: string) => fetch(`${url}/jobs/${id}`).then(json);
const terminal = (s: string) => ['succeeded', 'failed', 'canceled'].includes(s);

describe.skipIf(!requireServices(['postgres', 'redis']))('recovery', () => {
  let backends: Awaited<ReturnType<typeof realBackends>>;
  const hubs: TestHub[] = [];
  const agents: SimAgent[] = [];
  const procs: WorkerProcess[] = [];

  beforeEach(async () => {
    backends = await realBackends();
  });
  afterEach(async () => {
    await Promise.all(procs.splice(0).map((p) => p.kill()));
    await Promise.all(agents.splice(0).map((a) => a.stop()));
    await Promise.all(hubs.splice(0).map((h) => h.stop()));
    await backends.drop();
  });

  // An ObservedClock tells when a loop's pass ended: the test waits for passes, not for time.
  const hub = async (env: Record<string, string> = {}, clock?: ObservedClock) => {
    const h = await startTestHub({ ...backends.env, PAPRIKA_HEARTBEAT_S: '0.2', PAPRIKA_WORKER_TTL_S: '1', ...env }, { clock });
    hubs.push(h);
    return h;
  };
  const agent = async (h: TestHub, lanes = 2) => {
    const a = await startSimAgent(h.url, lanes, { heartbeatS: 0.2 });
    agents.push(a);
    return a;
  };

  it('assigns released jobs at once when a worker links, and non-released ones after the age gate, within two redrive periods', async () => {
    const clock = new ObservedClock();
    const h = await hub({ PAPRIKA_ASSIGN_WAIT_S: '0.1', PAPRIKA_QUEUE_REDRIVE_INTERVAL_S: '0.5', PAPRIKA_REDRIVE_MIN_AGE_S: '1' }, clock);
    const released = await post(`${h.url}/jobs`, { kind: 'sleep', spec: { ms: 1 } });
    expect(released.status).toBe('queued');
    // A job whose POST died before it could release it: only the age gate lets redrive take it.
    const orphanId = randomUUID();
    // The gate counts from created_at: measure from it, not from when the insert returned.
    const insertedAt = clock.now();
    await h.hub.store.insertJob({ id: orphanId, kind: 'sleep', spec: { ms: 1 }, hubId: 'gone', idempotencyKey: null, now: new Date(insertedAt) });

    await agent(h);
    // A linked worker takes work once a heartbeat reported its disk (link readiness): the
    // periods count from then, not from the link (on a loaded machine two passes can end first).
    const linkedAt = await waitFor('the worker ready for work', async () => (h.hub.localLinks.freeLanes() > 0 || (await getJob(h.url, released.id)).assigned_at ? clock.now() : undefined), 10_000);
    // "Within two redrive periods": by the end of the second pass that ends after the event
    // (that pass began after it), however long the passes take on this machine.
    const twoPassesAfterLink = await clock.passEndAfter(500, linkedAt, 2, 'two redrive passes after the link');
    const r1 = await getJob(h.url, released.id);
    expect(r1.assigned_at).toBeTruthy();
    expect(Date.parse(r1.assigned_at)).toBeLessThanOrEqual(twoPassesAfterLink);

    const twoPassesAfterGate = await clock.passEndAfter(500, Math.max(linkedAt, insertedAt + 1000), 2, 'two redrive passes after the gate');
    const r2 = await getJob(h.url, orphanId);
    expect(r2.assigned_at).toBeTruthy();
    const assignedAt = Date.parse(r2.assigned_at);
    expect(assignedAt - insertedAt).toBeGreaterThanOrEqual(1000); // not before the gate
    expect(assignedAt).toBeLessThanOrEqual(twoPassesAfterGate);
  });

  it('with PAPRIKA_QUEUE_REDRIVE_DISABLE=1 leaves jobs queued until the queued timeout fails them', async () => {
    const clock = new ObservedClock();
    const h = await hub({ PAPRIKA_ASSIGN_WAIT_S: '0.1', PAPRIKA_QUEUE_REDRIVE_DISABLE: '1', PAPRIKA_QUEUED_TIMEOUT_S: '1.5', PAPRIKA_RECONCILE_INTERVAL_S: '0.25' }, clock);
    const job = await post(`${h.url}/jobs`, { kind: 'sleep', spec: { ms: 1 } });
    const a = await agent(h);
    await waitFor('the worker ready for work', async () => h.hub.localLinks.freeLanes() > 0, 10_000);
    await clock.passes(250, 3, 'three reconcile passes with a free worker linked');
    // A free lane and three passes later the job is still unassigned. On a loaded machine the
    // 1.5 s queued timeout may already have failed it: that is the outcome this test is after,
    // so "queued" is only required while the timeout cannot have run yet.
    const mid = await getJob(h.url, job.id);
    expect(mid.assigned_at).toBeNull();
    expect(a.agent.received).toHaveLength(0);
    if (clock.now() - Date.parse(mid.created_at) < 1500) expect(mid.status).toBe('queued');
    const failed = await waitFor('queued timeout', async () => ((await getJob(h.url, job.id)).status === 'failed' ? getJob(h.url, job.id) : undefined), 5000);
    expect(failed.error).toBe('queued timeout');
    expect(failed.worker_id).toBeNull();
  });

  it('never assigns one job twice when two hubs redrive the same queue at once (60 rounds)', async () => {
    const env = { PAPRIKA_QUEUE_REDRIVE_INTERVAL_S: '0.05', PAPRIKA_REDRIVE_MIN_AGE_S: '0' };
    const [a, b] = [await hub(env), await hub(env)];
    const fleet = [await agent(a, 4), await agent(a, 4), await agent(b, 4), await agent(b, 4)];
    const ids: string[] = [];
    for (let round = 0; round < 60; round++) {
      const batch = Array.from({ length: 8 }, () => randomUUID());
      // Inserted behind the hubs' backs, as a crashed POST would leave them: both loops race for them.
      await Promise.all(batch.map((id) => a.hub.store.insertJob({ id, kind: 'sleep', spec: { ms: 0 }, hubId: 'x', idempotencyKey: null, now: new Date(Date.now() - 1000) })));
      a.hub.ledger.emit('released');
      b.hub.ledger.emit('released');
      ids.push(...batch);
      await waitFor('round done', async () => (await Promise.all(batch.map((id) => a.hub.store.getJob(id)))).every((j) => j && terminal(j.status)), 10_000, 10);
    }
    const received = fleet.flatMap((x) => x.agent.received.map((r) => r.job_id));
    const perJob = new Map<string, number>();
    for (const id of received) perJob.set(id, (perJob.get(id) ?? 0) + 1);
    expect(ids.every((id) => perJob.get(id) === 1)).toBe(true);
    const rows = await Promise.all(ids.map((id) => a.hub.store.getJob(id)));
    expect(rows.every((r) => r?.status === 'succeeded' && r.attempts === 1)).toBe(true);
    const byHub = new Set(rows.map((r) => r?.hub_id));
    expect(byHub.size).toBe(2); // both hubs really took part
  });

  it('fails the job of a worker killed with SIGKILL within ORPHAN_GRACE + one reconcile period', async () => {
    const clock = new ObservedClock();
    const h = await hub({ PAPRIKA_ORPHAN_GRACE_S: '1', PAPRIKA_RECONCILE_INTERVAL_S: '0.3' }, clock);
    const w = spawnWorker(['--hub', h.url, '--simulate-lanes', '1', '--lan-ip', '127.0.9.9'], { PAPRIKA_HEARTBEAT_S: '0.2', PAPRIKA_WORKER_TTL_S: '1' });
    procs.push(w);
    await waitFor('worker linked', async () => h.hub.localLinks.size === 1, 15_000);
    const job = await post(`${h.url}/jobs`, { kind: 'sleep', spec: { ms: 60_000 } });
    expect(job.status).toBe('running');
    const killedAt = clock.now();
    await w.kill('SIGKILL');
    const failed = await waitFor('orphan failed', async () => ((await getJob(h.url, job.id)).status === 'failed' ? getJob(h.url, job.id) : undefined), 10_000, 20).catch(async (err: unknown) => {
      const view = await fetch(`${h.url}/admin/workers`).then(json);
      throw new Error(`${String(err)}\njob: ${JSON.stringify(await getJob(h.url, job.id))}\nfleet: ${JSON.stringify(view)}\nlocal links: ${h.hub.localLinks.size}\nnow: ${new Date().toISOString()}`);
    });
    expect(failed.error).toMatch(/worker w99 lost/);
    // Last heartbeat ≤ kill time, so: failed by the first reconcile pass that began after
    // kill + grace (1 s), or the one after it (slack for the registry's TTL): the third pass
    // end after kill + grace at the latest, counted in passes, not in this machine's seconds.
    const bound = await clock.passEndAfter(300, killedAt + 1000, 3, 'three reconcile passes after the grace');
    expect(Date.parse(failed.finished_at)).toBeLessThanOrEqual(bound);
  });

  it('lets a worker that re-links inside the grace keep its job', async () => {
    const h = await hub({ PAPRIKA_ORPHAN_GRACE_S: '1.5', PAPRIKA_RECONCILE_INTERVAL_S: '0.2' });
    const a = await agent(h, 1);
    const job = await post(`${h.url}/jobs`, { kind: 'sleep', spec: { ms: 2500 } });
    expect(job.status).toBe('running');
    a.agent.dropLink();
    await waitFor('re-linked', async () => h.hub.localLinks.get(a.workerId)?.in_flight === 1, 5000, 10);
    const done = await waitFor('job done', async () => (terminal((await getJob(h.url, job.id)).status) ? getJob(h.url, job.id) : undefined), 8000, 20);
    expect(done.status).toBe('succeeded');
    expect(done.attempts).toBe(1);
  });

  it('fails no healthy job while Redis is paused, and /admin/workers answers stale instead of empty', async () => {
    const redis = await startPrivateRedis(); // CLIENT PAUSE must not stall the other tests' Redis
    // Reconcile every 0.25 s: a period no other loop of these hubs has (stats run every 0.2 s).
    const env = { REDIS_URL: redis.url, PAPRIKA_FLEET_TIMEOUT_MS: '150', PAPRIKA_FLEET_CACHE_S: '30', PAPRIKA_RECONCILE_INTERVAL_S: '0.25', PAPRIKA_ORPHAN_GRACE_S: '0.5', PAPRIKA_WORKER_TTL_S: '5' };
    const ownerClock = new ObservedClock();
    const owner = await hub(env, ownerClock);
    const bystander = await hub(env); // owns none of the workers
    await agent(owner, 2);
    await agent(owner, 2);
    const jobs = await Promise.all(Array.from({ length: 4 }, () => post(`${owner.url}/jobs`, { kind: 'sleep', spec: { ms: 3000 } })));
    expect(jobs.every((j) => j.status === 'running')).toBe(true);
    await waitFor('bystander sees the fleet', async () => (await fetch(`${bystander.url}/admin/workers`).then(json)).workers.length === 2, 5000);

    const admin = new Redis(redis.url);
    await admin.call('CLIENT', 'PAUSE', '1500', 'ALL');
    await ownerClock.passes(250, 2, "two of the owner's reconcile passes on a paused Redis");
    const during = await fetch(`${bystander.url}/admin/workers`).then(json);
    expect(during.stale).toBe(true);
    expect(during.workers).toHaveLength(2);
    await admin.ping(); // answered when the pause ends
    await admin.quit();

    for (const j of jobs) {
      const done = await waitFor('job done', async () => (terminal((await getJob(owner.url, j.id)).status) ? getJob(owner.url, j.id) : undefined), 8000, 50);
      expect(done.status).toBe('succeeded');
    }
    await Promise.all(agents.splice(0).map((a) => a.stop()));
    await Promise.all(hubs.splice(0).map((h) => h.stop()));
    await redis.stop();
  });

  it('fails no running job at start-up, alone or not; the reconciler fails what no worker claims within ORPHAN_GRACE', async () => {
    const env = { PAPRIKA_ORPHAN_GRACE_S: '600', PAPRIKA_HUB_HEARTBEAT_S: '0.2', PAPRIKA_HUB_TTL_S: '5' };
    const first = await hub(env);
    await agent(first, 1);
    const job = await post(`${first.url}/jobs`, { kind: 'sleep', spec: { ms: 4000 } });
    expect(job.status).toBe('running');
    const second = await hub(env);
    expect((await getJob(second.url, job.id)).status).toBe('running');

    // Alone: a job left running by a hub whose worker never comes back stays running at
    // start-up, and fails once this hub has watched its worker absent for ORPHAN_GRACE.
    const leftover = randomUUID();
    await first.hub.store.insertJob({ id: leftover, kind: 'sleep', spec: { ms: 1 }, hubId: 'old', idempotencyKey: null, now: new Date() });
    await first.hub.store.claimQueuedJob(leftover, { workerId: 'w-gone', hubId: 'old', lane: 0, assignmentId: randomUUID(), novncUrl: null, now: new Date(), deadlineAt: new Date(Date.now() + 600_000) });
    await Promise.all(hubs.splice(0).map((h) => h.stop()));
    const third = await hub({ ...env, PAPRIKA_ORPHAN_GRACE_S: '1', PAPRIKA_RECONCILE_INTERVAL_S: '0.2' });
    expect((await getJob(third.url, leftover)).status).toBe('running');
    const row = await waitFor('leftover failed', async () => {
      const r = await getJob(third.url, leftover);
      return r.status === 'failed' ? r : undefined;
    }, 10_000);
    expect(row.error).toMatch(/worker w-gone lost/);
  });
});
