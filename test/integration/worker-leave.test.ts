// Issue 18, item 3, on real Redis with two hubs and the default WORKER_TTL (120 s): a worker
// stopped with SIGTERM says goodbye, and both hubs show it offline at once (not after the
// TTL); DELETE /admin/workers/:id then forgets it fleet-wide (audited), and refuses a live one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnWorker, startSimAgent, type SimAgent, type WorkerProcess } from '../harness/agents.ts';
import { json } from '../harness/http.ts';
import { realBackends, startTestHub, type TestHub } from '../harness/hub.ts';
import { waitFor } from '../harness/processes.ts';
import { requireServices } from '../harness/services.ts';

describe.skipIf(!requireServices(['postgres', 'redis']))('workers that leave', () => {
  let backends: Awaited<ReturnType<typeof realBackends>>;
  let a: TestHub;
  let b: TestHub;
  let live: SimAgent;
  let worker: WorkerProcess | undefined;

  const row = async (hub: TestHub, id: string) => (await fetch(`${hub.url}/admin/workers`).then(json)).workers.find((w: any) => w.worker_id === id);
  const forget = (hub: TestHub, id: string) => fetch(`${hub.url}/admin/workers/${id}`, { method: 'DELETE' });

  beforeAll(async () => {
    backends = await realBackends();
    a = await startTestHub(backends.env);
    b = await startTestHub(backends.env);
    live = await startSimAgent(a.url, 1);
  });
  afterAll(async () => {
    await worker?.kill();
    await live?.stop();
    await a?.stop();
    await b?.stop();
    await backends?.drop();
  });

  it('SIGTERM: the worker says goodbye and every hub shows it offline long before WORKER_TTL; then DELETE forgets it on every hub', async () => {
    worker = spawnWorker(['--hub', a.url, '--simulate-lanes', '1', '--lan-ip', '127.0.42.7']);
    const id = 'w427';
    await waitFor('worker alive on both hubs', async () => (await row(a, id))?.alive && (await row(b, id))?.alive, 30_000);
    await worker.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    expect(worker.output()).toMatch(/stopping/);
    // WORKER_TTL is 120 s: only the goodbye can make this true within the wait.
    await waitFor('offline on both hubs', async () => (await row(a, id))?.alive === false && (await row(b, id))?.alive === false, 10_000);
    // Its lane is not capacity any more (the stats are sampled: wait for the next sample).
    await waitFor('capacity without it', async () => {
      const c = (await fetch(`${a.url}/admin/stats`).then(json)).capacity;
      return c?.accepting === 1 && c.capacity === 1 && c.excluded.not_alive === 1;
    }, 10_000);

    const res = await forget(b, id);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ worker_id: id, forgotten: true });
    expect(await row(a, id)).toBeUndefined();
    expect(await row(b, id)).toBeUndefined();
    const audit = (await fetch(`${a.url}/admin/audit`).then(json)).entries;
    expect(audit.find((e: any) => e.action === 'worker.forget' && e.target === id)).toMatchObject({ details: { hub_id: a.hub.config.hubId, left: true } });
    // Already forgotten: nothing to forget.
    expect((await forget(a, id)).status).toBe(404);
  }, 60_000);

  it('refuses to forget a live worker (409, on its hub and on the other), and answers 400 for a bad id', async () => {
    for (const hub of [a, b]) {
      const res = await forget(hub, live.workerId);
      expect(res.status).toBe(409);
      expect(await res.json()).toMatchObject({ code: 'worker_alive', details: { worker_id: live.workerId } });
    }
    expect((await row(b, live.workerId))?.alive).toBe(true);
    for (const bad of ['..%2Fetc', 'a%20b', 'x'.repeat(101)]) expect((await forget(a, bad)).status).toBe(400);
  });
});
