// Two hubs behind nginx with all four tokens set (issue 9): the callers' tokens open their own
// routes only, and what one hub forwards to another travels with PAPRIKA_PEER_TOKEN, so a
// session answers and a drain applies whichever hub the request reaches.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../hub-core/client/index.ts';
import { startFleet, type Fleet } from '../harness/fleet.ts';
import { NGINX_BIN } from '../harness/nginx.ts';
import { waitFor } from '../harness/processes.ts';
import { metricValue } from '../harness/prometheus.ts';
import { requireServices } from '../harness/services.ts';
import { json } from '../harness/http.ts';

const TOKENS = { PAPRIKA_API_TOKEN: 'api-t', PAPRIKA_ADMIN_TOKEN: 'admin-t', PAPRIKA_WORKER_TOKEN: 'worker-t', PAPRIKA_PEER_TOKEN: 'peer-t' };
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
const canRun = requireServices(['postgres', 'redis']) && (Boolean(NGINX_BIN) || process.env.CI === 'true');

describe.skipIf(!canRun)('two hubs behind nginx with tokens', () => {
  let fleet: Fleet;
  const hubUrl = (i: number) => `http://127.0.0.1:${fleet.hubs[i].port}`;
  const workersOn = (url: string) => fetch(`${url}/admin/workers`, { headers: bearer(TOKENS.PAPRIKA_ADMIN_TOKEN) }).then(json);

  beforeAll(async () => {
    // Tokens make a hub bind to 0.0.0.0 by default; tests stay on loopback.
    fleet = await startFleet({ hubs: 2, agents: 4, lanes: 1, heartbeatS: 0.3, workerToken: TOKENS.PAPRIKA_WORKER_TOKEN, env: { ...TOKENS, PAPRIKA_BIND: '127.0.0.1', PAPRIKA_ASSIGN_WAIT_S: '1' } });
    await waitFor('four workers on both hubs', async () => (await Promise.all([0, 1].map((i) => workersOn(hubUrl(i))))).every((v) => v.workers.filter((w: any) => w.alive).length === 4), 20_000);
  }, 90_000);
  afterAll(async () => {
    await fleet?.stop();
  });

  it('refuses each route group without its own token, through nginx', async () => {
    const url = fleet.nginx.url;
    expect((await fetch(`${url}/admin/workers`)).status).toBe(401);
    expect((await fetch(`${url}/admin/workers`, { headers: bearer(TOKENS.PAPRIKA_API_TOKEN) })).status).toBe(401);
    const noToken = await fetch(`${url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'sleep', spec: { ms: 1 } }) });
    expect(noToken.status).toBe(401);
    expect(await noToken.json()).toMatchObject({ error: expect.any(String) });
    expect((await fetch(`${url}/jobs?limit=5`, { headers: bearer(TOKENS.PAPRIKA_ADMIN_TOKEN) })).status).toBe(401);
  });

  it('answers 20 session pings through nginx with the API token: the non-owner forwards with the peer token', async () => {
    const client = createClient({ url: fleet.nginx.url, token: TOKENS.PAPRIKA_API_TOKEN });
    const s = await client.openSession();
    for (let i = 0; i < 20; i++) expect(await client.command(s.session_id, { op: 'ping' })).toMatchObject({ pong: true, worker_id: s.worker_id });
    expect((await client.close(s.session_id)).closed).toBe(true);
    const nonOwner = fleet.hubs.findIndex((h) => h.id !== s.hub_id);
    const metrics = await fetch(`${hubUrl(nonOwner)}/metrics`).then((r) => r.text());
    expect(metricValue(metrics, 'paprika_forwards_total', 'route="sessions",outcome="200"')).toBeGreaterThan(0);
  });

  it('applies a drain sent to the hub that does not own the worker, and runs jobs with the API token', async () => {
    const rows = (await workersOn(fleet.nginx.url)).workers;
    const target = rows[0];
    const other = fleet.hubs.findIndex((h) => h.id !== target.hub_id);
    const res = await fetch(`${hubUrl(other)}/admin/workers/${target.worker_id}`, { method: 'PATCH', headers: { 'content-type': 'application/json', ...bearer(TOKENS.PAPRIKA_ADMIN_TOKEN) }, body: JSON.stringify({ status: 'drain' }) });
    expect(res.status).toBe(200);
    const owner = fleet.hubs.findIndex((h) => h.id === target.hub_id);
    await waitFor('drain on the owner', async () => (await workersOn(hubUrl(owner))).workers.find((w: any) => w.worker_id === target.worker_id).status === 'drain', 5000);
    const client = createClient({ url: fleet.nginx.url, token: TOKENS.PAPRIKA_API_TOKEN });
    for (let i = 0; i < 6; i++) {
      const job = await client.run({ kind: 'sleep', spec: { ms: 1 } }, { timeout: 10_000 });
      expect(job.status).toBe('succeeded');
      expect(job.worker_id).not.toBe(target.worker_id);
    }
  });
});
