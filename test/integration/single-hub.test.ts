// The single-hub vertical slice, on both backends: POST /jobs → pickWorker → assign over the
// worker's WebSocket → result in the database. Issue 2's acceptance run, in process.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimAgents, type SimAgent } from '../harness/agents.ts';
import { realBackends, startTestHub, type TestHub } from '../harness/hub.ts';
import { requireServices } from '../harness/services.ts';
import { waitFor } from '../harness/wait.ts';

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
}

function waitTerminal(url: string, id: string, timeoutMs = 10_000): Promise<any> {
  return waitFor(`job ${id} to end`, async () => {
    const job = await (await fetch(`${url}/jobs/${id}`)).json();
    return ['succeeded', 'failed', 'canceled'].includes(job.status) ? job : undefined;
  }, timeoutMs, 10);
}

for (const backend of ['embedded', 'postgres+redis'] as const) {
  const run = backend === 'embedded' || requireServices(['postgres', 'redis']);
  describe.skipIf(!run)(`single hub on ${backend}`, () => {
    let hub: TestHub;
    let agents: SimAgent[];
    let drop = async () => {};

    beforeAll(async () => {
      let env: Record<string, string> = {};
      if (backend !== 'embedded') {
        const b = await realBackends();
        env = b.env;
        drop = b.drop;
      }
      hub = await startTestHub({ ...env, PAPRIKA_HEARTBEAT_S: '0.2', PAPRIKA_WORKER_TTL_S: '2' });
      agents = (await startSimAgents(hub.url, 3, 2, { heartbeatS: 0.2 })).agents;
    });

    afterAll(async () => {
      await Promise.all(agents?.map((a) => a.stop()) ?? []);
      await hub?.stop();
      await drop();
    });

    it('runs 300 sleep jobs sent one at a time, spread over all three workers (20–47 % each)', async () => {
      const counts = new Map<string, number>();
      for (let i = 0; i < 300; i++) {
        const { status, body } = await post(`${hub.url}/jobs`, { kind: 'sleep', spec: { ms: 10 } });
        expect(status).toBe(201);
        expect(body.status).toBe('running');
        const done = await waitTerminal(hub.url, body.id);
        expect(done.status).toBe('succeeded');
        counts.set(done.worker_id, (counts.get(done.worker_id) ?? 0) + 1);
      }
      expect([...counts.keys()].sort()).toEqual(agents.map((a) => a.workerId).sort());
      for (const n of counts.values()) {
        expect(n / 300).toBeGreaterThanOrEqual(0.2);
        expect(n / 300).toBeLessThanOrEqual(0.47);
      }
    });

    it('gives a drained worker no new job, and the drain survives its reconnect', async () => {
      const drained = agents[0].workerId;
      const res = await fetch(`${hub.url}/admin/workers/${drained}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status: 'drain' }) });
      expect(res.status).toBe(200);
      expect((await res.json()).status).toBe('drain');
      const before = hub.hub.localLinks.get(drained);
      agents[0].agent.dropLink();
      await waitFor('the drained worker linked again', async () => {
        const now = hub.hub.localLinks.get(drained);
        return now !== undefined && now !== before;
      }, 10_000, 10);
      for (let i = 0; i < 40; i++) {
        const { body } = await post(`${hub.url}/jobs`, { kind: 'sleep', spec: { ms: 5 } });
        const done = await waitTerminal(hub.url, body.id);
        expect(done.worker_id).not.toBe(drained);
      }
      const view = await (await fetch(`${hub.url}/admin/workers`)).json();
      const row = view.workers.find((w: any) => w.worker_id === drained);
      expect(row.status).toBe('drain');
      expect(row.alive).toBe(true);
      await fetch(`${hub.url}/admin/workers/${drained}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status: 'active' }) });
    });

    it('answers a bad spec with 400 {error, details} and creates nothing', async () => {
      const before = (await (await fetch(`${hub.url}/jobs?limit=1000`)).json()).jobs.length;
      const { status, body } = await post(`${hub.url}/jobs`, { kind: 'sleep', spec: { ms: -1, extra: true } });
      expect(status).toBe(400);
      expect(body.error).toMatch(/Invalid job/);
      expect(body.details.length).toBeGreaterThan(0);
      const after = (await (await fetch(`${hub.url}/jobs?limit=1000`)).json()).jobs.length;
      expect(after).toBe(before);
    });
  });
}
