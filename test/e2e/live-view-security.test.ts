// The live view's guard end to end, with a real hub and real `paprika worker` processes on
// Debian's Chromium: a job in one lane cannot watch another lane; an agent whose --lan-ip is
// not this host's listens on loopback only (no wildcard socket); an admin gets a view URL from
// the hub that really streams, and an API-token caller gets 401.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import puppeteer from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { CHROME_ARGS } from '../../worker-agent/src/chrome/chrome-process.ts';
import { spawnWorker, type WorkerProcess } from '../harness/agents.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { json } from '../harness/http.ts';
import { waitFor } from '../harness/processes.ts';

const CHROMIUM = '/usr/bin/chromium';
const hasChrome = fs.existsSync(CHROMIUM);
if (!hasChrome && process.env.CI !== 'true') console.warn('\n!!! SKIPPING live-view security e2e: /usr/bin/chromium not installed !!!\n');

const ADMIN = { authorization: 'Bearer adm-secret' };
const API = { authorization: 'Bearer api-secret' };
/** An address no host here owns (TEST-NET-1, RFC 5737). */
const FOREIGN_IP = '192.0.2.10';

/** Listening TCP sockets of one process, from /proc (address as the kernel prints it). */
function listenersOf(pid: number): Array<{ family: 4 | 6; address: string; port: number }> {
  const inodes = new Set<string>();
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {
      // the fd closed while we looked
    }
  }
  const out: Array<{ family: 4 | 6; address: string; port: number }> = [];
  for (const [file, family] of [['/proc/net/tcp', 4], ['/proc/net/tcp6', 6]] as const) {
    if (!fs.existsSync(file)) continue;
    for (const line of fs.readFileSync(file, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10 || cols[3] !== '0A' || !inodes.has(cols[9])) continue; // 0A = LISTEN
      const [hex, port] = cols[1].split(':');
      const address = family === 4 ? Buffer.from(hex, 'hex').reverse().join('.') : hex;
      out.push({ family, address, port: parseInt(port, 16) });
    }
  }
  return out;
}

describe.skipIf(!hasChrome && process.env.CI !== 'true')('live view security with real Chrome lanes', () => {
  let site: http.Server;
  let siteUrl: string;
  let h: TestHub;
  const workers: WorkerProcess[] = [];
  let sessionId: string;
  let watchedLane: number;
  let viewPort: number;

  const post = (path: string, body: unknown, headers: Record<string, string> = API) =>
    fetch(`${h.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const askView = (workerId: string, lane: number, headers: Record<string, string>) => fetch(`${h.url}/admin/workers/${workerId}/lanes/${lane}/view`, { method: 'POST', headers });
  const done = (id: string) =>
    waitFor(`job ${id}`, async () => {
      const j = await fetch(`${h.url}/jobs/${id}`, { headers: API }).then(json);
      return ['succeeded', 'failed', 'canceled'].includes(j.status) ? j : undefined;
    }, 60_000, 50);

  beforeAll(async () => {
    site = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<title>watched</title><h1 style="color:red;font-size:80px">secret on screen</h1>'));
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
    h = await startTestHub({ PAPRIKA_BIND: '127.0.0.1', PAPRIKA_ADMIN_TOKEN: 'adm-secret', PAPRIKA_API_TOKEN: 'api-secret', PAPRIKA_HEARTBEAT_S: '0.5', PAPRIKA_ASSIGN_WAIT_S: '20' });
    workers.push(spawnWorker(['--hub', h.url, '--lanes', '2', '--lan-ip', '127.0.0.1', '--chrome', CHROMIUM], { PAPRIKA_HEARTBEAT_S: '0.5' }));
    await waitFor('chrome worker linked', async () => h.hub.localLinks.get('w01')?.ready, 60_000, 100);
    // A session holds one lane on a page: that is the lane a job in the other lane tries to watch.
    const session = await post('/sessions', {}).then(json);
    sessionId = session.session_id;
    watchedLane = Number(/\/lanes\/(\d+)\/view$/.exec(session.novnc_url)![1]);
    viewPort = Number(new URL(session.novnc_url).port);
    expect((await post(`/sessions/${sessionId}/commands`, { op: 'goto', url: siteUrl })).status).toBe(200);
  }, 90_000);

  afterAll(async () => {
    if (sessionId) await fetch(`${h.url}/sessions/${sessionId}`, { method: 'DELETE', headers: API }).catch(() => {});
    await Promise.all(workers.map((w) => w.kill('SIGTERM')));
    await h?.stop();
    site?.close();
  });

  it('a job in the other lane can neither open the stream nor read the view page of the watched lane', async () => {
    const base = `127.0.0.1:${viewPort}/lanes/${watchedLane}`;
    const probe = `(async () => {
      const stream = await new Promise((resolve) => {
        const ws = new WebSocket('ws://${base}/stream');
        let frames = 0;
        ws.onmessage = () => { frames++; };
        ws.onopen = () => resolve({ opened: true });
        ws.onerror = () => {};
        ws.onclose = (e) => resolve({ opened: false, code: e.code, frames });
      });
      let page;
      try {
        const r = await fetch('http://${base}/view');
        page = { status: r.status, body: (await r.text()).slice(0, 300) };
      } catch (e) {
        page = { error: String(e) };
      }
      return { stream, page };
    })()`;
    const job = await post('/jobs', { kind: 'macro', spec: { steps: [{ op: 'goto', url: siteUrl }, { op: 'eval', expression: probe, name: 'probe' }] } }).then(json);
    const finished = await done(job.id);
    expect(finished.lane).not.toBe(watchedLane);
    expect(finished.status).toBe('succeeded');
    const { stream, page } = finished.result.values.probe;
    expect(stream).toMatchObject({ opened: false, frames: 0 });
    // A cross-origin 401 without CORS headers is not even readable: fetch fails.
    expect(page.error ?? `HTTP ${page.status}`).toMatch(/TypeError|Failed to fetch|HTTP 401/);
    expect(JSON.stringify(page)).not.toMatch(/<img|screen/);
  });

  it('a job that navigates to the view page itself (same origin) gets a 401 page and a refused stream', async () => {
    const viewUrl = `http://127.0.0.1:${viewPort}/lanes/${watchedLane}/view`;
    const probe = `new Promise((resolve) => {
      const ws = new WebSocket(location.href.replace(/^http/, 'ws').replace(/\\/view$/, '/stream'));
      ws.onopen = () => resolve({ opened: true });
      ws.onerror = () => {};
      ws.onclose = (e) => resolve({ opened: false, code: e.code });
    })`;
    const job = await post('/jobs', {
      kind: 'macro',
      spec: { steps: [{ op: 'goto', url: viewUrl }, { op: 'extract', selector: 'body', name: 'body' }, { op: 'eval', expression: probe, name: 'stream' }] },
    }).then(json);
    const finished = await done(job.id);
    if (finished.status === 'succeeded') {
      expect(finished.result.values.body).toMatch(/view_token_invalid/);
      expect(finished.result.values.stream).toMatchObject({ opened: false });
    } else {
      // A lane egress policy that refuses the worker's own ports is an even shorter answer.
      expect(finished.error).toBeTruthy();
    }
  });

  it('gives an admin a view URL that streams frames through a real browser, and 401 to an API-token caller', async () => {
    expect((await askView('w01', watchedLane, API)).status).toBe(401);
    expect((await askView('w01', watchedLane, {})).status).toBe(401);
    const res = await askView('w01', watchedLane, ADMIN);
    expect(res.status).toBe(200);
    const grant = await res.json();
    const bare = h.hub.localLinks.get('w01')!.viewUrl(watchedLane)!;
    expect(grant.url.startsWith(`${bare}?vt=`)).toBe(true);
    expect(Date.parse(grant.expires_at) - Date.now()).toBeLessThanOrEqual(60_000);

    // The bare URL from the fleet table opens nothing.
    expect((await fetch(bare)).status).toBe(401);

    const browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: [...CHROME_ARGS] });
    try {
      const page = await browser.newPage();
      const shown = await page.goto(grant.url);
      expect(shown?.status()).toBe(200);
      await page.waitForFunction(() => document.getElementById('state')?.textContent?.endsWith('live') && (document.getElementById('screen') as HTMLImageElement).naturalWidth > 0, { timeout: 20_000 });
    } finally {
      await browser.close();
    }

    // A non-browser client with the same kind of URL gets JPEG frames.
    const again = await (await askView('w01', watchedLane, ADMIN)).json();
    const ws = new WebSocket(again.url.replace(/^http/, 'ws').replace('/view?', '/stream?'));
    try {
      const frame = await new Promise<Buffer>((resolve, reject) => {
        ws.on('message', (data, binary) => binary && resolve(data as Buffer));
        ws.once('error', reject);
        setTimeout(() => reject(new Error('no frame within 15 s')), 15_000).unref();
      });
      expect([...frame.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
    } finally {
      ws.close();
    }
  });

  it('records the console origin in the token: that origin may open the stream, a job page origin may not', async () => {
    // The console served by the hub: its origin is the hub's (a foreign one is refused as cross-site).
    const consoleOrigin = new URL(h.url).origin;
    const grant = await (await askView('w01', watchedLane, { ...ADMIN, origin: consoleOrigin })).json();
    const stream = grant.url.replace(/^http/, 'ws').replace('/view?', '/stream?');
    const statusFrom = (origin: string) =>
      new Promise<number>((resolve) => {
        const ws = new WebSocket(stream, { headers: { origin } });
        ws.once('open', () => (ws.close(), resolve(101)));
        ws.once('unexpected-response', (_req, r) => resolve(r.statusCode ?? 0));
        ws.once('error', () => {});
      });
    expect(await statusFrom(consoleOrigin)).toBe(101);
    expect(await statusFrom('http://127.0.0.1:1')).toBe(403);
  });

  it('an agent started with a --lan-ip this host does not own listens on loopback only, and says so', async () => {
    const w = spawnWorker(['--hub', h.url, '--lanes', '1', '--lan-ip', FOREIGN_IP, '--chrome', CHROMIUM], { PAPRIKA_HEARTBEAT_S: '0.5' });
    workers.push(w);
    await waitFor('foreign-ip worker linked', async () => h.hub.localLinks.get('w210')?.ready, 60_000, 100);
    expect(w.output()).toMatch(/live view is loopback-only/);
    const listeners = listenersOf(w.child.pid!);
    expect(listeners.length).toBeGreaterThan(0);
    for (const l of listeners) {
      expect(l.address).not.toBe('0.0.0.0');
      expect(l.address).not.toMatch(/^0+$/); // :: in /proc/net/tcp6
    }
    const viewUrl = h.hub.localLinks.get('w210')!.viewUrl(0)!;
    expect(viewUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/lanes\/0\/view$/);
    expect(listeners).toContainEqual({ family: 4, address: '127.0.0.1', port: Number(new URL(viewUrl).port) });
  });
});
