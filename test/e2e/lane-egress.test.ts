// Isolation and egress end to end: a hub and a one-lane `paprika worker` on real Chromium. The
// hub refuses denied URLs at submit; the worker refuses them in the browser (the hub's own port
// included, reached through a redirect or a subresource); the lane's Chrome is recycled after
// PAPRIKA_LANE_RECYCLE_JOBS and the hub's /metrics counts it.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnWorker, type WorkerProcess } from '../harness/agents.ts';
import { json } from '../harness/http.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { waitFor } from '../harness/processes.ts';

const CHROMIUM = '/usr/bin/chromium';
const hasChrome = fs.existsSync(CHROMIUM);
if (!hasChrome && process.env.CI !== 'true') console.warn('\n!!! SKIPPING lane egress e2e: /usr/bin/chromium not installed !!!\n');

describe.skipIf(!hasChrome && process.env.CI !== 'true')('egress policy and lane recycling through a real hub and worker', () => {
  let site: http.Server;
  let siteUrl: string;
  let h: TestHub;
  let worker: WorkerProcess;
  const hubSaw: string[] = [];

  const post = (path: string, body: unknown) => fetch(`${h.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const done = (id: string) =>
    waitFor(`job ${id}`, async () => {
      const j = await fetch(`${h.url}/jobs/${id}`).then(json);
      return ['succeeded', 'failed', 'canceled'].includes(j.status) ? j : undefined;
    }, 60_000, 50);
  const run = async (body: unknown) => done((await post('/jobs', body).then(json)).id);
  const browserPids = () =>
    execFileSync('ps', ['-eo', 'pid,ppid,args'], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.includes('--user-data-dir') && !l.includes('--type=') && l.trim().split(/\s+/)[1] === String(worker.child.pid))
      .map((l) => Number(l.trim().split(/\s+/)[0]));

  beforeAll(async () => {
    h = await startTestHub({ PAPRIKA_HEARTBEAT_S: '0.5', PAPRIKA_WORKER_TTL_S: '5', PAPRIKA_ASSIGN_WAIT_S: '20' });
    // Every request the hub's HTTP server receives, to prove the blocked ones never arrived.
    (h.hub as unknown as { http: { app: { server: http.Server } } }).http.app.server.on('request', (req: http.IncomingMessage) => hubSaw.push(req.url ?? ''));
    const hubPort = new URL(h.url).port;
    site = http.createServer((req, res) => {
      if (req.url?.startsWith('/redirect?to=')) return res.writeHead(302, { location: decodeURIComponent(req.url.slice('/redirect?to='.length)) }).end();
      res.writeHead(200, { 'content-type': 'text/html' });
      if (req.url === '/probe') return res.end(`<title>t</title><img src="http://127.0.0.1:${hubPort}/healthz?probe=img" onerror="document.title='blocked'" onload="document.title='loaded'">`);
      res.end('<title>plain</title>');
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    worker = spawnWorker(['--hub', h.url, '--lanes', '1', '--lan-ip', '127.0.33.1', '--chrome', CHROMIUM], { PAPRIKA_HEARTBEAT_S: '0.5', PAPRIKA_LANE_RECYCLE_JOBS: '3' });
    await waitFor('chrome worker linked', async () => h.hub.localLinks.size === 1, 60_000, 100);
  }, 90_000);

  afterAll(async () => {
    await worker?.kill('SIGTERM');
    await h?.stop();
    site?.closeAllConnections();
    site?.close();
  });

  it('POST /jobs with a denied URL answers 400 url_denied and stores nothing', async () => {
    const before = (await fetch(`${h.url}/jobs?limit=1000`).then(json)).jobs.length;
    const res = await post('/jobs', { kind: 'fetch', spec: { url: 'http://169.254.169.254/latest/meta-data/' } });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'url denied: http://169.254.169.254/latest/meta-data/ (169.254.0.0/16)', code: 'url_denied', details: { field: 'spec.url', rule: '169.254.0.0/16' } });
    const macro = await post('/jobs', { kind: 'macro', spec: { steps: [{ op: 'goto', url: `${siteUrl}/` }, { op: 'goto', url: `${h.url}/metrics` }] } });
    expect(macro.status).toBe(400);
    expect((await macro.json()).details).toEqual({ field: 'spec.steps.1.url', rule: `127.0.0.0/8:${new URL(h.url).port}` });
    expect((await fetch(`${h.url}/jobs?limit=1000`).then(json)).jobs.length).toBe(before);
    // A session's goto is checked at the hub the same way, before it reaches the worker.
    const session = await post('/sessions', {}).then(json);
    const cmd = await post(`/sessions/${session.session_id}/commands`, { op: 'goto', url: 'http://[fd00:ec2::254]/latest/' });
    expect(cmd.status).toBe(400);
    expect(await cmd.json()).toMatchObject({ code: 'url_denied', details: { field: 'url', rule: 'fd00:ec2::254' } });
    expect((await fetch(`${h.url}/sessions/${session.session_id}`, { method: 'DELETE' })).status).toBe(200);
  });

  it("a job redirected to the hub's own port fails url denied; a subresource aimed at it is blocked; the hub sees neither", async () => {
    const target = `http://localhost:${new URL(h.url).port}/admin/workers?probe=nav`;
    const nav = await run({ kind: 'fetch', spec: { url: `${siteUrl}/redirect?to=${encodeURIComponent(target)}` } });
    expect(nav.status).toBe('failed');
    expect(nav.error).toMatch(/^url denied: http:\/\/localhost:\d+\/admin\/workers\?probe=nav \(/);
    const meta = await run({ kind: 'fetch', spec: { url: `${siteUrl}/redirect?to=${encodeURIComponent('http://2852039166/')}` } });
    expect(meta.error).toBe('url denied: http://169.254.169.254/ (169.254.0.0/16)');
    const img = await run({ kind: 'macro', spec: { steps: [{ op: 'goto', url: `${siteUrl}/probe` }, { op: 'eval', expression: "new Promise((r) => { const t = () => (document.title !== 't' ? r(document.title) : setTimeout(t, 20)); t(); })", name: 'title' }] } });
    expect(img.status).toBe('succeeded');
    expect(img.result.values.title).toBe('blocked');
    expect(hubSaw.filter((u) => u.includes('probe='))).toEqual([]);
  });

  it('a failed macro keeps failure.png and its failed step', async () => {
    const job = await run({ kind: 'macro', spec: { steps: [{ op: 'goto', url: `${siteUrl}/` }, { op: 'extract', selector: '#nope', name: 'x' }] } });
    expect(job).toMatchObject({ status: 'failed', error: 'step 2 (extract): no element matches #nope' });
    expect(job.result).toEqual({ failed_step: 2 });
    expect(job.assets).toContain('failure.png');
    const png = Buffer.from(await (await fetch(`${h.url}/jobs/${job.id}/assets/failure.png`)).arrayBuffer());
    expect(png.subarray(0, 4).toString('hex')).toBe('89504e47');
  });

  it('PAPRIKA_LANE_RECYCLE_JOBS=3 replaces the lane’s Chrome and /metrics counts it', async () => {
    // Earlier jobs may have just recycled it: wait for the one browser the lane runs.
    const pids = new Set(await waitFor('lane browser', async () => (browserPids().length === 1 ? browserPids() : undefined), 10_000, 50));
    for (let i = 0; i < 7 && pids.size < 2; i++) {
      expect((await run({ kind: 'fetch', spec: { url: `${siteUrl}/` } })).status).toBe('succeeded');
      await waitFor('lane browser', async () => browserPids().length === 1, 10_000, 50);
      for (const p of browserPids()) pids.add(p);
    }
    expect(pids.size).toBe(2);
    await waitFor('recycle counted', async () => /paprika_lane_recycles_total\{reason="jobs"\} [1-9]/.test(await fetch(`${h.url}/metrics`).then((r) => r.text())), 10_000, 100);
    expect(await fetch(`${h.url}/metrics`).then((r) => r.text())).not.toMatch(/paprika_lane_recycles_total\{reason="crash"\} [1-9]/);
  }, 120_000);
});
