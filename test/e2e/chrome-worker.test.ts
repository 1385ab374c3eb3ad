// Issue 3's acceptance with real Debian Chromium: a hub and `paprika worker --lanes 2`
// processes run fetch and macro jobs against a page served on 127.0.0.1; a killed Chrome
// fails its job clearly and the lane comes back; --single-chrome is picked too.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnWorker, type WorkerProcess } from '../harness/agents.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { freePort, waitFor } from '../harness/processes.ts';
import { nextEvent } from '../harness/wait.ts';
import { json } from '../harness/http.ts';

const CHROMIUM = '/usr/bin/chromium';
const hasChrome = fs.existsSync(CHROMIUM);
if (!hasChrome && process.env.CI !== 'true') console.warn('\n!!! SKIPPING chrome worker e2e: /usr/bin/chromium not installed !!!\n');

const PAGE = `<!doctype html><html><head><title>Paprika test page</title></head>
<body><h1 id="h">Hello lanes</h1><form><input id="name" name="name"></form></body></html>`;

describe.skipIf(!hasChrome && process.env.CI !== 'true')('paprika worker with Chrome lanes', () => {
  let site: http.Server;
  let siteUrl: string;
  let h: TestHub;
  const workers: WorkerProcess[] = [];

  const post = (body: unknown) => fetch(`${h.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(json);
  const done = (id: string, ms = 60_000) => waitFor(`job ${id}`, async () => {
    const j = await fetch(`${h.url}/jobs/${id}`).then(json);
    return ['succeeded', 'failed', 'canceled'].includes(j.status) ? j : undefined;
  }, ms, 50);

  beforeAll(async () => {
    site = http.createServer((req, res) => {
      if (req.url === '/slow') return void setTimeout(() => res.end('<title>slow</title>'), 30_000);
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(PAGE);
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    h = await startTestHub({ PAPRIKA_HEARTBEAT_S: '0.5', PAPRIKA_WORKER_TTL_S: '5', PAPRIKA_ASSIGN_WAIT_S: '20' });
    workers.push(spawnWorker(['--hub', h.url, '--lanes', '2', '--lan-ip', '127.0.31.1', '--chrome', CHROMIUM], { PAPRIKA_HEARTBEAT_S: '0.5' }));
    await waitFor('chrome worker linked', async () => h.hub.localLinks.size === 1, 60_000, 100);
  }, 90_000);

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.kill('SIGTERM')));
    await h?.stop();
    site?.close();
  });

  it('runs a fetch job: title, status and a screenshot the hub serves as a PNG', async () => {
    const job = await done((await post({ kind: 'fetch', spec: { url: `${siteUrl}/`, screenshot: true } })).id);
    expect(job.status).toBe('succeeded');
    expect(job.result).toMatchObject({ status_code: 200, title: 'Paprika test page' });
    expect(job.assets).toContain('screenshot.png');
    const png = Buffer.from(await (await fetch(`${h.url}/jobs/${job.id}/assets/screenshot.png`)).arrayBuffer());
    expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
    expect(job.novnc_url).toMatch(/^http:\/\/127\.0\.31\.1:\d+\/lanes\/\d\/view$/);
  });

  it('runs a macro that types into a form and extracts the value', async () => {
    const job = await done(
      (await post({ kind: 'macro', spec: { steps: [{ op: 'goto', url: `${siteUrl}/` }, { op: 'type', selector: '#name', text: 'Ada Lovelace' }, { op: 'extract', selector: '#name', name: 'typed', property: 'value' }, { op: 'extract', selector: '#h', name: 'heading' }] } })).id,
    );
    expect(job.status).toBe('succeeded');
    expect(job.result.values).toMatchObject({ typed: 'Ada Lovelace', heading: 'Hello lanes' });
  });

  it('runs two jobs in parallel on two lanes while a third waits', async () => {
    const spec = { kind: 'macro', spec: { steps: [{ op: 'goto', url: `${siteUrl}/` }, { op: 'eval', expression: 'new Promise(r => setTimeout(() => r(1), 1500))', name: 'waited' }] } };
    const [a, b] = await Promise.all([post(spec), post(spec)]);
    expect([a.status, b.status]).toEqual(['running', 'running']);
    expect(new Set([a.lane, b.lane])).toEqual(new Set([0, 1]));
    const third = post(spec);
    await waitFor('the third POST waiting for a lane', async () => h.hub.jobs.pendingInline === 1, 10_000, 10);
    const queuedView = await fetch(`${h.url}/admin/workers`).then(json);
    expect(queuedView.workers[0].in_flight).toBe(2);
    const c = await third; // assigned once a lane frees, inside ASSIGN_WAIT
    const [da, db, dc] = await Promise.all([done(a.id), done(b.id), done(c.id)]);
    expect([da.status, db.status, dc.status]).toEqual(['succeeded', 'succeeded', 'succeeded']);
    expect(Date.parse(dc.assigned_at)).toBeGreaterThanOrEqual(Math.min(Date.parse(da.finished_at), Date.parse(db.finished_at)) - 5);
  });

  it('fails the job of a killed Chrome with a clear error; the lane comes back and the next job succeeds', async () => {
    const loading = nextEvent(site, 'request', 'the lane to request the slow page', (req: http.IncomingMessage) => req.url === '/slow', 30_000);
    const job = await post({ kind: 'fetch', spec: { url: `${siteUrl}/slow` } });
    expect(job.status).toBe('running');
    await loading; // Chrome is loading the page: the job is in the browser
    // The browsers are the worker process's children; kill the one with this lane's profile.
    const ps = execFileSync('ps', ['-eo', 'pid,ppid,args'], { encoding: 'utf8' }).split('\n');
    const browsers = ps.filter((l) => l.includes('--user-data-dir') && !l.includes('--type=') && l.trim().split(/\s+/)[1] === String(workers[0].child.pid));
    expect(browsers.length).toBe(2);
    for (const b of browsers) process.kill(Number(b.trim().split(/\s+/)[0]), 'SIGKILL');
    const failed = await done(job.id, 30_000);
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/chrome crashed/);
    const next = await done((await post({ kind: 'fetch', spec: { url: `${siteUrl}/` } })).id);
    expect(next.status).toBe('succeeded');
    expect(next.result.title).toBe('Paprika test page');
  });

  it('--single-chrome reports novnc_url and max_concurrent 1, and the hub picks it', async () => {
    await fetch(`${h.url}/admin/workers/w311`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status: 'drain' }) });
    const viewPort = await freePort(); // --view-port: the live view on a port a firewall rule can name
    workers.push(spawnWorker(['--hub', h.url, '--single-chrome', '--lan-ip', '127.0.32.1', '--chrome', CHROMIUM, '--view-port', String(viewPort)], { PAPRIKA_HEARTBEAT_S: '0.5' }));
    await waitFor('single chrome linked', async () => h.hub.localLinks.get('w321') !== undefined, 60_000, 100);
    const row = (await fetch(`${h.url}/admin/workers`).then(json)).workers.find((w: any) => w.worker_id === 'w321');
    expect(row.max_concurrent).toBe(1);
    const link = h.hub.localLinks.get('w321')!;
    expect(link.capabilities.novnc_url).toBe(`http://127.0.32.1:${viewPort}/lanes/0/view`);
    expect(link.capabilities.lane_novnc_urls).toEqual([]);
    const job = await done((await post({ kind: 'fetch', spec: { url: `${siteUrl}/` } })).id);
    expect(job.status).toBe('succeeded');
    expect(job.worker_id).toBe('w321');
  });
});

describe.skipIf(!hasChrome && process.env.CI !== 'true')('Chrome profiles of a worker that was killed', () => {
  // A worker SIGKILLed (or stopped by a second Ctrl-C) while it retried its registration:
  // its Chromes see their pipe close, exit cleanly and remove their own lock, so the profiles
  // were left in the temp folder for good (outside probe). The next start removes them.
  it("the next worker on the host removes them; the worker's own stop leaves none", async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-tmpdir-'));
    const env = { TMPDIR: tmp, PAPRIKA_DATA_DIR: path.join(tmp, 'data') };
    const args = ['--hub', 'http://127.0.0.1:1', '--lanes', '2', '--lan-ip', '127.0.33.1', '--chrome', CHROMIUM];
    const profiles = () => fs.readdirSync(tmp).filter((n) => n.startsWith('paprika-lane-'));
    const first = spawnWorker(args, env);
    let second: WorkerProcess | undefined;
    try {
      await waitFor('two lanes started', async () => (first.output().match(/"msg":"chrome started"/g) ?? []).length === 2, 60_000, 100);
      await waitFor('retrying its registration', async () => /hub unreachable for registration/.test(first.output()), 30_000, 100);
      await first.kill('SIGKILL');
      const left = profiles();
      expect(left).toHaveLength(2);
      // Their Chromes exit on their own once the pipe is gone, taking Chrome's lock along.
      await waitFor("Chrome's locks gone", async () => left.every((p) => !fs.existsSync(path.join(tmp, p, 'SingletonLock'))), 30_000, 100);
      second = spawnWorker(args, env);
      await waitFor('the next worker started its lanes', async () => (second!.output().match(/"msg":"chrome started"/g) ?? []).length === 2, 60_000, 100);
      expect(second.output()).toMatch(/"removed":2,"msg":"removed Chrome profiles left by a worker that was killed"/);
      expect(profiles().filter((p) => left.includes(p))).toEqual([]);
      expect(profiles()).toHaveLength(2); // its own
      // SIGTERM while it retries its registration: the stop ends the lanes first, and exits 0.
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
      expect(profiles(), second.output().slice(-1500)).toEqual([]);
      expect(second.output()).not.toMatch(/agent stopped/);
    } finally {
      await first.kill('SIGKILL');
      await second?.kill('SIGKILL');
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});
