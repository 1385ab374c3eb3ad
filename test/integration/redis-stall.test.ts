// Issue 16, reproduction 6 while running: a Redis that accepts TCP but answers nothing
// (redis-server SIGSTOPped, a private one) held GET /admin/hubs, PATCH /admin/workers,
// POST /sessions and /workers/register for the whole pause. Every request path now answers
// within PAPRIKA_REDIS_TIMEOUT_S: a stale view, or 503 with Retry-After; and all is well after.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimAgent, type SimAgent } from '../harness/agents.ts';
import { realBackends, startTestHub, type TestHub } from '../harness/hub.ts';
import { waitFor } from '../harness/processes.ts';
import { requireServices, startPrivateRedis } from '../harness/services.ts';

const run = requireServices(['postgres', 'redis']);

/** A request that must answer: the abort is the "hangs" verdict, far above the bound under test. */
async function answer(url: string, init: RequestInit = {}): Promise<{ status: number; retryAfter: string | null; body: any }> {
  const res = await fetch(url, { ...init, headers: { 'content-type': 'application/json', ...(init.headers ?? {}) }, signal: AbortSignal.timeout(20_000) });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() };
}

describe.skipIf(!run)('a stalled Redis never holds a request', () => {
  let redis: Awaited<ReturnType<typeof startPrivateRedis>>;
  let owner: TestHub;
  let bystander: TestHub;
  let agent: SimAgent;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    const b = await realBackends();
    drop = b.drop;
    const env = { ...b.env, REDIS_URL: redis.url, PAPRIKA_REDIS_TIMEOUT_S: '0.5', PAPRIKA_FLEET_TIMEOUT_MS: '300', PAPRIKA_FLEET_CACHE_S: '60', PAPRIKA_HUB_HEARTBEAT_S: '0.2', PAPRIKA_ASSIGN_WAIT_S: '0.5' };
    owner = await startTestHub(env);
    bystander = await startTestHub(env);
    agent = await startSimAgent(owner.url, 2);
    await waitFor('the bystander sees the worker', async () => (await answer(`${bystander.url}/admin/workers`)).body.workers.length === 1);
    redis.pause();
  });
  afterAll(async () => {
    redis?.resume();
    await agent?.stop();
    await owner?.stop();
    await bystander?.stop();
    await redis?.stop();
    await drop?.();
  });

  it('GET /admin/hubs → 503 registry_unavailable with Retry-After', async () => {
    const r = await answer(`${owner.url}/admin/hubs`);
    expect(r).toMatchObject({ status: 503, retryAfter: '2', body: { code: 'registry_unavailable' } });
  });

  it('the fleet view (GET /admin/workers) answers the last good view, marked stale', async () => {
    const r = await answer(`${bystander.url}/admin/workers`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ stale: true, workers: [{ worker_id: agent.workerId }] });
  });

  it('PATCH /admin/workers: applied at once on the hub holding the link; 503 from a hub that must ask Redis who does', async () => {
    const local = await answer(`${owner.url}/admin/workers/${agent.workerId}`, { method: 'PATCH', body: JSON.stringify({ status: 'active' }) });
    expect(local.status).toBe(200);
    expect(local.body.applied_by).toBe(owner.hub.config.hubId);
    const remote = await answer(`${bystander.url}/admin/workers/${agent.workerId}`, { method: 'PATCH', body: JSON.stringify({ status: 'active' }) });
    expect(remote).toMatchObject({ status: 503, retryAfter: '2', body: { code: 'registry_unavailable' } });
  });

  it('POST /sessions opens on a local lane, and answers 503 where it would have to find a peer', async () => {
    const opened = await answer(`${owner.url}/sessions`, { method: 'POST', body: '{}' });
    expect(opened.status).toBe(201);
    expect(opened.body.worker_id).toBe(agent.workerId);
    const elsewhere = await answer(`${bystander.url}/sessions`, { method: 'POST', body: '{}' });
    expect(elsewhere.status).toBe(503);
    expect(elsewhere.retryAfter).not.toBeNull();
    await answer(`${owner.url}/sessions/${opened.body.session_id}`, { method: 'DELETE' });
  });

  it('POST /workers/register → 503 registry_unavailable with Retry-After', async () => {
    const r = await answer(`${owner.url}/workers/register`, { method: 'POST', body: JSON.stringify({ lan_ip: '127.0.0.1', hostname: 'stalled' }) });
    expect(r).toMatchObject({ status: 503, retryAfter: '2', body: { code: 'registry_unavailable' } });
  });

  it('once Redis answers again, the same requests succeed', async () => {
    redis.resume();
    await waitFor('hubs listed', async () => (await answer(`${owner.url}/admin/hubs`)).status === 200);
    const view = await waitFor('fresh view', async () => {
      const r = await answer(`${bystander.url}/admin/workers`);
      return r.body.stale === false ? r : undefined;
    });
    expect(view.body.workers).toHaveLength(1);
    expect((await answer(`${bystander.url}/admin/workers/${agent.workerId}`, { method: 'PATCH', body: JSON.stringify({ status: 'active' }) })).body.applied_by).toBe(owner.hub.config.hubId);
  });
});
