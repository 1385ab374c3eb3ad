// Tokens (issue 9): every guarded route refuses a missing or wrong bearer with 401 and
// changes nothing; a worker may only report on its own jobs.
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encode } from '../../hub-core/src/wire/protocol.ts';
import { startSimAgent, type SimAgent } from '../harness/agents.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { waitFor } from '../harness/processes.ts';
import { enrollRaw, openRawLink, provenHello } from '../harness/raw-link.ts';

const TOKENS = { PAPRIKA_API_TOKEN: 'api-secret', PAPRIKA_ADMIN_TOKEN: 'admin-secret', PAPRIKA_WORKER_TOKEN: 'worker-secret', PAPRIKA_PEER_TOKEN: 'peer-secret', PAPRIKA_BIND: '127.0.0.1' };
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

function upgradeStatus(url: string, headers: Record<string, string> = {}, protocols: string[] = []): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, protocols, { headers });
    ws.once('open', () => {
      ws.close();
      resolve(101);
    });
    ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.once('error', () => resolve(-1));
  });
}

describe('authentication', () => {
  let h: TestHub;
  let agent: SimAgent;
  beforeAll(async () => {
    h = await startTestHub(TOKENS);
    agent = await startSimAgent(h.url, 2, { token: 'worker-secret' });
  });
  afterAll(async () => {
    await agent?.stop();
    await h?.stop();
  });

  it.each([
    ['GET', '/admin/workers'],
    ['GET', '/admin/hubs'],
    ['GET', '/admin/stats'],
    ['GET', '/jobs'],
    ['POST', '/jobs'],
    ['POST', '/sessions'],
    ['POST', '/workers/register'],
  ])('refuses %s %s without a token and with a wrong one', async (method, path) => {
    for (const headers of [{}, bearer('wrong'), { authorization: 'Basic YWRtaW4=' }]) {
      const res = await fetch(`${h.url}${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, body: method === 'POST' ? '{}' : undefined });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: 'unauthorized', error: expect.stringMatching(/takes the hub's PAPRIKA_[A-Z]+_TOKEN/), details: { scope: expect.any(String), token: expect.stringMatching(/^PAPRIKA_[A-Z]+_TOKEN$/) } });
    }
  });

  it('changes nothing on a refused request', async () => {
    const before = (await (await fetch(`${h.url}/jobs`, { headers: bearer('api-secret') })).json()).jobs.length;
    await fetch(`${h.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer('admin-secret') }, body: JSON.stringify({ kind: 'sleep', spec: { ms: 1 } }) });
    const patch = await fetch(`${h.url}/admin/workers/${agent.workerId}`, { method: 'PATCH', headers: { 'content-type': 'application/json', ...bearer('api-secret') }, body: JSON.stringify({ status: 'drain' }) });
    expect(patch.status).toBe(401);
    expect((await (await fetch(`${h.url}/jobs`, { headers: bearer('api-secret') })).json()).jobs.length).toBe(before);
    const row = (await (await fetch(`${h.url}/admin/workers`, { headers: bearer('admin-secret') })).json()).workers.find((w: any) => w.worker_id === agent.workerId);
    expect(row.status).toBe('active');
  });

  it('accepts the right tokens', async () => {
    const job = await fetch(`${h.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer('api-secret') }, body: JSON.stringify({ kind: 'sleep', spec: { ms: 1 } }) });
    expect(job.status).toBe(201);
    expect((await fetch(`${h.url}/admin/workers`, { headers: bearer('admin-secret') })).status).toBe(200);
    // The scheme's case does not matter (RFC 9110); the token's does.
    expect((await fetch(`${h.url}/admin/workers`, { headers: { authorization: 'bearer admin-secret' } })).status).toBe(200);
    expect((await fetch(`${h.url}/admin/workers`, { headers: { authorization: 'BEARER admin-secret' } })).status).toBe(200);
    expect((await fetch(`${h.url}/admin/workers`, { headers: { authorization: 'bearer ADMIN-SECRET' } })).status).toBe(401);
  });

  it('refuses worker links and the event stream without their tokens', async () => {
    const ws = h.url.replace('http', 'ws');
    expect(await upgradeStatus(`${ws}/workers/w1/link`)).toBe(401);
    expect(await upgradeStatus(`${ws}/workers/w1/link`, bearer('admin-secret'))).toBe(401);
    expect(await upgradeStatus(`${ws}/admin/events`)).toBe(401);
    expect(await upgradeStatus(`${ws}/admin/events?token=wrong`)).toBe(401);
    // The token no longer travels in the URL (proxy logs): ?token= opens nothing.
    expect(await upgradeStatus(`${ws}/admin/events?token=admin-secret`)).toBe(401);
    expect(await upgradeStatus(`${ws}/admin/events`, {}, ['paprika.v1', `bearer.${Buffer.from('admin-secret').toString('base64url')}`])).toBe(101);
    expect(await upgradeStatus(`${ws}/admin/events`, {}, ['paprika.v1', `bearer.${Buffer.from('api-secret').toString('base64url')}`])).toBe(401);
    expect(await upgradeStatus(`${ws}/admin/events`, bearer('admin-secret'))).toBe(101);
  });

  it("refuses a worker's result for another worker's job", async () => {
    const res = await fetch(`${h.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer('api-secret') }, body: JSON.stringify({ kind: 'sleep', spec: { ms: 1500 } }) });
    const job = await res.json();
    expect(job.worker_id).toBe(agent.workerId);
    // The intruder is a worker of its own (enrolled with the worker token, proving its own id)
    // and knows the run's assignment id (read here from the row; the public JSON hides it).
    const secret = await enrollRaw(h.url, 'w-intruder', { token: 'worker-secret' });
    const { ws: intruder, frames: replies, nonce } = await openRawLink(h.url, 'w-intruder', { token: 'worker-secret' });
    intruder.send(provenHello('w-intruder', secret, nonce, { capabilities: { max_concurrent: 1, lane_novnc_urls: ['x'], novnc_url: null, version: 't', platform: 't' }, disk_pct: undefined }));
    await waitFor('welcome', async () => replies.some((r) => r.type === 'welcome'), 5000, 10);
    const assignmentId = (await h.hub.store.getJob(job.id))!.session_id!;
    intruder.send(encode({ type: 'job_result', job_id: job.id, assignment_id: assignmentId, status: 'failed', error: 'hijacked' }));
    await waitFor('refusal', async () => replies.some((r) => r.type === 'error' && /not yours/.test(r.message)), 5000, 10);
    intruder.close();
    const final = await waitFor('job done', async () => {
      const j = await (await fetch(`${h.url}/jobs/${job.id}`, { headers: bearer('api-secret') })).json();
      return j.status !== 'running' ? j : undefined;
    }, 5000, 20);
    expect(final.status).toBe('succeeded');
    expect(final.error).toBeNull();
  });
});
