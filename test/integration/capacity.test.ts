// Capacity counts only lanes that take work: a drained or standby worker's lanes are not
// capacity in /admin/stats, the chart series or the paprika_fleet_* metrics, and the stats say
// why each excluded worker is out (the console's "nothing accepts work" banner reads it).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimAgent, type SimAgent } from '../harness/agents.ts';
import { json, patchWorkerStatus } from '../harness/http.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { waitFor } from '../harness/processes.ts';

const metric = (text: string, name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);

describe('fleet capacity', () => {
  let hub: TestHub;
  const agents: SimAgent[] = [];

  beforeAll(async () => {
    hub = await startTestHub({ PAPRIKA_HEARTBEAT_S: '0.2', PAPRIKA_WORKER_TTL_S: '2' });
    agents.push(await startSimAgent(hub.url, 4, { heartbeatS: 0.2 }), await startSimAgent(hub.url, 2, { heartbeatS: 0.2 }), await startSimAgent(hub.url, 3, { heartbeatS: 0.2 }));
  });
  afterAll(async () => {
    await Promise.all(agents.map((a) => a.stop()));
    await hub?.stop();
  });

  const stats = () => fetch(`${hub.url}/admin/stats`).then(json);

  it('counts every lane of an all-active fleet', async () => {
    const s = await waitFor('capacity of 9 lanes', async () => ((await stats()).capacity?.capacity === 9 ? stats() : undefined));
    expect(s.capacity).toMatchObject({ accepting: 3, capacity: 9, excluded: {} });
  });

  it('drained and standby workers hold no capacity; the stats and metrics say so', async () => {
    expect((await patchWorkerStatus(hub.url, agents[0].workerId, 'drain')).status).toBe(200);
    expect((await patchWorkerStatus(hub.url, agents[1].workerId, 'standby')).status).toBe(200);
    const s = await waitFor('capacity of 3 lanes', async () => ((await stats()).capacity?.capacity === 3 ? stats() : undefined));
    expect(s.capacity).toMatchObject({ accepting: 1, capacity: 3, excluded: { drain: 1, standby: 1 } });
    expect(s.series.at(-1)).toMatchObject({ capacity: 3 });
    const text = await fetch(`${hub.url}/metrics`).then((r) => r.text());
    expect(metric(text, 'paprika_fleet_capacity_lanes')).toBe(3);
    expect(metric(text, 'paprika_fleet_accepting_workers')).toBe(1);
    expect(metric(text, 'paprika_fleet_workers')).toBe(3); // still alive, just not taking work
  });

  it('with every worker drained, nothing accepts work and the reason is named', async () => {
    expect((await patchWorkerStatus(hub.url, agents[1].workerId, 'drain')).status).toBe(200);
    expect((await patchWorkerStatus(hub.url, agents[2].workerId, 'drain')).status).toBe(200);
    const s = await waitFor('no capacity', async () => ((await stats()).capacity?.accepting === 0 ? stats() : undefined));
    expect(s.capacity).toMatchObject({ accepting: 0, capacity: 0, excluded: { drain: 3 } });
  });
});
