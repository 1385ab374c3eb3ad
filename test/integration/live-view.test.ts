// The live view on real Chromium: the view page is served, and the stream sends JPEG frames
// while the lane has a page open and "idle" when it has none.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { chromePool, type ChromeLane, type ChromeLanePool } from '../../worker-agent/src/chrome/chrome-lane.ts';
import { startLiveView, type LiveView } from '../../worker-agent/src/live-view/live-view-server.ts';

const CHROMIUM = '/usr/bin/chromium';
const haveChrome = fs.existsSync(CHROMIUM);
if (!haveChrome && process.env.CI !== 'true') console.warn(`\n!!! SKIPPING live-view tests: ${CHROMIUM} is missing (apt-get install chromium) !!!\n`);

type StreamMessage = { kind: 'frame'; bytes: Buffer } | { kind: 'text'; data: { type: string } };

/** Opens the lane's stream and collects what it sends. */
async function openStream(url: string): Promise<{ ws: WebSocket; messages: StreamMessage[]; next(kind: StreamMessage['kind'], ms: number): Promise<StreamMessage> }> {
  const ws = new WebSocket(url);
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

describe.skipIf(!haveChrome && process.env.CI !== 'true')('live view on real Chromium', () => {
  let pages: http.Server;
  let pageUrl: string;
  let view: LiveView;
  let pool: ChromeLanePool;

  beforeAll(async () => {
    pages = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<title>watched</title><h1 style="color:red">on screen</h1>'));
    await new Promise<void>((r) => pages.listen(0, '127.0.0.1', r));
    pageUrl = `http://127.0.0.1:${(pages.address() as AddressInfo).port}/`;
    let lanes: readonly ChromeLane[] = [];
    view = await startLiveView({ host: '127.0.0.1', port: 0, lanes: () => lanes });
    pool = chromePool({ lanes: 1, chromePath: CHROMIUM, singleChrome: false, viewBase: view.baseUrl });
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
    const res = await fetch(view.url(0));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    const html = await res.text();
    expect(html).toContain('/stream');
    expect(html).toContain('<img');
    expect((await fetch(view.url(7))).status).toBe(404);
  });

  it('streams JPEG frames while a session page is open, and idle once it closes', async () => {
    const stream = await openStream(view.url(0).replace(/^http/, 'ws').replace(/\/view$/, '/stream'));
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
    const ws = new WebSocket(`${view.baseUrl.replace(/^http/, 'ws')}/lanes/9/stream`);
    const failed = await new Promise<boolean>((resolve) => {
      ws.once('open', () => resolve(false));
      ws.once('error', () => resolve(true));
    });
    expect(failed).toBe(true);
  });
});
