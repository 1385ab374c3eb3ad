// Hostile input (issue 9): 10,000+ random and mutated HTTP bodies and WebSocket frames,
// seeded so a failure replays. The hub must keep answering, leak no connections, and change
// no job it should not have.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encode } from '../../hub-core/src/wire/protocol.ts';
import { seededRandom } from '../../hub-core/src/wire/random.ts';
import { startSimAgent, type SimAgent } from '../harness/agents.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { waitFor } from '../harness/processes.ts';
import { enrollRaw, openRawLink, provenHello } from '../harness/raw-link.ts';

const rng = seededRandom(20261202);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng.next() * xs.length)];
const int = (n: number) => Math.floor(rng.next() * n);

const VALID_BODIES: unknown[] = [
  { kind: 'sleep', spec: { ms: 1 } },
  { kind: 'fetch', spec: { url: 'http://127.0.0.1:9/x', screenshot: true } },
  { kind: 'macro', spec: { steps: [{ op: 'goto', url: 'http://127.0.0.1:9/' }, { op: 'extract', selector: 'h1', name: 't' }] } },
  { kind: 'rerun', spec: { job_id: '00000000-0000-4000-8000-000000000000' } },
  { status: 'drain' },
  { op: 'ping' },
  { lan_ip: '10.0.0.1', hostname: 'h' },
];
const WEIRD: unknown[] = [null, true, -1, 1e308, -0, '', 'x'.repeat(5000), '\u0000', '\ud800', [], {}, [[[[]]]], JSON.parse('{"__proto__":{"polluted":1}}') as unknown, { constructor: { prototype: { x: 1 } } }, NaN];

function mutate(v: unknown, depth = 0): unknown {
  if (depth > 4) return pick(WEIRD);
  if (Array.isArray(v)) return rng.next() < 0.3 ? pick(WEIRD) : v.map((x) => mutate(x, depth + 1));
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const r = rng.next();
      if (r < 0.1) continue; // drop a field
      out[r < 0.2 ? `${k}_${int(9)}` : k] = r < 0.5 ? mutate(x, depth + 1) : x;
    }
    if (rng.next() < 0.2) out[pick(['kind', 'spec', 'status', 'op', 'v', 'type', '__proto__', 'job_id'])] = pick(WEIRD);
    return out;
  }
  return rng.next() < 0.5 ? pick(WEIRD) : v;
}

function randomBytes(n: number): Buffer {
  return Buffer.from(Array.from({ length: n }, () => int(256)));
}

function body(): string | Buffer {
  const r = rng.next();
  if (r < 0.15) return randomBytes(int(200));
  if (r < 0.3) return JSON.stringify(pick(VALID_BODIES)).slice(0, int(60)); // truncated JSON
  return JSON.stringify(mutate(pick(VALID_BODIES))) ?? 'null';
}

describe('hostile input', () => {
  let h: TestHub;
  let agent: SimAgent;
  let finished: any[];

  beforeAll(async () => {
    h = await startTestHub({ PAPRIKA_ASSIGN_WAIT_S: '0' });
    agent = await startSimAgent(h.url, 2);
    finished = [];
    for (let i = 0; i < 5; i++) {
      const job = await (await fetch(`${h.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'sleep', spec: { ms: 1 } }) })).json();
      finished.push(await waitFor('done', async () => ((await (await fetch(`${h.url}/jobs/${job.id}`)).json()).status === 'succeeded' ? (await fetch(`${h.url}/jobs/${job.id}`)).json() : undefined)));
    }
  });
  afterAll(async () => {
    await agent?.stop();
    await h?.stop();
  });

  it('survives 6,000 random and mutated HTTP requests with 4xx answers, changing no finished job', async () => {
    const paths = ['/jobs', '/jobs/' + finished[0].id + '/cancel', '/sessions', '/sessions/00000000-0000-4000-8000-000000000000/commands', '/workers/register', `/admin/workers/${agent.workerId}`, '/jobs/not-a-uuid', '/admin/workers/../../etc', '/%zz', '/jobs?limit=-1&status=nope'];
    const statuses = new Map<number, number>();
    for (let i = 0; i < 6000; i += 20) {
      await Promise.all(
        Array.from({ length: 20 }, async () => {
          const path = pick(paths);
          const method = path.startsWith('/admin/workers/') ? pick(['PATCH', 'GET', 'DELETE']) : pick(['POST', 'POST', 'GET', 'PUT']);
          const ct = pick(['application/json', 'application/json', 'text/plain', 'application/x-www-form-urlencoded', '']);
          const payload = method === 'GET' ? undefined : body();
          const res = await fetch(`${h.url}${path}`, { method, headers: ct ? { 'content-type': ct } : {}, body: method === 'GET' ? undefined : (body() as BodyInit) });
          await res.arrayBuffer();
          const status = res.status;
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        }),
      );
    }
    const fiveHundreds = [...statuses].filter(([s]) => s >= 500 && s !== 503);
    expect(fiveHundreds).toEqual([]);
    expect([...statuses.keys()].every((s) => s >= 200 && s < 500)).toBe(true);
    expect((await fetch(`${h.url}/healthz`)).status).toBe(200);
    for (const j of finished) {
      const now = await (await fetch(`${h.url}/jobs/${j.id}`)).json();
      expect(now).toEqual(j);
    }
  });

  it('keeps a keep-alive socket usable after every kind of 4xx, including ones answered before the body was read', async () => {
    const u = new URL(h.url);
    const agentKA = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const send = (method: string, path: string, body: string, ct: string) =>
      new Promise<{ status: number; socket: unknown }>((resolve, reject) => {
        const headers: Record<string, string> = { 'content-length': String(Buffer.byteLength(body)), ...(ct ? { 'content-type': ct } : {}) };
        const r = http.request({ host: u.hostname, port: u.port, path, method, agent: agentKA, headers }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode!, socket: r.socket }));
        });
        r.on('error', reject);
        r.end(body);
      });
    const valid = JSON.stringify({ kind: 'sleep', spec: { ms: 1 } });
    let firstSocket: unknown;
    let reused = 0;
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      for (const path of ['/jobs', `/admin/workers/${agent.workerId}`, '/%zz', '/jobs/not-a-uuid', '/workers/register']) {
        for (const ct of ['application/json', 'text/plain', '']) {
          for (const body of ['x'.repeat(2_000_000), '{"a":1}', 'not json']) {
            const bad = await send(method, path, body, ct);
            expect(bad.status).toBeGreaterThanOrEqual(400);
            expect(bad.status).toBeLessThan(500);
            const next = await send('POST', '/jobs', valid, 'application/json');
            expect(next.status).toBe(201);
            firstSocket ??= next.socket;
            if (next.socket === firstSocket) reused++;
          }
        }
      }
    }
    agentKA.destroy();
    // Most answers keep the socket; the ones that must close it (a 413 mid-body) are allowed to.
    expect(reused).toBeGreaterThan(0);
  });

  it('survives 4,000 random and mutated worker-link frames: answers a burst of them, then closes the link (1008), and the worker links again', async () => {
    // The runs' assignment ids are not in the public JSON: the frames take them from the rows.
    const assignmentOf = async (id: string) => (await h.hub.store.getJob(id))?.session_id;
    const secret = await enrollRaw(h.url, 'w-fuzz');
    const hello = (nonce: string) => provenHello('w-fuzz', secret, nonce, { capabilities: { max_concurrent: 1, lane_novnc_urls: ['sim://f/0'], novnc_url: null, version: 't', platform: 't' }, disk_pct: undefined });
    const { ws, nonce } = await openRawLink(h.url, 'w-fuzz');
    let errors = 0;
    let welcomed = false;
    let closed: { code: number; reason: string } | undefined;
    ws.on('message', (m) => {
      const msg = JSON.parse(String(m));
      if (msg.type === 'error') errors++;
      if (msg.type === 'welcome') welcomed = true;
    });
    ws.on('close', (code, reason) => (closed = { code, reason: reason.toString() }));
    ws.send(hello(nonce));
    await waitFor('welcome', async () => welcomed, 5000, 10);
    const templates = [
      { type: 'heartbeat', v: 1, in_flight: 0, cpu_pct: 1, mem_pct: 1, disk_pct: 1, lanes: [] },
      { type: 'job_result', v: 1, job_id: finished[1].id, assignment_id: await assignmentOf(finished[1].id), status: 'failed', error: 'x' },
      { type: 'job_rejected', v: 1, job_id: finished[2].id, assignment_id: await assignmentOf(finished[2].id), reason: 'busy' },
      { type: 'session_reply', v: 1, request_id: 'r', ok: true },
      { type: 'hello', v: 1, worker_id: 'w-other', capabilities: {} },
    ];
    for (let i = 0; i < 4000 && ws.readyState === WebSocket.OPEN; i++) {
      const r = rng.next();
      if (r < 0.2) ws.send(randomBytes(int(300)));
      else if (r < 0.35) ws.send(JSON.stringify(pick(templates)).slice(0, int(80)));
      else ws.send(JSON.stringify(mutate(pick(templates))) ?? 'null');
      if (i % 200 === 0) await new Promise((res) => setImmediate(res));
    }
    const why = await waitFor('the hub closed the flooding link', async () => closed, 15_000, 20);
    expect(why).toEqual({ code: 1008, reason: 'too many malformed frames' });
    // A burst was answered (a worker of another version is told what it got wrong), not thousands.
    expect(errors).toBeGreaterThan(0);
    expect(errors).toBeLessThanOrEqual(40);
    for (const j of finished) expect(await (await fetch(`${h.url}/jobs/${j.id}`)).json()).toEqual(j);
    expect((await fetch(`${h.url}/healthz`)).status).toBe(200);
    // The worker itself is not shut out: a new link with a good hello is welcomed.
    const again = await openRawLink(h.url, 'w-fuzz');
    const welcomedAgain = new Promise<boolean>((resolve) => again.ws.on('message', (m) => JSON.parse(String(m)).type === 'welcome' && resolve(true)));
    again.ws.send(hello(again.nonce));
    expect(await welcomedAgain).toBe(true);
    again.ws.close();
  });

  it('closes a link whose first frame is not a valid hello, answering nothing else on it', async () => {
    for (const first of ['not json', JSON.stringify({ type: 'heartbeat', v: 1, in_flight: 0, lanes: [] }), randomBytes(64)]) {
      const { ws } = await openRawLink(h.url, 'w-prehello');
      const replies: string[] = [];
      ws.on('message', (m) => replies.push(JSON.parse(String(m)).type));
      const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
      ws.send(first);
      for (let i = 0; i < 50; i++) ws.send('junk');
      const why = await closed;
      expect(why.code).toBe(1008);
      expect(why.reason).toMatch(/^expected a valid hello: /);
      expect(replies).toEqual([]);
    }
    expect((await fetch(`${h.url}/healthz`)).status).toBe(200);
  });

  it('stops reading a link whose queue is full (a worker that floods results and reads nothing), and reads again once it drains', async () => {
    const secret = await enrollRaw(h.url, 'w-flood-deaf');
    const { ws, frames, nonce } = await openRawLink(h.url, 'w-flood-deaf');
    ws.send(provenHello('w-flood-deaf', secret, nonce, { lan_ip: '127.0.0.1' }));
    await waitFor('welcome', async () => frames.some((f) => f.type === 'welcome'), 5000, 10);
    const socket = (ws as unknown as { _socket: net.Socket })._socket;
    socket.pause(); // reads nothing from now on: every answer's write stays pending
    const pad = 'x'.repeat(1_000);
    const n = 30_000; // 30 MB of well-formed results for jobs that are not this worker's, each answered
    for (let i = 0; i < n; i++) ws.send(encode({ type: 'job_result', job_id: randomUUID(), assignment_id: randomUUID(), status: 'failed', error: pad }));
    // Unbounded, the hub read all 40 MB and held every frame; bounded, most stays on this side.
    let last = -1;
    let still = 0;
    await waitFor('the hub stopped reading', async () => {
      still = ws.bufferedAmount === last ? still + 1 : 0;
      last = ws.bufferedAmount;
      return still >= 20;
    }, 30_000, 100);
    expect(ws.bufferedAmount).toBeGreaterThan(20 * 1024 * 1024);
    expect((await fetch(`${h.url}/healthz`)).status).toBe(200);
    socket.resume(); // reading again: the answers' writes finish, the queue drains, the hub reads the rest
    await waitFor('the hub read every frame', async () => ws.bufferedAmount === 0, 120_000, 50);
    ws.close();
  }, 180_000);

  it('limits a frame before the hello to 1 MB (a worker-token holder made the hub buffer 64 MB per socket)', async () => {
    const { ws } = await openRawLink(h.url, 'w-big-first');
    const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
    ws.send('x'.repeat(2 * 1024 * 1024));
    expect(await closed).toBe(1009); // message too big, refused as its header arrives
  });

  it('names an agent older than the hub (it answers the challenge with an error) in the close reason', async () => {
    const { ws } = await openRawLink(h.url, 'w-old-agent');
    const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    // What the agent of 2026-12-02 sent on reading a challenge it did not know.
    ws.send(JSON.stringify({ type: 'error', v: 1, message: "invalid challenge message: Expected 'welcome' | 'assign'" }));
    const why = await closed;
    expect(why.code).toBe(1008);
    expect(why.reason).toMatch(/^expected a valid hello: the worker could not answer this hub's challenge \(an agent older than this hub\?/);
  });

  it('answers what the HTTP parser refuses with {error, code, details} too, then closes', async () => {
    const port = new URL(h.url).port;
    const raw = (request: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(request));
        let text = '';
        socket.setEncoding('utf8');
        socket.on('data', (d: string) => (text += d));
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });
    const cases: Array<[string, number, string]> = [
      ['GET /healthz HTTP/1.1\r\nHost: x\r\nbad header line\r\n\r\n', 400, 'bad_request'],
      ['GET /he\u0001althz HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'bad_request'],
      ['POST /jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', 400, 'bad_request'],
      [`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(100_000)}\r\n\r\n`, 431, 'headers_too_large'],
    ];
    for (const [request, status, code] of cases) {
      const text = await raw(request);
      expect(text.split('\r\n')[0]).toBe(`HTTP/1.1 ${status} ${status === 400 ? 'Bad Request' : 'Request Header Fields Too Large'}`);
      const body = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
      expect(body).toMatchObject({ error: expect.any(String), code, details: { parser_code: expect.any(String) } });
    }
    expect((await fetch(`${h.url}/healthz`)).status).toBe(200);
  });

  it('leaks no connections: another 1,000 hostile requests leave the count where it was', async () => {
    const server = (h.hub as unknown as { http: { app: { server: import('node:http').Server } } }).http.app.server;
    const open = () => new Promise<number>((resolve) => server.getConnections((_e, n) => resolve(n)));
    const before = await open();
    for (let i = 0; i < 1000; i += 20) {
      await Promise.all(
        Array.from({ length: 20 }, async () => {
          const res = await fetch(`${h.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body() as BodyInit });
          await res.arrayBuffer();
        }),
      );
    }
    const after = await open();
    // fetch keeps at most its 20 concurrent sockets alive; a per-request leak would add hundreds.
    expect(after - before).toBeLessThanOrEqual(20);
  });
});
