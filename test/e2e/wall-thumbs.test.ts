// Issue 20's wall acceptance with real Debian Chromium: two `paprika worker --lanes 2` processes
// (4 Chrome lanes) run macro jobs on a page served on 127.0.0.1 that animates, and the console's
// lane wall shows each lane's live thumbnail, relayed by the hub over /admin/wall (admin token
// only). The console never contacts a worker: every request and socket it opens goes to the hub.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { nextLanIp, spawnWorker, type WorkerProcess } from '../harness/agents.ts';
import { ensureConsoleBuilt } from '../harness/console-build.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { findOverflows } from '../harness/page-layout.ts';
import { waitFor } from '../harness/processes.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const ARTIFACTS = path.join(ROOT, 'test-artifacts');
const CHROMIUM = process.env.PAPRIKA_CHROMIUM ?? '/usr/bin/chromium';
const SIZES = [
  { width: 1440, height: 900 },
  { width: 1024, height: 768 },
];
const ADMIN = 'wall-admin-token';

// A page whose screen changes several times a second: a counter and a moving, recoloured block.
const PAGE = `<!doctype html><html><head><title>animated</title></head><body style="margin:0;font:48px sans-serif">
<div id="n">0</div><div id="box" style="position:absolute;top:80px;width:120px;height:120px"></div>
<script>let i=0;setInterval(()=>{i++;document.getElementById('n').textContent=String(i);const b=document.getElementById('box');b.style.left=(i*37%600)+'px';b.style.background='hsl('+(i*47%360)+',80%,50%)'},150)</script></body></html>`;

describe.skipIf(!fs.existsSync(CHROMIUM))('lane wall thumbnails relayed by the hub from Chrome lanes', () => {
  let site: http.Server;
  let siteUrl: string;
  let hub: TestHub;
  const workers: WorkerProcess[] = [];
  const lanIps = [nextLanIp(), nextLanIp()];
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  const contacted: string[] = [];
  const jobIds: string[] = [];

  const post = async (body: unknown) => (await (await fetch(`${hub.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as { id: string; status: string };
  const jobStatus = async (id: string) => ((await (await fetch(`${hub.url}/jobs/${id}`)).json()) as { status: string }).status;
  const admin = { authorization: `Bearer ${ADMIN}` };

  beforeAll(async () => {
    await ensureConsoleBuilt();
    site = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(PAGE);
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
    hub = await startTestHub({ PAPRIKA_ADMIN_TOKEN: ADMIN, PAPRIKA_BIND: '127.0.0.1', PAPRIKA_HEARTBEAT_S: '0.5', PAPRIKA_WORKER_TTL_S: '5' });
    for (const ip of lanIps) workers.push(spawnWorker(['--hub', hub.url, '--lanes', '2', '--lan-ip', ip, '--chrome', CHROMIUM], { PAPRIKA_HEARTBEAT_S: '0.5' }));
    await waitFor('two chrome workers linked', async () => hub.hub.localLinks.size === 2, 90_000, 100);
    // Four jobs, one per lane, each showing the animated page for up to two minutes (canceled at the end).
    const spec = { kind: 'macro', spec: { timeout_s: 180, steps: [{ op: 'goto', url: siteUrl }, { op: 'eval', expression: 'new Promise((r) => setTimeout(() => r(1), 120000))', name: 'waited' }] } };
    for (let i = 0; i < 4; i++) jobIds.push((await post(spec)).id);
    for (const id of jobIds) await waitFor(`job ${id} running`, async () => (await jobStatus(id)) === 'running', 60_000, 100);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: SIZES[0] });
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    page.on('request', (r) => contacted.push(r.url()));
    page.on('websocket', (ws) => contacted.push(ws.url()));
    await page.addInitScript(`localStorage.setItem('paprika.adminToken', ${JSON.stringify(ADMIN)})`);
    fs.mkdirSync(ARTIFACTS, { recursive: true });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    for (const id of jobIds) await fetch(`${hub.url}/jobs/${id}/cancel`, { method: 'POST' }).catch(() => {});
    await Promise.all(workers.map((w) => w.kill('SIGTERM')));
    await hub?.stop();
    site?.close();
  });

  const thumbOf = (key: string) => page.locator(`[data-testid="lane-tile"][data-lane-key="${key}"] img[data-testid="lane-thumb"]`);

  it('shows a live tile for each of the 4 Chrome lanes, and a tile changes while its job runs', async () => {
    await page.goto(`${hub.url}/#/wall`);
    await expect.poll(() => page.locator('[data-testid="lane-tile"]').count(), { timeout: 15_000 }).toBe(4);
    const keys = await page.locator('[data-testid="lane-tile"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-lane-key')!));
    for (const key of keys) {
      await expect.poll(() => thumbOf(key).getAttribute('data-thumb-at'), { timeout: 30_000, message: `${key} shows a thumbnail` }).toMatch(/^\d+$/);
      expect(await thumbOf(key).isVisible()).toBe(true);
      expect(await thumbOf(key).getAttribute('src')).toMatch(/^data:image\/jpeg;base64,\/9j\//);
    }
    // One tile over a few seconds: a newer frame, and a different picture (the page animates).
    const key = keys[0];
    const first = { at: Number(await thumbOf(key).getAttribute('data-thumb-at')), src: await thumbOf(key).getAttribute('src') };
    await expect.poll(async () => Number(await thumbOf(key).getAttribute('data-thumb-at')) > first.at && (await thumbOf(key).getAttribute('src')) !== first.src, { timeout: 20_000 }).toBe(true);
    // The thumbnail is drawn inside its tile, scaled to fit.
    const box = await thumbOf(key).evaluate((img) => {
      const i = img as HTMLImageElement;
      const t = i.closest('[data-testid="lane-tile"]')!.getBoundingClientRect();
      const r = i.getBoundingClientRect();
      return { inside: r.left >= t.left && r.right <= t.right && r.top >= t.top && r.bottom <= t.bottom, natural: i.naturalWidth, fit: getComputedStyle(i).objectFit };
    });
    expect(box).toMatchObject({ inside: true, fit: 'contain' });
    expect(box.natural).toBeGreaterThan(0);
    expect(box.natural).toBeLessThanOrEqual(320);
    // Small enough to relay at a frame a second: within the link's limit, logged for the README.
    const sizes = await page.locator('img[data-testid="lane-thumb"][data-thumb-at]').evaluateAll((imgs) => imgs.map((i) => (i as HTMLImageElement).src.length - 'data:image/jpeg;base64,'.length));
    for (const n of sizes) expect(n).toBeLessThanOrEqual(262_144);
    console.log(`wall e2e: Chrome lane thumbnails of ${sizes.join(', ')} base64 characters`);
    for (const size of SIZES) {
      await page.setViewportSize(size);
      await expect.poll(() => page.locator('img[data-testid="lane-thumb"][data-thumb-at]').count(), { timeout: 15_000 }).toBe(4);
      await page.screenshot({ path: path.join(ARTIFACTS, `wall-thumbs-${size.width}x${size.height}.png`) });
      expect(await findOverflows(page), `wall at ${size.width}`).toEqual([]);
    }
  });

  it('reached only the hub: no request or socket of the console went to a worker', async () => {
    const hubOrigin = new URL(hub.url).host;
    expect(contacted.length).toBeGreaterThan(0);
    expect(contacted.some((u) => u.includes('/admin/wall'))).toBe(true);
    expect(contacted.filter((u) => !u.startsWith('data:') && new URL(u).host !== hubOrigin)).toEqual([]);
  });

  it('refuses the wall socket without the admin token', async () => {
    const wsUrl = `${hub.url.replace(/^http/, 'ws')}/admin/wall`;
    const status = await new Promise<number>((resolve) => {
      const ws = new WebSocket(wsUrl, ['paprika.v1']);
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => (ws.close(), resolve(101)));
      ws.on('error', () => resolve(-1));
    });
    expect(status).toBe(401);
    expect((await fetch(`${hub.url}/admin/workers`, { headers: admin })).status).toBe(200);
  });

  it('a lane whose job ends goes back to the placeholder', async () => {
    await page.setViewportSize(SIZES[0]);
    const key = (await page.locator('[data-testid="lane-tile"]').first().getAttribute('data-lane-key'))!;
    const workerId = key.slice(0, key.lastIndexOf('/'));
    const lane = Number(key.slice(key.lastIndexOf('/') + 1));
    const workers_ = (await (await fetch(`${hub.url}/admin/workers`, { headers: admin })).json()) as { workers: Array<{ worker_id: string; lanes: Array<{ index: number; job_id: string | null }> }> };
    const jobId = workers_.workers.find((w) => w.worker_id === workerId)!.lanes.find((l) => l.index === lane)!.job_id!;
    expect(jobIds).toContain(jobId);
    await fetch(`${hub.url}/jobs/${jobId}/cancel`, { method: 'POST' });
    await expect.poll(() => thumbOf(key).getAttribute('data-thumb-at'), { timeout: 30_000 }).toBeNull();
    expect(await thumbOf(key).isVisible()).toBe(false);
  });

  it('left no page errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
