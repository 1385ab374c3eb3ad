// Issue 18, item 2, on real Postgres and Redis with the default ASSIGN_WAIT (8 s): workers
// linked to hub A only; a POST /jobs or /sessions at hub B goes to A's lane at once. Hub B
// runs on a ManualClock that nobody advances, so a B that waited its ASSIGN_WAIT (what it
// did before: 8 s on every such request) would never answer: B's answer is the proof. When
// every lane of the fleet is busy, B waits (its inline wait shows) and the job stays queued.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../hub-core/src/ports/clock.ts';
import { startSimAgent, type SimAgent } from '../harness/agents.ts';
import { json, post } from '../harness/http.ts';
import { realBackends, startTestHub, type TestHub } from '../harness/hub.ts';
import { waitFor } from '../harness/processes.ts';
import { requireServices } from '../harness/services.ts';

describe.skipIf(!requireServices(['postgres', 'redis']))('placement across hubs at submit', () => {
  let backends: Awaited<ReturnType<typeof realBackends>>;
  let a: TestHub;
  let b: TestHub;
  const clockB = new ManualClock(Date.now());
  const agents: SimAgent[] = [];
  const env = { PAPRIKA_ASSIGN_WAIT_S: '8', PAPRIKA_HEARTBEAT_S: '0.3', PAPRIKA_HUB_HEARTBEAT_S: '0.3' };

  beforeAll(async () => {
    backends = await realBackends();
    a = await startTestHub({ ...backends.env, ...env });
    b = await startTestHub({ ...backends.env, ...env }, { clock: clockB });
    agents.push(await startSimAgent(a.url, 2, { heartbeatS: 0.3 }), await startSimAgent(a.url, 1, { heartbeatS: 0.3 }));
    await waitFor('B sees A and its three free lanes', async () => {
      const view = await fetch(`${b.url}/admin/workers`).then(json);
      const hubs = (await fetch(`${b.url}/admin/hubs`).then(json)).hubs;
      return view.workers.filter((w: any) => w.alive && w.in_flight === 0).length === 2 && hubs.some((h: any) => h.hub_id === a.hub.config.hubId && h.alive);
    }, 20_000);
  });
  afterAll(async () => {
    await Promise.all(agents.map((x) => x.stop()));
    await a?.stop();
    await b?.stop();
    await backends?.drop();
  });

  it('a job posted at B (no workers) answers running on a lane of A, without B waiting', async () => {
    const job = await post(`${b.url}/jobs`, { kind: 'sleep', spec: { ms: 1 } });
    expect(job).toMatchObject({ status: 'running', hub_id: a.hub.config.hubId });
    expect(agents.map((x) => x.workerId)).toContain(job.worker_id);
    expect(b.hub.lanes.waiting).toBe(0);
    await waitFor('it ran on A', async () => (await fetch(`${a.url}/jobs/${job.id}`).then(json)).status === 'succeeded');
    expect(agents.flatMap((x) => x.agent.received.map((r) => r.job_id))).toContain(job.id);
  });

  it('a session opened at B (no workers) opens on a lane of A, and answers through B', async () => {
    const res = await fetch(`${b.url}/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(201);
    const s = await res.json();
    expect(s.hub_id).toBe(a.hub.config.hubId);
    expect(agents.map((x) => x.workerId)).toContain(s.worker_id);
    const pong = await post(`${b.url}/sessions/${s.session_id}/commands`, { op: 'ping' });
    expect(pong).toMatchObject({ pong: true, worker_id: s.worker_id });
    expect((await fetch(`${b.url}/sessions/${s.session_id}`, { method: 'DELETE' }).then(json)).closed).toBe(true);
  });

  it('with every lane of the fleet busy, B waits ASSIGN_WAIT (on its clock) and leaves the job queued', async () => {
    const busy = await Promise.all([0, 1, 2].map(() => post(`${a.url}/jobs`, { kind: 'sleep', spec: { ms: 60_000 } })));
    expect(busy.map((j) => j.status)).toEqual(['running', 'running', 'running']);
    await waitFor('B sees every lane busy', async () => (await fetch(`${b.url}/admin/workers`).then(json)).workers.every((w: any) => w.in_flight === w.max_concurrent));
    const answer = post(`${b.url}/jobs`, { kind: 'sleep', spec: { ms: 1 } });
    await waitFor('B waiting for a lane', async () => b.hub.lanes.waiting === 1);
    clockB.advance(8_000);
    expect(await answer).toMatchObject({ status: 'queued', worker_id: null });
    for (const j of busy) await post(`${a.url}/jobs/${j.id}/cancel`, {});
  });
});
