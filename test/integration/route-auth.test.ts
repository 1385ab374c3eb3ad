// Route groups (the security issue, findings 1, 5 and 7): with every token set, every route in
// the table refuses every spelling of its path (percent-encoded, double-encoded, upper case,
// dot segments, doubled or encoded slashes, `;` parameters) without its own token, with a wrong
// one and with each other group's token — directly and through the generated nginx config —
// and nothing changes. Raw paths go out with http.request: fetch() would normalise them.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTE_TABLE, type RouteGroup } from '../../hub-core/src/http/route-groups.ts';
import { startSimAgent, type SimAgent } from '../harness/agents.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { json } from '../harness/http.ts';
import { NGINX_BIN, startNginx, type Nginx } from '../harness/nginx.ts';

const TOKENS: Record<Exclude<RouteGroup, 'public'>, string> = { api: 'api-s', admin: 'admin-s', worker: 'worker-s', peer: 'peer-s', metrics: 'metrics-s' };
const ENV = {
  PAPRIKA_API_TOKEN: TOKENS.api,
  PAPRIKA_ADMIN_TOKEN: TOKENS.admin,
  PAPRIKA_WORKER_TOKEN: TOKENS.worker,
  PAPRIKA_PEER_TOKEN: TOKENS.peer,
  PAPRIKA_METRICS_TOKEN: TOKENS.metrics,
  PAPRIKA_BIND: '127.0.0.1',
};
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

/** One request with the path exactly as given (no URL parsing, no normalisation). */
function raw(base: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Raw> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const upgrade = headers.upgrade !== undefined;
    const req = http.request({ host: u.hostname, port: u.port, method, path, headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...headers }, agent: upgrade ? false : agent });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, headers: res.headers, body: '' });
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', (err) => reject(new Error(`${method} ${path} ${JSON.stringify(headers)}: ${err.message}`)));
    req.setTimeout(10_000, () => req.destroy(new Error(`timeout ${method} ${path}`)));
    req.end(body);
  });
}

const wsHeaders = { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': Buffer.from('0123456789abcdef').toString('base64') };

/** Spellings of `path` that a router or proxy might take for the same route. */
function variants(path: string): string[] {
  const [, first, rest] = /^\/([^/]+)(.*)$/.exec(path) ?? [];
  if (!first) return [path];
  const hex = first.charCodeAt(0).toString(16);
  const out = [
    path,
    `/%${hex}${first.slice(1)}${rest}`,
    `/%25${hex}${first.slice(1)}${rest}`,
    `/${[...first].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join('')}${rest}`,
    `/${first.toUpperCase()}${rest}`,
    `/./${first}${rest}`,
    `/x/../${first}${rest}`,
    `//${first}${rest}`,
    `${path}/`,
    `/${first};x=1${rest}`,
    `${path};x=1`,
    `${path}?token=${TOKENS.admin}`,
  ];
  if (rest.startsWith('/')) out.push(`/${first}%2F${rest.slice(1)}`, `/${first}%2f${rest.slice(1)}`);
  return out;
}

describe('every route refuses every spelling of its path without its own token', () => {
  let h: TestHub;
  let sim: SimAgent;
  let nginx: Nginx | undefined;
  let jobId: string;
  const concrete = new Map<string, string>();

  /** What a successful bypass would change: jobs, the job's status, the worker's status, the audit log. */
  const snapshot = async () => {
    const jobs = (await fetch(`${h.url}/jobs?limit=1000`, { headers: bearer(TOKENS.api) }).then(json)).jobs;
    const workers = (await fetch(`${h.url}/admin/workers`, { headers: bearer(TOKENS.admin) }).then(json)).workers;
    const audit = (await fetch(`${h.url}/admin/audit`, { headers: bearer(TOKENS.admin) }).then(json)).entries;
    return { jobs: jobs.map((j: any) => `${j.id}:${j.status}`).sort(), workers: workers.map((w: any) => `${w.worker_id}:${w.status}:${w.in_flight}`), audit: audit.length };
  };

  beforeAll(async () => {
    h = await startTestHub(ENV);
    sim = await startSimAgent(h.url, 1, { token: TOKENS.worker });
    // A running job holds the only lane: a bypassed cancel or session would show.
    const job = await fetch(`${h.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(TOKENS.api) }, body: JSON.stringify({ kind: 'sleep', spec: { ms: 600_000 } }) }).then(json);
    expect(job.status).toBe('running');
    jobId = job.id;
    const fill: Record<string, string> = { '/jobs/:id': jobId, '/internal/jobs/:id': jobId, '/sessions/:id': randomUUID(), '/admin/workers/:id': sim.workerId, '/workers/:id': sim.workerId };
    for (const key of Object.keys(ROUTE_TABLE)) {
      const [, url] = key.split(' ');
      let path = url.replace(/:name/, 'shot.png').replace(/\*$/, 'x');
      for (const [prefix, id] of Object.entries(fill)) if (path.startsWith(prefix)) path = path.replace(':id', id);
      concrete.set(key, path);
    }
    if (NGINX_BIN) nginx = await startNginx([`127.0.0.1:${h.hub.port}`]);
  }, 60_000);
  afterAll(async () => {
    await nginx?.stop();
    await fetch(`${h.url}/jobs/${jobId}/cancel`, { method: 'POST', headers: bearer(TOKENS.api) }).catch(() => {});
    await sim?.stop();
    await h?.stop();
    agent.destroy();
  });

  it('has every registered route in the table, and nothing in the table that is not registered', () => {
    const registered = new Set(h.hub.routes.filter((r) => r.method !== 'HEAD').map((r) => `${r.method} ${r.url}`));
    expect([...registered].sort()).toEqual(Object.keys(ROUTE_TABLE).sort());
    for (const r of h.hub.routes) expect(r.group).toBe(ROUTE_TABLE[`${r.method === 'HEAD' ? 'GET' : r.method} ${r.url}`].group);
  });

  it('opens each guarded route with its own token (the walk below hits real routes)', async () => {
    for (const [key, decl] of Object.entries(ROUTE_TABLE)) {
      if (decl.group === 'public' || decl.ws) continue;
      const [method] = key.split(' ');
      if (method !== 'GET') continue; // state-changing routes are proven by the other suites
      const res = await raw(h.url, method, concrete.get(key)!, bearer(TOKENS[decl.group]));
      expect(res.status, key).not.toBe(401);
    }
  });

  const walk = async (base: string) => {
    // The spellings do reach the hub's router (nginx passes them on): with the right token the
    // encoded path is the admin route, so only the token decides below.
    expect((await raw(base, 'GET', '/%61dmin/workers', bearer(TOKENS.admin))).status).toBe(200);
    const before = await snapshot();
    let requests = 0;
    for (const [key, decl] of Object.entries(ROUTE_TABLE)) {
      if (decl.group === 'public') continue;
      const [method] = key.split(' ');
      const others = Object.entries(TOKENS).filter(([g]) => g !== decl.group);
      const creds: Array<Record<string, string>> = [{}, bearer('wrong'), { authorization: 'Basic YWRtaW4=' }, ...others.map(([, t]) => bearer(t))];
      // The peer token stands in for api/admin only with X-Paprika-Forwarded; other tokens never.
      if (decl.group !== 'peer') creds.push(...others.filter(([g]) => g !== 'peer').map(([, t]) => ({ ...bearer(t), 'x-paprika-forwarded': 'evil-hub' })));
      if (decl.group !== 'api' && decl.group !== 'admin' && decl.group !== 'peer') creds.push({ ...bearer(TOKENS.peer), 'x-paprika-forwarded': 'evil-hub' });
      const body = method === 'POST' && key === 'POST /jobs' ? JSON.stringify({ kind: 'sleep', spec: { ms: 1 } }) : method === 'PATCH' ? JSON.stringify({ status: 'drain' }) : method === 'GET' || method === 'DELETE' ? undefined : '{}';
      for (const path of variants(concrete.get(key)!)) {
        for (const c of creds) {
          const headers = decl.ws ? { ...wsHeaders, ...c } : c;
          const res = await raw(base, method, path, headers, body);
          requests++;
          // 401 (matched, refused), 404/400 (the router refused the spelling): never 2xx/101, never 5xx.
          expect(res.status >= 400 && res.status < 500, `${method} ${path} ${JSON.stringify(c)} → ${res.status} ${res.body.slice(0, 200)}`).toBe(true);
        }
      }
    }
    expect(requests).toBeGreaterThan(500);
    expect(await snapshot()).toEqual(before);
  };

  it('refuses them all directly', () => walk(h.url), 120_000);

  it.skipIf(!NGINX_BIN)('refuses them all through nginx with the generated config', () => walk(nginx!.url), 120_000);

  it('answers an unknown path under a guarded prefix with 401 before anything else', async () => {
    const res = await raw(h.url, 'GET', '/%61dmin/nothing-here');
    expect(res.status).toBe(401);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'unauthorized', details: { scope: 'admin' } });
  });
});

describe('forwarded calls and the other tokens', () => {
  let h: TestHub;
  let sim: SimAgent;
  beforeAll(async () => {
    h = await startTestHub(ENV);
    sim = await startSimAgent(h.url, 1, { token: TOKENS.worker });
  });
  afterAll(async () => {
    await sim?.stop();
    await h?.stop();
  });

  const patch = (status: string, headers: Record<string, string>) =>
    fetch(`${h.url}/admin/workers/${sim.workerId}`, { method: 'PATCH', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ status }) });
  const lastActor = async () => (await fetch(`${h.url}/admin/audit?limit=1`, { headers: bearer(TOKENS.admin) }).then(json)).entries[0]?.actor;

  it('ignores X-Paprika-Forwarded without the peer token: the audit names the admin caller', async () => {
    expect((await patch('standby', { ...bearer(TOKENS.admin), 'x-paprika-forwarded': 'forged-hub' })).status).toBe(200);
    expect(await lastActor()).toMatch(/^admin@/);
    expect(await lastActor()).not.toContain('forged-hub');
  });

  it('takes the peer token in place of the admin token only on a forwarded call', async () => {
    expect((await patch('drain', bearer(TOKENS.peer))).status).toBe(401);
    expect((await patch('active', { ...bearer(TOKENS.peer), 'x-paprika-forwarded': 'hub-b' })).status).toBe(200);
    expect(await lastActor()).toBe('hub:hub-b');
  });

  it('guards /metrics with PAPRIKA_METRICS_TOKEN only', async () => {
    for (const t of [undefined, TOKENS.admin, TOKENS.api, TOKENS.peer]) {
      const res = await fetch(`${h.url}/metrics`, { headers: t ? bearer(t) : {} });
      expect(res.status).toBe(401);
    }
    const ok = await fetch(`${h.url}/metrics`, { headers: bearer(TOKENS.metrics) });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('paprika_jobs_submitted_total');
  });

  it('serves an asset other than PNG or JPEG as a sandboxed download, never sniffed', async () => {
    const job = await fetch(`${h.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(TOKENS.api) }, body: JSON.stringify({ kind: 'sleep', spec: { ms: 1 } }) }).then(json);
    await h.hub.assets.put(job.id, 'page.html', 'text/html; charset=utf-8', Buffer.from('<script>alert(1)</script>'));
    await h.hub.assets.put(job.id, 'shot.png', 'image/png', Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    const html = await fetch(`${h.url}/jobs/${job.id}/assets/page.html`, { headers: bearer(TOKENS.api) });
    expect(html.status).toBe(200);
    expect(html.headers.get('content-type')).toBe('application/octet-stream');
    expect(html.headers.get('content-disposition')).toMatch(/^attachment/);
    expect(html.headers.get('content-security-policy')).toBe('sandbox');
    expect(html.headers.get('x-content-type-options')).toBe('nosniff');
    const png = await fetch(`${h.url}/jobs/${job.id}/assets/shot.png`, { headers: bearer(TOKENS.api) });
    expect(png.headers.get('content-type')).toBe('image/png');
    expect(png.headers.get('content-disposition')).toBeNull();
    expect(png.headers.get('content-security-policy')).toBe('sandbox');
  });

  it('sends nosniff on every answer and a strict policy with the console', async () => {
    for (const [path, headers] of [['/healthz', {}], ['/admin/workers', {}], ['/nowhere', {}], ['/jobs', bearer(TOKENS.api)]] as const) {
      expect((await fetch(`${h.url}${path}`, { headers })).headers.get('x-content-type-options'), path).toBe('nosniff');
    }
    const page = await fetch(`${h.url}/`);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
  });
});
