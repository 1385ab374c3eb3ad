// Issue 18, item 5: the scheduler knows what a lane runs. A worker's hello declares its kinds
// (a simulated one: sleep and sessions); a fetch job is never placed on it, neither inline
// nor by redrive, and goes to a worker that runs fetch the moment one links.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimAgent, type SimAgent } from '../harness/agents.ts';
import { json, patchWorkerStatus, post } from '../harness/http.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { waitFor } from '../harness/processes.ts';
import { rawLink } from '../harness/raw-link.ts';

describe('placement by kind', () => {
  let hub: TestHub;
  let sim: SimAgent;

  beforeAll(async () => {
    hub = await startTestHub({ PAPRIKA_ASSIGN_WAIT_S: '0.3', PAPRIKA_REDRIVE_MIN_AGE_S: '0', PAPRIKA_QUEUE_REDRIVE_INTERVAL_S: '0.2', PAPRIKA_HEARTBEAT_S: '0.2' });
    sim = await startSimAgent(hub.url, 2, { heartbeatS: 0.2 });
  });
  afterAll(async () => {
    await sim?.stop();
    await hub?.stop();
  });

  it('lists the kinds each worker declared', async () => {
    const view = await fetch(`${hub.url}/admin/workers`).then(json);
    expect(view.workers.find((w: any) => w.worker_id === sim.workerId).kinds).toEqual(['sleep', 'session']);
  });

  it('never places a fetch job on a simulated worker, inline or by redrive; a worker that runs fetch takes it', async () => {
    expect((await patchWorkerStatus(hub.url, sim.workerId, 'drain')).status).toBe(200);
    const fetchJob = await post(`${hub.url}/jobs`, { kind: 'fetch', spec: { url: 'http://example.com/' } });
    const sleepJob = await post(`${hub.url}/jobs`, { kind: 'sleep', spec: { ms: 1 } });
    expect([fetchJob.status, sleepJob.status]).toEqual(['queued', 'queued']);
    // Active again: redrive runs oldest first and must pass over the fetch job to the sleep job.
    expect((await patchWorkerStatus(hub.url, sim.workerId, 'active')).status).toBe(200);
    const slept = await waitFor('sleep job done on the simulated worker', async () => {
      const j = await fetch(`${hub.url}/jobs/${sleepJob.id}`).then(json);
      return j.status === 'succeeded' ? j : undefined;
    });
    expect(slept.worker_id).toBe(sim.workerId);
    // An inline POST with the simulated worker idle: still not placed there.
    const again = await post(`${hub.url}/jobs`, { kind: 'fetch', spec: { url: 'http://example.com/' } });
    expect(again.status).toBe('queued');
    expect((await fetch(`${hub.url}/jobs/${fetchJob.id}`).then(json)).status).toBe('queued');
    expect(sim.agent.received.map((r) => r.job_id)).not.toContain(fetchJob.id);
    expect(sim.agent.received.map((r) => r.job_id)).not.toContain(again.id);

    const chrome = await rawLink(hub.url, 'w-fetcher', { kinds: ['fetch', 'macro', 'sleep', 'session'], capabilities: { max_concurrent: 2, lane_novnc_urls: ['sim://f/0', 'sim://f/1'], novnc_url: null, version: 't', platform: 'test' } });
    try {
      const assigned = await waitFor('both fetch jobs assigned to the worker that runs fetch', async () => {
        const ids = chrome.frames.filter((f) => f.type === 'assign').map((f) => f.job_id);
        return ids.includes(fetchJob.id) && ids.includes(again.id) ? ids : undefined;
      });
      expect(assigned).toHaveLength(2);
      expect((await fetch(`${hub.url}/jobs/${fetchJob.id}`).then(json))).toMatchObject({ status: 'running', worker_id: 'w-fetcher' });
    } finally {
      chrome.ws.close();
    }
  });

  it('refuses a hello whose kinds are not a list of names', async () => {
    await expect(rawLink(hub.url, 'w-badkinds', { kinds: 'fetch' })).rejects.toThrow(/welcome/);
  });
});
