// Issue 16, reproductions 1, 2 and 7, on real Postgres and a Redis of the test's own that it
// flushes: a hub that starts right after Redis restarted empty fails none of a live peer's
// jobs; a lone hub SIGKILLed and restarted loses no result its workers bring back; and owner
// keys come back with the next heartbeat, so a cancel and a status change sent through another
// hub reach the worker.
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSimAgent, type SimAgent } from '../harness/agents.ts';
import { createTestDatabase, requireServices, startPrivateRedis } from '../harness/services.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { json, post } from '../harness/http.ts';
import { spawnHub, stablePort, waitFor, type HubProcess } from '../harness/processes.ts';

const getJob = (url: string, id: string) => fetch(`${url}/jobs/${id}`).then(json);
const ended = (url: string, id: string) =>
  waitFor(`job ${id} ends`, async () => {
    const j = await getJob(url, id);
    return ['succeeded', 'failed', 'canceled'].includes(j.status) ? j : undefined;
  }, 30_000);

describe.skipIf(!requireServices(['postgres', 'redis']))('a Redis that forgets, a hub that restarts alone', () => {
  let redis: Awaited<ReturnType<typeof startPrivateRedis>>;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let admin: Redis;
  const hubs: TestHub[] = [];
  const procs: HubProcess[] = [];
  const agents: SimAgent[] = [];

  beforeEach(async () => {
    redis = await startPrivateRedis();
    db = await createTestDatabase();
    admin = new Redis(redis.url);
  });
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((a) => a.stop()));
    await Promise.all(procs.splice(0).map((p) => p.kill('SIGKILL')));
    await Promise.all(hubs.splice(0).map((h) => h.stop()));
    admin.disconnect();
    await redis.stop();
    await db.drop();
  });

  const env = (extra: Record<string, string> = {}) => ({ DATABASE_URL: db.url, REDIS_URL: redis.url, PAPRIKA_REDIS_PREFIX: 'forgetful:', PAPRIKA_ASSIGN_WAIT_S: '2', ...extra });
  const hub = async (extra: Record<string, string> = {}) => {
    const h = await startTestHub(env(extra));
    hubs.push(h);
    return h;
  };
  const agent = async (url: string, lanes = 2, heartbeatS = 0.2) => {
    const a = await startSimAgent(url, lanes, { heartbeatS });
    agents.push(a);
    return a;
  };

  it('1: a hub starting right after Redis restarted empty fails none of a live peer\'s running jobs', async () => {
    // Hub rows are rewritten every 5 s: the new hub starts while Redis has none. Worker rows
    // come back with the next worker heartbeat (1 s), past ORPHAN_GRACE since assignment.
    const timing = { PAPRIKA_HUB_HEARTBEAT_S: '5', PAPRIKA_HUB_TTL_S: '15', PAPRIKA_HEARTBEAT_S: '1', PAPRIKA_WORKER_TTL_S: '3', PAPRIKA_RECONCILE_INTERVAL_S: '0.2', PAPRIKA_ORPHAN_GRACE_S: '1' };
    const live = await hub(timing);
    await agent(live.url, 2, 1);
    await agent(live.url, 2, 1);
    const jobs = await Promise.all(Array.from({ length: 4 }, () => post(`${live.url}/jobs`, { kind: 'sleep', spec: { ms: 3500 } })));
    expect(jobs.map((j) => j.status)).toEqual(['running', 'running', 'running', 'running']);
    await new Promise((r) => setTimeout(r, 1100)); // the jobs are older than ORPHAN_GRACE
    await redis.restart();
    const fresh = await hub(timing);
    for (const j of jobs) expect(await ended(fresh.url, j.id)).toMatchObject({ status: 'succeeded', attempts: 1 });
  });

  it('2: a lone hub SIGKILLed and restarted adopts what its workers bring back: every in-flight job succeeds', async () => {
    const port = await stablePort();
    const hubEnv = env({ PAPRIKA_HUB_ID: 'lone-hub', PAPRIKA_HEARTBEAT_S: '0.2', PAPRIKA_WORKER_TTL_S: '2', PAPRIKA_HUB_HEARTBEAT_S: '0.2', PAPRIKA_HUB_TTL_S: '1', PAPRIKA_RECONCILE_INTERVAL_S: '0.2', PAPRIKA_ORPHAN_GRACE_S: '20' });
    let proc = await spawnHub(port, hubEnv);
    procs.push(proc);
    const url = proc.url;
    const pair = [await agent(url, 2), await agent(url, 2)];
    // Half the jobs end while the hub is down (their results wait in the workers' outboxes),
    // half after it is back (held, re-declared in hello).
    const jobs = await Promise.all([...[600, 600, 4000, 4000].map((ms) => post(`${url}/jobs`, { kind: 'sleep', spec: { ms } }))]);
    expect(jobs.map((j) => j.status)).toEqual(['running', 'running', 'running', 'running']);
    await proc.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 1000)); // the short jobs finish with no hub to tell
    proc = await spawnHub(port, hubEnv);
    procs.push(proc);
    for (const j of jobs) expect(await ended(url, j.id)).toMatchObject({ status: 'succeeded', attempts: 1, error: null });
    expect(pair.every((a) => a.agent.runner.inFlight === 0)).toBe(true);
  });

  /** Two hubs, a worker on `owner` running a long job; `hurt` damages its owner key, which must come back to `owner`. */
  async function ownerKeyHeals(hurt: (key: string, owner: TestHub, other: TestHub) => Promise<void>) {
    const timing = { PAPRIKA_HEARTBEAT_S: '0.3', PAPRIKA_WORKER_TTL_S: '2', PAPRIKA_HUB_HEARTBEAT_S: '0.3', PAPRIKA_HUB_TTL_S: '2' };
    const owner = await hub(timing);
    const other = await hub(timing);
    const a = await agent(owner.url, 1, 0.3);
    const job = await post(`${owner.url}/jobs`, { kind: 'sleep', spec: { ms: 60_000 } });
    expect(job.status).toBe('running');
    const key = `forgetful:worker:${a.workerId}:owner`;
    await hurt(key, owner, other);
    await waitFor('owner key back on the owner hub', async () => (await admin.get(key).catch(() => null)) === owner.hub.config.hubId);
    await waitFor('the other hub sees the owner hub', async () => (await fetch(`${other.url}/admin/hubs`).then(json)).hubs?.some((h: { hub_id: string; alive: boolean }) => h.hub_id === owner.hub.config.hubId && h.alive));
    // A status change and a cancel sent through the other hub reach the worker.
    const patched = await fetch(`${other.url}/admin/workers/${a.workerId}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status: 'drain' }) }).then(json);
    expect(patched.applied_by).toBe(owner.hub.config.hubId);
    expect(owner.hub.localLinks.get(a.workerId)?.status).toBe('drain');
    const canceled = await post(`${other.url}/jobs/${job.id}/cancel`, {});
    expect(canceled.status).toBe('canceled');
    await waitFor('the worker stopped the job', async () => a.agent.runner.inFlight === 0);
  }

  it('7: after Redis restarts empty, owner keys are back within a heartbeat: a cancel and a status change through another hub reach the worker', async () => {
    await ownerKeyHeals(() => redis.restart());
  });

  it('8: an owner key naming another hub (Redis restored from an older snapshot) is put right by the next heartbeat: a cancel and a drain through the other hub reach the worker', async () => {
    // What a restore leaves: the key names the hub the worker was on when the snapshot was taken.
    await ownerKeyHeals(async (key, _owner, other) => void (await admin.set(key, other.hub.config.hubId, 'PX', 60_000)));
  });
});
