// The live view on real Chromium: the view page is served, and the stream sends JPEG frames
// while the lane has a page open and "idle" when it has none — only with a valid token for that
// lane and worker, signed with the current link key, from an allowed Origin.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { chromePool, type ChromeLane, type ChromePool } from '../../worker-agent/src/chrome/chrome-lane.ts';
import { newViewKey, signViewToken, withViewToken, type ViewTokenPayload } from '../../hub-core/src/wire/view-token.ts';
import { startLiveView, STREAM_EXPIRED_CLOSE, type LiveView } from '../../worker-agent/src/live-view/live-view-server.ts';
import { ViewKeyring } from '../../worker-agent/src/live-view/view-access.ts';

const CHROMIUM = '/usr/bin/chromium';
const haveChrome = fs.existsSync(CHROMIUM);
if (!haveChrome && process.env.CI !== 'true') console.warn(`\n!!! SKIPPING live-view tests: ${CHROMIUM} is missing (apt-get install chromium) !!!\n`);

type StreamMessage = { kind: 'frame'; bytes: Buffer } | { kind: 'text'; data: { type: string } };

/** Opens the lane's stream and collects what it sends. */
async function openStream(url: string, headers: Record<string, string> = {}): Promise<{ ws: WebSocket; messages: StreamMessage[]; next(kind: StreamMessage['kind'], ms: number): Promise<StreamMessage> }> {
  const ws = new WebSocket(url, { headers });
  const messages: StreamMessage[] = [];
  const waiters: Array<() => void> = [];
  ws.on('message', (data, isBinary) => {
    messages.push(isBinary ? { kind: 'frame', bytes: data as Buffer } : { kind: 'text', data: JSON.parse(data.toString()) as { type: string } });
    for (const w of waiters.splice(0)) w();
  });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  const next = async (kind: StreamMessage['kind'], ms: number) => {
    const until = Date.now() + ms;
    for (;;) {
      const found = messages.find((m) => m.kind === kind);
      if (found) return found;
      if (Date.now() > until) throw new Error(`no ${kind} message within ${ms} ms`);
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 100);
      });
    }
  };
  return { ws, messages, next };
}

// Each lane's view shows its own page, whether the lanes have a Chrome each or share one.
describe.skipIf(!haveChrome && process.env.CI !== 'true').each([
  { mode: 'a Chrome per lane', sharedChrome: false },
  { mode: 'one shared Chrome', sharedChrome: true },
])('live view on real Chromium ($mode)', ({ sharedChrome }) => {
  let pages: http.Server;
  let pageUrl: string;
  let view: LiveView;
  let pool: ChromePool;
  const keys = new ViewKeyring();
  const key = newViewKey();
  let now = 1_000_000;
  /** A token as the hub signs it (lane 0 of w01, 60 s), with any field changed. */
  const token = (over: Partial<ViewTokenPayload> = {}, k = key) => signViewToken({ worker_id: 'w01', lane: 0, exp: now + 60_000, scope: 'view', ...over }, k);
  const pageUrl0 = (lane = 0, t = token({ lane })) => withViewToken(view.url(lane), t);
  const streamUrl = (lane = 0, t = token({ lane })) => withViewToken(view.url(lane).replace(/^http/, 'ws').replace(/\/view$/, '/stream'), t);
  /** The status and JSON body a refused WebSocket upgrade answered with (or 101 if it opened). */
  const upgradeStatus = (url: string, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; body: any }>((resolve) => {
      const ws = new WebSocket(url, { headers });
      ws.once('open', () => {
        ws.close();
        resolve({ status: 101, body: null });
      });
      ws.once('unexpected-response', (_req, res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null }));
      });
      ws.once('error', () => {});
    });

  beforeAll(async () => {
    pages = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<title>watched</title><h1 style="color:red">on screen</h1>'));
    await new Promise<void>((r) => pages.listen(0, '127.0.0.1', r));
    pageUrl = `http://127.0.0.1:${(pages.address() as AddressInfo).port}/`;
    let lanes: readonly ChromeLane[] = [];
    keys.set('w01', key);
    view = await startLiveView({ host: '127.0.0.1', port: 0, lanes: () => lanes, keys, now: () => now });
    pool = chromePool({ lanes: 2, chromePath: CHROMIUM, singleChrome: false, sharedChrome, viewBase: view.baseUrl });
    lanes = pool.lanes;
    await pool.start();
  });

  afterAll(async () => {
    await pool?.stop();
    await view?.stop();
    pages.closeAllConnections();
    await new Promise((r) => pages.close(r));
  });

  it("serves the lane's view page at the lane's view URL, and 404 for an unknown lane", async () => {
    expect(pool.lanes[0].viewUrl).toBe(view.url(0));
    const res = await fetch(pageUrl0());
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    const html = await res.text();
    expect(html).toContain('/stream');
    expect(html).toContain('<img');
    expect((await fetch(view.url(7))).status).toBe(404);
  });

  it('streams JPEG frames while a session page is open, and idle once it closes', async () => {
    const stream = await openStream(streamUrl());
    try {
      expect(((await stream.next('text', 5000)) as { data: { type: string } }).data.type).toBe('idle');
      const lane = pool.lanes[0];
      await lane.openSession('watch-1');
      await lane.sessionCommand({ op: 'goto', url: pageUrl }, AbortSignal.timeout(10_000));
      const frame = (await stream.next('frame', 10_000)) as { bytes: Buffer };
      expect([...frame.bytes.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]); // JPEG SOI marker
      stream.messages.length = 0;
      await lane.closeSession();
      expect(((await stream.next('text', 5000)) as { data: { type: string } }).data.type).toBe('idle');
    } finally {
      stream.ws.close();
    }
  });

  it('refuses a stream for a lane that does not exist', async () => {
    const ws = new WebSocket(`${view.baseUrl.replace(/^http/, 'ws')}/lanes/9/stream?vt=${token({ lane: 9 })}`);
    const failed = await new Promise<boolean>((resolve) => {
      ws.once('open', () => resolve(false));
      ws.once('error', () => resolve(true));
    });
    expect(failed).toBe(true);
  });

  it('refuses the page and the stream without a token: 401 with a JSON body, before switching protocols', async () => {
    const res = await fetch(view.url(0));
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: 'view_token_invalid', details: { reason: 'missing' } });
    expect(await upgradeStatus(view.url(0).replace(/^http/, 'ws').replace(/\/view$/, '/stream'))).toMatchObject({ status: 401, body: { code: 'view_token_invalid' } });
  });

  it.each([
    ['a stale token', () => token({ lane: 1, exp: now - 1 }), 'expired'],
    ["lane 0's token on lane 1", () => token({ lane: 0 }), 'wrong_lane'],
    ["another worker's token", () => token({ lane: 1, worker_id: 'w02' }), 'wrong_worker'],
    ['a tampered signature', () => token({ lane: 1 }).replace(/\.(.)/, (_m, c: string) => `.${c === 'A' ? 'B' : 'A'}`), 'bad_signature'],
    ['a token signed with another key (an earlier link)', () => token({ lane: 1 }, newViewKey()), 'bad_signature'],
  ])('refuses %s with 401 on the page and the stream of lane 1', async (_name, make, reason) => {
    const t = make();
    const res = await fetch(pageUrl0(1, t));
    expect(res.status).toBe(401);
    expect((await res.json()).details.reason).toBe(reason);
    expect(await upgradeStatus(streamUrl(1, t))).toMatchObject({ status: 401, body: { details: { reason } } });
  });

  it('takes the clock into account: a token opens until its expiry and not after', async () => {
    const t = token();
    const before = now;
    try {
      now = before + 59_999;
      expect((await fetch(pageUrl0(0, t))).status).toBe(200);
      now = before + 60_000;
      expect((await fetch(pageUrl0(0, t))).status).toBe(401);
      expect((await upgradeStatus(streamUrl(0, t))).status).toBe(401);
    } finally {
      now = before;
    }
  });

  it('refuses a valid token from a foreign Origin with 403; its own origin, no Origin and the issuing origin pass', async () => {
    const evil = { origin: 'http://job-page.example' };
    const res = await fetch(pageUrl0(), { headers: evil });
    expect(res.status).toBe(403);
    expect((await res.json()).code).toBe('origin_forbidden');
    expect((await upgradeStatus(streamUrl(), evil)).status).toBe(403);
    expect((await upgradeStatus(streamUrl(), { origin: view.baseUrl })).status).toBe(101);
    expect((await upgradeStatus(streamUrl())).status).toBe(101);
    expect((await upgradeStatus(streamUrl(0, token({ origin: 'http://hub.example:8080' })), { origin: 'http://hub.example:8080' })).status).toBe(101);
  });

  it('serves the page with a CSP that allows only its own script, and no Referer for the token', async () => {
    const res = await fetch(pageUrl0());
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).toMatch(/script-src 'nonce-[^']+'/);
    expect(csp).toMatch(/frame-ancestors 'none'/);
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
  });

  it('refuses every token once the link closed (key cleared), and accepts the next link only with its own key', async () => {
    const t = token();
    keys.clear();
    try {
      const res = await fetch(pageUrl0(0, t));
      expect(res.status).toBe(401);
      expect((await res.json()).details.reason).toBe('no_key');
      const next = newViewKey();
      keys.set('w01', next);
      expect((await fetch(pageUrl0(0, t))).status).toBe(401);
      expect((await fetch(pageUrl0(0, token({}, next)))).status).toBe(200);
    } finally {
      keys.set('w01', key);
    }
  });

  it('ends an open stream at its time limit with close code 4001', async () => {
    const short = await startLiveView({ host: '127.0.0.1', port: 0, lanes: () => pool.lanes, keys, now: () => now, streamMaxMs: 300 });
    try {
      const ws = new WebSocket(withViewToken(`${short.baseUrl.replace(/^http/, 'ws')}/lanes/0/stream`, token()));
      const code = await new Promise<number>((resolve) => ws.once('close', (c) => resolve(c)));
      expect(code).toBe(STREAM_EXPIRED_CLOSE);
    } finally {
      await short.stop();
    }
  });
});
