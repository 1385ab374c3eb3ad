// Issue 2's acceptance from a shell's point of view: `paprika hub` on real Postgres + Redis
// and three `paprika worker --simulate-lanes 2` processes over real WebSockets.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnWorker, type WorkerProcess } from '../harness/agents.ts';
import { realBackends } from '../harness/hub.ts';
import { freePort, spawnHub, waitFor, type HubProcess } from '../harness/processes.ts';
import { requireServices } from '../harness/services.ts';
import { json, post } from '../harness/http.ts';


async function runOne(url: string): Promise<any> {
  const job = await post(`${url}/jobs`, { kind: 'sleep', spec: { ms: 10 } });
  return waitFor(`job ${job.id}`, async () => {
    const j = await fetch(`${url}/jobs/${job.id}`).then(json);
    return j.status === 'succeeded' || j.status === 'failed' ? j : undefined;
  }, 10_000, 5);
}

describe.skipIf(!requireServices(['postgres', 'redis']))('paprika hub + three paprika worker processes', () => {
  let backends: Awaited<ReturnType<typeof realBackends>>;
  let hub: HubProcess;
  let workers: WorkerProcess[] = [];
  let port: number;
  // /admin/workers still shows the old hub's workers alive (Redis TTL) right after a restart;
  // /healthz counts the links this hub holds.
  const env = () => ({ ...backends.env, PAPRIKA_HEARTBEAT_S: '0.3', PAPRIKA_WORKER_TTL_S: '3', PAPRIKA_ASSIGN_WAIT_S: '0.5' });

  beforeAll(async () => {
    backends = await realBackends();
    port = await freePort();
    hub = await spawnHub(port, env());
    workers = [1, 2, 3].map((i) => spawnWorker(['--hub', hub.url, '--simulate-lanes', '2', '--lan-ip', `127.0.7.${i}`], env()));
    await waitFor('three live workers', async () => (await fetch(`${hub.url}/admin/workers`).then(json)).workers.filter((w: any) => w.alive).length === 3, 20_000);
  });

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.kill()));
    await hub?.kill();
    await backends?.drop();
  });

  it('runs 300 sleep jobs one at a time; every worker gets 20–47 %', async () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 300; i++) {
      const j = await runOne(hub.url);
      expect(j.status).toBe('succeeded');
      counts.set(j.worker_id, (counts.get(j.worker_id) ?? 0) + 1);
    }
    expect([...counts.keys()].sort()).toEqual(['w71', 'w72', 'w73']);
    for (const n of counts.values()) expect(n / 300).toBeGreaterThanOrEqual(0.2), expect(n / 300).toBeLessThanOrEqual(0.47);
  });

  it('gives a drained worker no new job, and the drain holds across a hub restart', async () => {
    const patch = await fetch(`${hub.url}/admin/workers/w71`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status: 'drain' }) });
    expect(patch.status).toBe(200);
    for (let i = 0; i < 30; i++) expect((await runOne(hub.url)).worker_id).not.toBe('w71');

    await hub.kill('SIGTERM');
    hub = await spawnHub(port, env());
    await waitFor('workers re-linked', async () => (await fetch(`${hub.url}/healthz`).then(json)).workers === 3, 20_000);
    const row = (await fetch(`${hub.url}/admin/workers`).then(json)).workers.find((w: any) => w.worker_id === 'w71');
    expect(row.status).toBe('drain');
    for (let i = 0; i < 30; i++) expect((await runOne(hub.url)).worker_id).not.toBe('w71');
  });

  it('with PAPRIKA_DISK_MAX_PCT=1 picks no worker and leaves jobs queued', async () => {
    await hub.kill('SIGTERM');
    hub = await spawnHub(port, { ...env(), PAPRIKA_DISK_MAX_PCT: '1', PAPRIKA_QUEUE_REDRIVE_INTERVAL_S: '0.2', PAPRIKA_REDRIVE_MIN_AGE_S: '0' });
    await waitFor('workers re-linked', async () => (await fetch(`${hub.url}/healthz`).then(json)).workers === 3, 20_000);
    const jobs = await Promise.all(Array.from({ length: 5 }, () => post(`${hub.url}/jobs`, { kind: 'sleep', spec: { ms: 1 } })));
    for (const j of jobs) expect(j.status).toBe('queued');
    // Every worker reports twice more (each report could make it pickable, and the redrive loop
    // runs on its timer meanwhile): the jobs are still queued after that.
    const seen = new Map<string, Set<string>>();
    await waitFor('two more heartbeats from every worker', async () => {
      const rows = (await fetch(`${hub.url}/admin/workers`).then(json)).workers.filter((w: any) => w.alive);
      for (const w of rows) {
        if (!seen.has(w.worker_id)) seen.set(w.worker_id, new Set());
        seen.get(w.worker_id)!.add(w.last_seen);
      }
      return rows.length === 3 && [...seen.values()].every((s) => s.size >= 3);
    }, 20_000, 20);
    for (const j of jobs) expect((await fetch(`${hub.url}/jobs/${j.id}`).then(json)).status).toBe('queued');
  });

  it("starts a worker whose environment holds a hub's malformed variables (it reads only its own)", async () => {
    // Each of these stops a hub at start-up (config.test.ts); a worker on the same host must not care.
    const hubOnly = { DATABASE_URL: 'mysql://not-postgres', REDIS_URL: 'not a url', PAPRIKA_URL_DENY: '10.0.0.0/40', PAPRIKA_BIND: '0.0.0.0', PAPRIKA_PORT: 'abc' };
    const extra = spawnWorker(['--hub', hub.url, '--simulate-lanes', '1', '--lan-ip', '127.0.7.4'], { ...env(), ...hubOnly });
    workers.push(extra);
    await waitFor('the fourth worker alive', async () => (await fetch(`${hub.url}/admin/workers`).then(json)).workers.some((w: any) => w.worker_id === 'w74' && w.alive), 20_000);
    expect(extra.child.exitCode).toBeNull();
  });
});
