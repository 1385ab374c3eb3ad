// A lane held on one hub shows busy on the others at once, not at the worker's next heartbeat:
// its row is published when the lane is held (in_flight, lanes), and a console fed by another
// hub than the worker's gets a snapshot when a remote row changes. Before, another hub's
// /admin/workers and console showed the busy worker idle for up to a heartbeat (15 s), and its
// placement counted that lane free. Real Postgres and Redis, two hubs, one worker.
import WebSocket from 'ws';
import { describe, expect, it } from 'vitest';
import { startSimAgent } from '../harness/agents.ts';
import { realBackends, startTestHub } from '../harness/hub.ts';
import { json, post } from '../harness/http.ts';
import { requireServices } from '../harness/services.ts';
import { waitFor } from '../harness/wait.ts';

describe.skipIf(!requireServices(['postgres', 'redis']))("a busy lane seen from another hub", () => {
  it("another hub's /admin/workers and its console feed show the lane busy within a second or so, not at the next heartbeat", async () => {
    const backends = await realBackends();
    // Heartbeats every 60 s: any figure seen sooner came from the lane being held.
    const env = { ...backends.env, PAPRIKA_HEARTBEAT_S: '60' };
    const a = await startTestHub(env);
    const b = await startTestHub(env);
    const agent = await startSimAgent(a.url, 2, { heartbeatS: 60 });
    const ws = new WebSocket(`${b.url.replace('http', 'ws')}/admin/events`);
    const feed: Array<{ in_flight?: number; lanes?: Array<{ busy: boolean }> }> = [];
    ws.on('message', (m) => {
      const s = JSON.parse(String(m));
      if (s.type === 'snapshot') feed.push(s.workers.find((w: { worker_id: string }) => w.worker_id === agent.workerId) ?? {});
    });
    try {
      await new Promise((r) => ws.on('open', r));
      await waitFor('the first snapshot', async () => feed.length > 0);
      const job = await post(`${b.url}/jobs`, { kind: 'sleep', spec: { ms: 30_000 } });
      expect(job).toMatchObject({ status: 'running', worker_id: agent.workerId });
      // The console's periodic snapshot comes every 5 s: both checks end within 3 s of the POST.
      const by = Date.now() + 3000;
      await waitFor("B's console feed shows the lane busy", async () => feed.some((w) => w.in_flight === 1 && w.lanes?.some((l) => l.busy)), Math.max(1, by - Date.now()), 50);
      await waitFor('B /admin/workers shows the lane busy', async () => (await fetch(`${b.url}/admin/workers`).then(json)).workers.find((w: { worker_id: string }) => w.worker_id === agent.workerId)?.in_flight === 1, Math.max(1, by - Date.now()), 50);
      await post(`${b.url}/jobs/${job.id}/cancel`, {});
      await waitFor('B shows it free again', async () => (await fetch(`${b.url}/admin/workers`).then(json)).workers.find((w: { worker_id: string }) => w.worker_id === agent.workerId)?.in_flight === 0, 3000, 50);
    } finally {
      ws.close();
      await agent.stop();
      await a.stop();
      await b.stop();
      await backends.drop();
    }
  });
  it("a POST waiting on a hub without a free lane takes a peer's lane as soon as it frees, not after PAPRIKA_ASSIGN_WAIT_S", async () => {
    const backends = await realBackends();
    const env = { ...backends.env, PAPRIKA_HEARTBEAT_S: '60', PAPRIKA_ASSIGN_WAIT_S: '30' };
    const a = await startTestHub(env);
    const b = await startTestHub(env); // no worker of its own
    const agent = await startSimAgent(a.url, 1, { heartbeatS: 60 });
    try {
      const busy = await post(`${a.url}/jobs`, { kind: 'sleep', spec: { ms: 1500 } });
      expect(busy).toMatchObject({ status: 'running', worker_id: agent.workerId });
      // Before, B waited the whole 30 s for a lane of its own, then asked the peers again: the guard aborts at 10 s.
      const res = await fetch(`${b.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'sleep', spec: { ms: 1 } }), signal: AbortSignal.timeout(10_000) });
      expect(res.status).toBe(201);
      const job = await res.json();
      expect(job.worker_id).toBe(agent.workerId);
      expect(['running', 'succeeded']).toContain(job.status);
    } finally {
      await agent.stop();
      await a.stop();
      await b.stop();
      await backends.drop();
    }
  });
});
