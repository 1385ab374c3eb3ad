// GET /admin/workers across two hubs on real Postgres and Redis, now that a hub reads only the
// rows changed since its last read and keeps each row's JSON: a worker linked to hub B shows on
// hub A, and so do its heartbeats, a status change made through B, and its death (a row whose
// snapshot did not change must still turn dead when its heartbeats stop).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimAgent, type SimAgent } from '../harness/agents.ts';
import { realBackends, startTestHub, type TestHub } from '../harness/hub.ts';
import { waitFor } from '../harness/processes.ts';
import { requireServices } from '../harness/services.ts';
import type { WorkerJson, WorkersPageJson } from '../../hub-core/src/wire/json.ts';

describe.skipIf(!requireServices(['postgres', 'redis']))('the fleet read across hubs', () => {
  let backends: Awaited<ReturnType<typeof realBackends>>;
  let a: TestHub;
  let b: TestHub;
  const agents: SimAgent[] = [];
  // Heartbeats every 0.3 s, dead 2 s after the last one.
  const timing = { PAPRIKA_HEARTBEAT_S: '0.3', PAPRIKA_WORKER_TTL_S: '2' };

  const page = async (hub: TestHub): Promise<WorkersPageJson> => {
    const res = await fetch(`${hub.url}/admin/workers`);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    return (await res.json()) as WorkersPageJson;
  };
  const row = async (hub: TestHub, id: string): Promise<WorkerJson | undefined> => (await page(hub)).workers.find((w) => w.worker_id === id);

  beforeAll(async () => {
    backends = await realBackends();
    a = await startTestHub({ ...backends.env, ...timing });
    b = await startTestHub({ ...backends.env, ...timing });
  });
  afterAll(async () => {
    await Promise.all(agents.map((x) => x.stop()));
    await a?.stop();
    await b?.stop();
    await backends?.drop();
  });

  it("shows hub B's worker on hub A with B's values, then its heartbeats and a status change made through B", async () => {
    const agent = await startSimAgent(b.url, 2, { heartbeatS: 0.3 });
    agents.push(agent);
    const id = agent.workerId;
    const seen = await waitFor('the worker on hub A', async () => row(a, id), 10_000);
    expect(seen).toMatchObject({ worker_id: id, hub_id: b.hub.config.hubId, alive: true, status: 'active', max_concurrent: 2 });
    expect(seen.lanes).toHaveLength(2);
    // Every field as hub B shows it (B holds the link; A read the row from Redis).
    const onB = await row(b, id);
    expect(Object.keys(seen).sort()).toEqual(Object.keys(onB!).sort());

    await waitFor('a later heartbeat on hub A', async () => Date.parse((await row(a, id))!.last_seen) > Date.parse(seen.last_seen), 10_000);
    const patched = await fetch(`${b.url}/admin/workers/${id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status: 'drain' }) });
    expect(patched.status).toBe(200);
    await waitFor('the drain on hub A', async () => (await row(a, id))?.status === 'drain', 10_000);
  });

  it('shows a worker that stopped heartbeating as dead on both hubs, its row still listed', async () => {
    const agent = await startSimAgent(b.url, 1, { heartbeatS: 0.3 });
    const id = agent.workerId;
    await waitFor('alive on hub A', async () => (await row(a, id))?.alive === true, 10_000);
    // Read A once more so its kept row is the one that dies (no new snapshot comes after the kill).
    await page(a);
    await agent.kill();
    await waitFor('dead on hub A', async () => (await row(a, id))?.alive === false, 15_000);
    expect((await row(b, id))?.alive).toBe(false);
    expect((await page(a)).stale).toBe(false);
  });
});
