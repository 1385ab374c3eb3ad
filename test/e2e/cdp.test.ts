// Issue 19: unmodified Puppeteer and Playwright scripts on the fleet through GET /cdp, with real
// Chromium lanes on in-process agents: isolation between clients, lanes that come back,
// back-pressure before the upgrade, the tunnel's one-time token, and jobs sharing the lanes.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import puppeteer from 'puppeteer-core';
import { chromium } from 'playwright-core';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { startSimAgent, type SimAgent } from '../harness/agents.ts';
import { rawLink } from '../harness/raw-link.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { waitFor } from '../harness/processes.ts';
import { chromePool } from '../../worker-agent/src/chrome/chrome-lane.ts';

const CHROMIUM = '/usr/bin/chromium';
const hasChrome = fs.existsSync(CHROMIUM);
if (!hasChrome && process.env.CI !== 'true') console.warn('\n!!! SKIPPING CDP e2e: /usr/bin/chromium not installed !!!\n');

const TOKEN = 'cdp-api-token';
const WORKER_TOKEN = 'cdp-worker-token';
const PAGE = `<!doctype html><html><head><title>Paprika CDP page</title></head><body><h1 id="h">Hello CDP</h1></body></html>`;

describe.skipIf(!hasChrome && process.env.CI !== 'true')('GET /cdp: Puppeteer and Playwright scripts on the fleet', () => {
  let site: http.Server;
  let siteUrl: string;
  let h: TestHub;
  const agents: SimAgent[] = [];
  const wsUrl = (q = '') => `${h.url.replace('http', 'ws')}/cdp?token=${TOKEN}${q}`;
  const inFlight = () => [...h.hub.localLinks.all()].reduce((n, l) => n + l.in_flight, 0);

  beforeAll(async () => {
    site = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE));
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    h = await startTestHub({ PAPRIKA_API_TOKEN: TOKEN, PAPRIKA_WORKER_TOKEN: WORKER_TOKEN, PAPRIKA_ADMIN_TOKEN: 'a', PAPRIKA_PEER_TOKEN: 'p', PAPRIKA_ASSIGN_WAIT_S: '0.5', PAPRIKA_HEARTBEAT_S: '0.5' });
    for (let i = 0; i < 2; i++) agents.push(await startSimAgent(h.url, 1, { token: WORKER_TOKEN, pool: chromePool({ lanes: 1, chromePath: CHROMIUM, singleChrome: false }) }));
  }, 90_000);

  afterAll(async () => {
    await Promise.all(agents.map((a) => a.stop()));
    await h?.stop();
    site?.close();
  });

  it('runs a Puppeteer script unmodified (newPage, goto, title, evaluate, screenshot) and frees the lane on disconnect', async () => {
    const browser = await puppeteer.connect({ browserWSEndpoint: wsUrl() });
    expect(inFlight()).toBe(1);
    const page = await browser.newPage();
    await page.goto(`${siteUrl}/`);
    expect(await page.title()).toBe('Paprika CDP page');
    expect(await page.evaluate(() => document.querySelector('#h')!.textContent)).toBe('Hello CDP');
    const png = await page.screenshot({ type: 'png' });
    expect(Buffer.from(png).subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
    await browser.disconnect();
    await waitFor('lane freed', async () => inFlight() === 0);
    const audit = await waitFor('audit entries', async () => {
      const { entries } = (await (await fetch(`${h.url}/admin/audit`, { headers: { authorization: 'Bearer a' } })).json()) as { entries: Array<{ action: string; actor: string; details: { reason?: string } }> };
      const cdp = entries.filter((e) => e.action.startsWith('cdp.'));
      return cdp.length >= 2 ? cdp : undefined;
    });
    expect(audit.map((e) => e.action).sort()).toEqual(['cdp.close', 'cdp.open']);
    expect(audit.find((e) => e.action === 'cdp.close')?.details.reason).toBe('client closed');
  });

  it("a client cannot read the worker's files or leave the lane's egress proxy (file://, a context with its own proxy)", async () => {
    const browser = await puppeteer.connect({ browserWSEndpoint: wsUrl() });
    try {
      const page = await browser.newPage();
      await expect(page.goto('file:///etc/hostname')).rejects.toThrow(/not reachable through Paprika's CDP/);
      await expect(browser.createBrowserContext({ proxyServer: 'direct://' })).rejects.toThrow(/proxyServer is refused/);
      const cdp = await page.createCDPSession();
      await expect(cdp.send('DOM.setFileInputFiles', { files: ['/etc/hostname'], backendNodeId: 1 })).rejects.toThrow(/DOM\.setFileInputFiles is refused/);
      // Remote target discovery would have the browser itself poll any host and port, past the proxy.
      await expect(cdp.send('Target.setRemoteLocations', { locations: [{ host: '127.0.0.1', port: 9 }] })).rejects.toThrow(/Target\.setRemoteLocations is refused/);
      // The session still works after the refusals.
      await page.goto(`${siteUrl}/`);
      expect(await page.title()).toBe('Paprika CDP page');
    } finally {
      await browser.disconnect();
    }
    await waitFor('lane freed', async () => inFlight() === 0);
  });

  it('runs a Playwright connectOverCDP script unmodified (newPage, goto, title)', async () => {
    const browser = await chromium.connectOverCDP(wsUrl());
    const page = await browser.newPage();
    await page.goto(`${siteUrl}/`);
    expect(await page.title()).toBe('Paprika CDP page');
    await browser.close(); // over CDP this disconnects the client: the lane's browser ends with the tunnel
    await waitFor('lane freed', async () => inFlight() === 0);
  });

  it('puts two clients on two workers, and the next client finds no page, cookie or storage of an earlier one', async () => {
    const a = await puppeteer.connect({ browserWSEndpoint: wsUrl() });
    const b = await puppeteer.connect({ browserWSEndpoint: wsUrl() });
    const held = h.hub.localLinks.all().map((l) => l.lanes().map((x) => x.cdp_id).filter(Boolean));
    expect(held.map((x) => x.length)).toEqual([1, 1]);
    for (const br of [a, b]) {
      const page = await br.newPage();
      await page.goto(`${siteUrl}/left-behind`);
      await page.evaluate(() => {
        document.cookie = 'secret=1; max-age=3600';
        localStorage.setItem('secret', '1');
      });
    }
    await a.disconnect();
    await b.disconnect();
    await waitFor('lanes freed', async () => inFlight() === 0);
    const next = [await puppeteer.connect({ browserWSEndpoint: wsUrl() }), await puppeteer.connect({ browserWSEndpoint: wsUrl() })];
    for (const br of next) {
      const urls = (await br.pages()).map((p) => p.url());
      expect(urls.some((u) => u.includes('left-behind'))).toBe(false);
      const page = await br.newPage();
      await page.goto(`${siteUrl}/`);
      expect(await page.evaluate(() => [document.cookie, localStorage.getItem('secret')])).toEqual(['', null]);
      await br.disconnect();
    }
    await waitFor('lanes freed', async () => inFlight() === 0);
  });

  it('answers 503 + Retry-After before any upgrade when every lane is held, and frees a lane on Browser.close', async () => {
    const held = [await puppeteer.connect({ browserWSEndpoint: wsUrl() }), await puppeteer.connect({ browserWSEndpoint: wsUrl() })];
    const refused = await upgradeStatus(wsUrl());
    expect(refused.status).toBe(503);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.body).toMatchObject({ code: 'no_free_cdp_lane' });
    const metrics = await (await fetch(`${h.url}/metrics`)).text();
    expect(metrics).toMatch(/paprika_cdp_connections_refused_total\{reason="no_free_lane"\} [1-9]/);
    expect(metrics).toMatch(/paprika_cdp_connections_open 2/);
    expect(metrics).toMatch(/paprika_cdp_connection_seconds_count [1-9]/);
    const lanes = (await (await fetch(`${h.url}/admin/workers`, { headers: { authorization: 'Bearer a' } })).json()) as { workers: Array<{ lanes: Array<{ cdp_id: string | null }> }> };
    expect(lanes.workers.flatMap((w) => w.lanes).filter((l) => l.cdp_id).length).toBe(2);
    await held[0].close(); // Browser.close: Chrome exits, the lane is cleaned and freed
    await waitFor('one lane freed', async () => inFlight() === 1);
    await held[1].disconnect();
    await waitFor('lanes freed', async () => inFlight() === 0);
  });

  it('frees the lane of a client process killed with SIGKILL', async () => {
    const script = `const p = require('puppeteer-core'); p.connect({ browserWSEndpoint: process.argv[1] }).then(async (b) => { await b.newPage(); console.log('connected'); setInterval(() => {}, 1000); });`;
    const child = spawn(process.execPath, ['-e', script, wsUrl()], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d) => String(d).includes('connected') && resolve());
      child.once('exit', (code) => reject(new Error(`client exited ${code}`)));
    });
    expect(inFlight()).toBe(1);
    child.kill('SIGKILL');
    await waitFor('lane freed after kill -9', async () => inFlight() === 0);
  });

  it('runs a job queued while CDP clients hold every lane when one leaves', async () => {
    const held = [await puppeteer.connect({ browserWSEndpoint: wsUrl() }), await puppeteer.connect({ browserWSEndpoint: wsUrl() })];
    const res = await fetch(`${h.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` }, body: JSON.stringify({ kind: 'fetch', spec: { url: `${siteUrl}/` } }) });
    const job = (await res.json()) as { id: string; status: string };
    expect(job.status).toBe('queued');
    await held[0].disconnect();
    const done = await waitFor('queued job ran', async () => {
      const j = (await (await fetch(`${h.url}/jobs/${job.id}`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { status: string; result?: { title?: string } };
      return j.status === 'succeeded' || j.status === 'failed' ? j : undefined;
    }, 60_000);
    expect(done).toMatchObject({ status: 'succeeded', result: { title: 'Paprika CDP page' } });
    await held[1].disconnect();
    await waitFor('lanes freed', async () => inFlight() === 0);
  });

  it('refuses a connect without the token (or with a wrong one) with 401 before any upgrade, and takes a Bearer header', async () => {
    const base = `${h.url.replace('http', 'ws')}/cdp`;
    expect((await upgradeStatus(base)).status).toBe(401);
    expect((await upgradeStatus(`${base}?token=wrong`)).status).toBe(401);
    expect((await upgradeStatus(`${base}?token=${TOKEN}x`)).status).toBe(401);
    expect(inFlight()).toBe(0);
    const browser = await puppeteer.connect({ browserWSEndpoint: base, headers: { authorization: `Bearer ${TOKEN}` } });
    expect((await browser.version()).length).toBeGreaterThan(0);
    await browser.disconnect();
    await waitFor('lane freed', async () => inFlight() === 0);
  });

  it("puts a CDP client's pages behind the lane's egress policy (a metadata address is denied)", async () => {
    const browser = await puppeteer.connect({ browserWSEndpoint: wsUrl() });
    const page = await browser.newPage();
    const res = await page.goto('http://169.254.169.254/latest/meta-data/');
    expect(res?.status()).toBe(403);
    expect(res?.headers()['x-paprika-denied']).toBeTruthy();
    await browser.disconnect();
    await waitFor('lane freed', async () => inFlight() === 0);
  });

  it('accepts ?token= on /cdp only', async () => {
    const res = await fetch(`${h.url}/jobs?token=${TOKEN}`);
    expect(res.status).toBe(401);
  });

  it('closes an idle client with a reason when it asked for a short idle_s', async () => {
    const ws = new WebSocket(wsUrl('&idle_s=0.3'));
    const closed = new Promise<{ code: number; reason: string }>((r) => ws.once('close', (code, reason) => r({ code, reason: reason.toString() })));
    expect(await closed).toEqual({ code: 4000, reason: 'idle timeout' });
    await waitFor('lane freed', async () => inFlight() === 0);
    expect((await upgradeStatus(wsUrl('&idle_s=-1'))).status).toBe(400);
  });
});

describe('CDP tunnels: only the worker the hub asked, with its one-time token', () => {
  let h: TestHub;
  beforeAll(async () => {
    h = await startTestHub({ PAPRIKA_API_TOKEN: TOKEN, PAPRIKA_WORKER_TOKEN: WORKER_TOKEN, PAPRIKA_ADMIN_TOKEN: 'a', PAPRIKA_PEER_TOKEN: 'p', PAPRIKA_ASSIGN_WAIT_S: '0.2' });
  });
  afterAll(async () => h?.stop());

  it('refuses another worker, a wrong token and a second use; takes the right worker once', async () => {
    const links = { wcdpa: await rawLink(h.url, 'wcdpa', {}, { token: WORKER_TOKEN }), wcdpb: await rawLink(h.url, 'wcdpb', {}, { token: WORKER_TOKEN, lanIp: '127.0.0.2' }) };
    const client = new WebSocket(`${h.url.replace('http', 'ws')}/cdp?token=${TOKEN}`);
    const clientOpen = new Promise<void>((resolve, reject) => {
      client.once('open', () => resolve());
      client.once('unexpected-response', (_q, res) => reject(new Error(`client got ${res.statusCode}`)));
    });
    const [owner, open] = await waitFor('cdp_open sent', async () => {
      for (const [id, l] of Object.entries(links)) {
        const f = l.frames.find((x) => x.type === 'cdp_open');
        if (f) return [id, f] as const;
      }
      return undefined;
    });
    const other = owner === 'wcdpa' ? 'wcdpb' : 'wcdpa';
    const tunnel = (worker: string, token: string) => `${h.url.replace('http', 'ws')}/workers/${worker}/cdp/${open.cdp_id}|${token}`;
    const dial = (spec: string, headers: Record<string, string> = {}) => {
      const [url, token] = spec.split('|');
      return upgradeStatus(url, { authorization: `Bearer ${WORKER_TOKEN}`, 'x-paprika-tunnel-token': token, ...headers });
    };
    expect((await dial(tunnel(other, open.tunnel_token))).status).toBe(403);
    expect((await dial(tunnel(owner, 'f'.repeat(64)))).status).toBe(403);
    expect((await upgradeStatus(tunnel(owner, open.tunnel_token).split('|')[0], { 'x-paprika-tunnel-token': open.tunnel_token })).status).toBe(401);
    const [url] = tunnel(owner, open.tunnel_token).split('|');
    const worker = new WebSocket(url, { headers: { authorization: `Bearer ${WORKER_TOKEN}`, 'x-paprika-tunnel-token': open.tunnel_token } });
    await new Promise((r) => worker.once('open', r));
    await clientOpen;
    expect((await dial(tunnel(owner, open.tunnel_token))).status).toBe(403); // used once
    // Frames cross the splice both ways.
    const echoed = new Promise<string>((r) => client.once('message', (m) => r(String(m))));
    worker.once('message', (m) => worker.send(`echo ${m}`));
    client.send('{"id":1}');
    expect(await echoed).toBe('echo {"id":1}');
    client.close();
    const close = await waitFor('cdp_close', async () => links[owner as 'wcdpa'].frames.find((x) => x.type === 'cdp_close' && x.cdp_id === open.cdp_id));
    expect(close.reason).toBe('client closed');
    expect(h.hub.localLinks.all().reduce((n, l) => n + l.in_flight, 0)).toBe(1); // held until the worker says the browser is gone
    // Another worker cannot free it: a cdp_closed counts only from the link holding that client.
    links[other as 'wcdpa'].ws.send(JSON.stringify({ type: 'cdp_closed', v: 1, cdp_id: open.cdp_id, reason: 'not mine' }));
    links[other as 'wcdpa'].ws.send(JSON.stringify({ type: 'cdp_closed', v: 1, cdp_id: 'x'.repeat(5000), reason: 'oversized id' }));
    await waitFor('the other link answered the malformed frame', async () => links[other as 'wcdpa'].frames.some((f) => f.type === 'error'));
    expect(h.hub.localLinks.all().reduce((n, l) => n + l.in_flight, 0)).toBe(1);
    links[owner as 'wcdpa'].ws.send(JSON.stringify({ type: 'cdp_closed', v: 1, cdp_id: open.cdp_id, reason: 'tunnel closed' }));
    await waitFor('lane freed', async () => h.hub.localLinks.all().every((l) => l.in_flight === 0));
    for (const l of Object.values(links)) l.ws.close();
  });
});

describe('CDP clients go only to workers whose lanes run cdp', () => {
  it('answers 503 on a hub whose only worker has simulated lanes, and never asks that worker', async () => {
    const h = await startTestHub({ PAPRIKA_API_TOKEN: TOKEN, PAPRIKA_WORKER_TOKEN: WORKER_TOKEN, PAPRIKA_ADMIN_TOKEN: 'a', PAPRIKA_PEER_TOKEN: 'p', PAPRIKA_ASSIGN_WAIT_S: '0.2' });
    const sim = await startSimAgent(h.url, 2, { token: WORKER_TOKEN });
    try {
      const res = await upgradeStatus(`${h.url.replace('http', 'ws')}/cdp?token=${TOKEN}`);
      expect(res.status).toBe(503);
      expect(h.hub.localLinks.all()[0].in_flight).toBe(0);
    } finally {
      await sim.stop();
      await h.stop();
    }
  });
});

/** Try a WebSocket upgrade and report the HTTP answer when it is refused (101 when it opens). */
function upgradeStatus(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: unknown }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.once('open', () => {
      ws.close();
      resolve({ status: 101, headers: {}, body: null });
    });
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => {
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
      });
    });
    ws.once('error', (err) => {
      if (!String(err).includes('Unexpected server response')) reject(err);
    });
  });
}
