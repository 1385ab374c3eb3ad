// Lanes that forget and lanes that cannot reach what they must not, on real Chromium: a job's
// cookies, storage and HTTP cache are gone for the next job; the Chrome is recycled after N
// jobs; a failed macro keeps failure.png; the egress proxy refuses denied targets (navigation,
// subresource, WebSocket, redirect) before any connection is made. Each runs twice: on a lane
// with its own Chrome (the default) and on a lane sharing one Chrome with another
// (`--shared-chrome`, where each context names its lane's proxy itself).
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EgressGuard } from '../../worker-agent/src/egress/egress-guard.ts';
import { chromePool, type ChromePool } from '../../worker-agent/src/chrome/chrome-lane.ts';
import type { JobContext } from '../../worker-agent/src/lanes/lane.ts';

const CHROMIUM = '/usr/bin/chromium';
const haveChrome = fs.existsSync(CHROMIUM);
if (!haveChrome && process.env.CI !== 'true') console.warn(`\n!!! SKIPPING lane-isolation tests: ${CHROMIUM} is missing !!!\n`);

function ctx(ms = 20_000): JobContext {
  return { jobId: `job-${Math.random().toString(36).slice(2)}`, deadline: Date.now() + ms, signal: new AbortController().signal };
}

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

const MODES = [
  { mode: 'a Chrome per lane', lanes: 1, sharedChrome: false },
  { mode: 'one Chrome shared by two lanes', lanes: 2, sharedChrome: true },
];

describe.skipIf(!haveChrome && process.env.CI !== 'true').each(MODES)('lane isolation and egress on real Chromium ($mode)', ({ lanes, sharedChrome }) => {
  let site: http.Server;
  let forbidden: http.Server;
  let base: string;
  let forbiddenPort: number;
  const seen: Array<{ url: string; cookie: string | undefined }> = [];
  const forbiddenSeen: string[] = [];
  let pool: ChromePool;

  beforeAll(async () => {
    // Stands for the hub: its port is on the deny list, so nothing must ever reach it.
    forbidden = http.createServer((req, res) => {
      forbiddenSeen.push(req.url ?? '');
      res.end('secret');
    });
    forbidden.on('upgrade', (req, socket) => {
      forbiddenSeen.push(`upgrade ${req.url}`);
      socket.destroy();
    });
    forbiddenPort = await listen(forbidden);
    site = http.createServer((req, res) => {
      seen.push({ url: req.url ?? '', cookie: req.headers.cookie });
      const html = (body: string, headers: Record<string, string> = {}) => res.writeHead(200, { 'content-type': 'text/html', ...headers }).end(`<!doctype html><title>t</title>${body}`);
      if (req.url === '/set') {
        return html(`<script>document.cookie = 'js=1; path=/'; localStorage.setItem('k', 'v');</script>`, { 'set-cookie': 'sid=secret; HttpOnly; Path=/' });
      }
      if (req.url === '/cacheable') return res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'max-age=3600' }).end(`fresh ${seen.length}`);
      if (req.url === '/subresource') return html(`<img id="i" src="http://127.0.0.1:${forbiddenPort}/metrics" onload="document.title='loaded'" onerror="document.title='blocked'">`);
      if (req.url === '/socket') {
        return html(`<script>const ws = new WebSocket('ws://127.0.0.1:${forbiddenPort}/workers/w1/link'); ws.onopen = () => (document.title = 'open'); ws.onerror = () => (document.title = 'blocked');</script>`);
      }
      if (req.url?.startsWith('/redirect?to=')) return res.writeHead(302, { location: decodeURIComponent(req.url.slice('/redirect?to='.length)) }).end();
      html('<h1>plain</h1>');
    });
    base = `http://127.0.0.1:${await listen(site)}`;
    const egress = new EgressGuard([`127.0.0.0/8:${forbiddenPort}`]);
    pool = chromePool({ lanes, chromePath: CHROMIUM, singleChrome: false, sharedChrome, egress, recycleJobs: 3 });
    await pool.start();
  }, 60_000);

  afterAll(async () => {
    await pool?.stop();
    for (const s of [site, forbidden]) {
      s?.closeAllConnections();
      await new Promise((r) => s?.close(r));
    }
  });

  it('a job sees none of the previous job’s cookies, storage or HTTP cache', async () => {
    const lane = pool.lanes[0];
    const fetchTwice = `fetch('/cacheable').then((r) => r.text()).then(() => fetch('/cacheable')).then((r) => r.text())`;
    const first = await lane.runJob(
      { kind: 'macro', spec: { steps: [{ op: 'goto', url: `${base}/set` }, { op: 'eval', expression: fetchTwice, name: 'body' }, { op: 'eval', expression: 'document.cookie', name: 'cookie' }] } },
      ctx(),
    );
    expect(first.error).toBeUndefined();
    expect((first.result as { values: { cookie: string } }).values.cookie).toBe('js=1');
    // Within a job the cache works: two fetches, one request.
    expect(seen.filter((s) => s.url === '/cacheable')).toHaveLength(1);
    expect(seen.find((s) => s.url === '/cacheable')?.cookie).toContain('sid=secret');

    const before = seen.length;
    const second = await lane.runJob(
      {
        kind: 'macro',
        spec: {
          steps: [
            { op: 'goto', url: `${base}/plain` },
            { op: 'eval', expression: 'document.cookie', name: 'cookie' },
            { op: 'eval', expression: "localStorage.getItem('k')", name: 'storage' },
            { op: 'eval', expression: `fetch('/cacheable').then((r) => r.text())`, name: 'body' },
          ],
        },
      },
      ctx(),
    );
    expect(second.error).toBeUndefined();
    expect((second.result as { values: object }).values).toMatchObject({ cookie: '', storage: null });
    const requests = seen.slice(before).filter((r) => r.url !== '/favicon.ico'); // Chrome asks for one on its own
    // The page server saw a fresh request for the cacheable URL, and no cookie at all.
    expect(requests.map((r) => r.url)).toEqual(['/plain', '/cacheable']);
    expect(requests.map((r) => r.cookie)).toEqual([undefined, undefined]);
  });

  it('a session runs in its own context too: the job after it sees nothing of it', async () => {
    const lane = pool.lanes[0];
    await lane.openSession('s-iso');
    const signal = AbortSignal.timeout(15_000);
    await lane.sessionCommand({ op: 'goto', url: `${base}/set` }, signal);
    expect(await lane.sessionCommand({ op: 'eval', expression: "localStorage.getItem('k')" }, signal)).toEqual({ value: 'v' });
    await lane.closeSession();
    const out = await lane.runJob({ kind: 'macro', spec: { steps: [{ op: 'goto', url: `${base}/plain` }, { op: 'eval', expression: "[document.cookie, localStorage.getItem('k')]", name: 'state' }] } }, ctx());
    expect((out.result as { values: { state: unknown } }).values.state).toEqual(['', null]);
  });

  it('a lane’s Chrome is replaced after PAPRIKA_LANE_RECYCLE_JOBS jobs (per lane sharing it)', async () => {
    const lane = pool.lanes[0];
    const pids = new Set<number>();
    // Every lane runs a job each round: a shared Chrome serves lanes × 3 jobs, three rounds.
    // The tests before this one ran jobs on the same Chrome, so a recycle may fall right after any
    // round: the pid is read once no recycle is under way (it is undefined during a relaunch),
    // before and after each round, so the Chrome before a recycle and the one after both count.
    const readPid = async () => {
      await lane.browserHost.settled();
      if (lane.pid) pids.add(lane.pid);
    };
    for (let i = 0; i < 6 && pids.size < 2; i++) {
      await readPid();
      // A job that waits for the recycle spends its deadline on the relaunch too: slow on a loaded machine.
      const outs = await Promise.all(pool.lanes.map((l) => l.runJob({ kind: 'fetch', spec: { url: `${base}/plain` } }, ctx(60_000))));
      expect(outs.map((o) => o.error)).toEqual(outs.map(() => undefined));
      await readPid();
    }
    expect(pids.size).toBe(2);
    expect(lane.recycles.jobs).toBeGreaterThanOrEqual(1);
    expect(pool.recycles!().crash).toBe(0);
  }, 180_000);

  it('a failed macro keeps failure.png and names the failed step', async () => {
    const out = await pool.lanes[0].runJob({ kind: 'macro', spec: { steps: [{ op: 'goto', url: `${base}/plain` }, { op: 'extract', selector: '#missing', name: 'x' }] } }, ctx());
    expect(out).toMatchObject({ status: 'failed', error: 'step 2 (extract): no element matches #missing', result: { failed_step: 2 } });
    expect(out.assets?.map((a) => a.name)).toEqual(['failure.png']);
    expect(Buffer.from(out.assets![0].data_base64, 'base64').subarray(0, 4).toString('hex')).toBe('89504e47');
  });

  it('a job navigating to the metadata address fails url denied before any connection', async () => {
    const lane = pool.lanes[0];
    const contactedBefore = lane.proxy.contacted.length;
    const out = await lane.runJob({ kind: 'fetch', spec: { url: 'http://169.254.169.254/latest/meta-data/' } }, ctx());
    expect(out).toMatchObject({ status: 'failed', error: 'url denied: http://169.254.169.254/latest/meta-data/ (169.254.0.0/16)' });
    // Redirected there, it is the proxy that refuses: still no upstream connection.
    const redirected = await lane.runJob({ kind: 'fetch', spec: { url: `${base}/redirect?to=${encodeURIComponent('http://0xA9FEA9FE/')}` } }, ctx());
    expect(redirected).toMatchObject({ status: 'failed', error: 'url denied: http://169.254.169.254/ (169.254.0.0/16)' });
    const https = await lane.runJob({ kind: 'fetch', spec: { url: `${base}/redirect?to=${encodeURIComponent('https://169.254.169.254/')}` } }, ctx());
    expect(https).toMatchObject({ status: 'failed', error: 'url denied: https://169.254.169.254/ (169.254.0.0/16)' });
    expect(lane.proxy.contacted.slice(contactedBefore).filter((c) => c.startsWith('169.254.'))).toEqual([]);
  });

  it('a denied subresource, WebSocket and main-frame redirect never reach the denied port', async () => {
    const lane = pool.lanes[0];
    const img = await lane.runJob({ kind: 'macro', spec: { steps: [{ op: 'goto', url: `${base}/subresource` }, { op: 'wait_for', selector: 'title' }, { op: 'eval', expression: "new Promise((r) => { const t = () => (document.title !== 't' ? r(document.title) : setTimeout(t, 20)); t(); })", name: 'title' }] } }, ctx());
    expect(img.error).toBeUndefined();
    expect((img.result as { values: { title: string } }).values.title).toBe('blocked');
    const ws = await lane.runJob({ kind: 'macro', spec: { steps: [{ op: 'goto', url: `${base}/socket` }, { op: 'eval', expression: "new Promise((r) => { const t = () => (document.title !== 't' ? r(document.title) : setTimeout(t, 20)); t(); })", name: 'title' }] } }, ctx());
    expect((ws.result as { values: { title: string } }).values.title).toBe('blocked');
    const nav = await lane.runJob({ kind: 'fetch', spec: { url: `${base}/redirect?to=${encodeURIComponent(`http://localhost:${forbiddenPort}/admin`)}` } }, ctx());
    expect(nav).toMatchObject({ status: 'failed', error: `url denied: http://localhost:${forbiddenPort}/admin (127.0.0.0/8:${forbiddenPort})` });
    expect(forbiddenSeen).toEqual([]);
  });
});
