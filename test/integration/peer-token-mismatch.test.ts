// A hub whose PAPRIKA_PEER_TOKEN differs from its peers'. Before, it failed silently (outside
// probe): the peer's 401 reached clients as "wrong PAPRIKA_API_TOKEN", a drain answered 200
// "applied by nobody" while the worker never heard of it, a CDP client got "no free lane", and
// only the forwards metric showed 401s. Now each says the peer refused this hub's
// PAPRIKA_PEER_TOKEN (502 peer_refused), and the hub logs it at error level, once a minute per peer.
// Real Postgres and Redis, two hubs, one simulated worker linked to the hub with the right token.
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedLog, startSimAgent, type SimAgent } from '../harness/agents.ts';
import { simulatedPool } from '../../worker-agent/src/lanes/simulated-lane.ts';
import { realBackends, startTestHub, type TestHub } from '../harness/hub.ts';
import { json } from '../harness/http.ts';
import { requireServices } from '../harness/services.ts';
import { waitFor } from '../harness/wait.ts';

const TOKENS = { PAPRIKA_API_TOKEN: 'api-t', PAPRIKA_ADMIN_TOKEN: 'admin-t', PAPRIKA_WORKER_TOKEN: 'worker-t', PAPRIKA_BIND: '127.0.0.1' };
const bearer = (t: string) => ({ authorization: `Bearer ${t}`, 'content-type': 'application/json' });

describe.skipIf(!requireServices(['postgres', 'redis']))('a hub whose PAPRIKA_PEER_TOKEN differs from its peer', () => {
  let backends: Awaited<ReturnType<typeof realBackends>>;
  let right: TestHub;
  let wrong: TestHub;
  let agent: SimAgent;
  const captured = capturedLog();
  const refusalLines = () => captured.lines.filter((l) => /refused this hub's PAPRIKA_PEER_TOKEN/.test(l.msg));

  beforeAll(async () => {
    backends = await realBackends();
    right = await startTestHub({ ...backends.env, ...TOKENS, PAPRIKA_PEER_TOKEN: 'peer-right' });
    wrong = await startTestHub({ ...backends.env, ...TOKENS, PAPRIKA_PEER_TOKEN: 'peer-wrong', PAPRIKA_ASSIGN_WAIT_S: '0.3' }, { logger: captured.log });
    // Its lane also advertises CDP, so the mismatched hub has a peer to place a CDP client on
    // (the placement is refused at the peer's door; no CDP frame ever reaches this worker).
    const pool = simulatedPool(1, 'sim://peer-token');
    agent = await startSimAgent(right.url, 1, { token: TOKENS.PAPRIKA_WORKER_TOKEN, heartbeatS: 0.3, pool: { ...pool, kinds: [...pool.kinds, 'cdp'] } });
    await waitFor('the worker alive on the mismatched hub', async () => (await fetch(`${wrong.url}/admin/workers`, { headers: bearer('admin-t') }).then(json)).workers.some((w: { worker_id: string; alive: boolean }) => w.worker_id === agent.workerId && w.alive));
  }, 60_000);
  afterAll(async () => {
    await agent?.stop();
    await wrong?.stop();
    await right?.stop();
    await backends?.drop();
  });

  it('a drain sent to it answers 502 peer_refused saying the status is stored but not applied, not 200 "applied by nobody"', async () => {
    const res = await fetch(`${wrong.url}/admin/workers/${agent.workerId}`, { method: 'PATCH', headers: bearer('admin-t'), body: JSON.stringify({ status: 'drain' }) });
    expect(res.status).toBe(502);
    const body = await res.json();
    expect(body).toMatchObject({ code: 'peer_refused', details: { hub_url: right.url, token: 'PAPRIKA_PEER_TOKEN', stored: true, applied_by: 'nobody', worker_id: agent.workerId } });
    expect(body.error).toMatch(/refused this hub's PAPRIKA_PEER_TOKEN.*The status is stored/);
    expect(body.error).not.toMatch(/PAPRIKA_API_TOKEN|PAPRIKA_ADMIN_TOKEN/);
  });

  it('a session it cannot open here answers 502 peer_refused, not a 401 blaming the client\'s API token', async () => {
    const res = await fetch(`${wrong.url}/sessions`, { method: 'POST', headers: bearer('api-t'), body: '{}' });
    expect(res.status).toBe(502);
    expect(await res.json()).toMatchObject({ code: 'peer_refused', details: { hub_url: right.url, token: 'PAPRIKA_PEER_TOKEN' } });
    // The worker's one lane was never held by a session nobody owns.
    const row = (await fetch(`${right.url}/admin/workers`, { headers: bearer('admin-t') }).then(json)).workers.find((w: { worker_id: string }) => w.worker_id === agent.workerId);
    expect(row.in_flight).toBe(0);
  });

  it('a CDP client it cannot place here is refused with 502 peer_refused, not 503 no free lane', async () => {
    const ws = new WebSocket(`${wrong.url.replace('http', 'ws')}/cdp`, { headers: { authorization: 'Bearer api-t' } });
    const status = await new Promise<number>((resolve, reject) => {
      ws.once('unexpected-response', (_req, res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      ws.once('open', () => reject(new Error('the upgrade was accepted')));
      ws.once('error', () => {});
    });
    ws.terminate();
    expect(status).toBe(502);
  });

  it('logs the refusal at error level naming the peer and the variable, once a minute per peer however many requests met it', async () => {
    const lines = refusalLines();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 50, hub_url: right.url });
    expect(lines[0].msg).toContain(`peer hub ${right.url} refused this hub's PAPRIKA_PEER_TOKEN: every hub needs the same PAPRIKA_PEER_TOKEN`);
  });

  it('the hub with the right token still serves its own worker: a job posted there succeeds', async () => {
    const res = await fetch(`${right.url}/jobs?wait_s=5`, { method: 'POST', headers: bearer('api-t'), body: JSON.stringify({ kind: 'sleep', spec: { ms: 1 } }) });
    expect(res.status).toBe(201);
    const job = await res.json();
    const done = await waitFor('the job done', async () => {
      const j = await fetch(`${right.url}/jobs/${job.id}`, { headers: bearer('api-t') }).then(json);
      return j.status === 'succeeded' ? j : undefined;
    });
    expect(done.worker_id).toBe(agent.workerId);
  });
});
