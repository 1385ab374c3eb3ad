// Issue 18, item 1: two hubs on one Postgres and one Redis, no S3, each with a data dir of its
// own, behind real nginx. A Chrome worker linked to one hub takes a fetch job; its screenshot
// is listed and served by both hubs and through nginx (files on one hub's disk answered 404
// every other time).
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnWorker, type WorkerProcess } from '../harness/agents.ts';
import { json } from '../harness/http.ts';
import { realBackends } from '../harness/hub.ts';
import { NGINX_BIN, startNginx, type Nginx } from '../harness/nginx.ts';
import { spawnHub, stablePort, waitFor, type HubProcess } from '../harness/processes.ts';
import { requireServices } from '../harness/services.ts';

const CHROMIUM = '/usr/bin/chromium';
const canRun = (fs.existsSync(CHROMIUM) && Boolean(NGINX_BIN) && requireServices(['postgres', 'redis'])) || process.env.CI === 'true';
if (!canRun) console.warn('\n!!! SKIPPING fleet assets e2e: needs Chromium, nginx, Postgres and Redis !!!\n');

describe.skipIf(!canRun)('assets on a fleet without S3', () => {
  let backends: Awaited<ReturnType<typeof realBackends>>;
  const hubs: HubProcess[] = [];
  const dataDirs: string[] = [];
  let nginx: Nginx;
  let worker: WorkerProcess;
  let site: http.Server;
  let siteUrl: string;

  beforeAll(async () => {
    site = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>assets on every hub</title><h1>hello</h1>');
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
    backends = await realBackends();
    for (const id of ['hub-a', 'hub-b']) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), `paprika-${id}-`));
      dataDirs.push(dir);
      hubs.push(await spawnHub(await stablePort(), { ...backends.env, PAPRIKA_HUB_ID: id, PAPRIKA_DATA_DIR: dir, PAPRIKA_HEARTBEAT_S: '0.5', PAPRIKA_HUB_HEARTBEAT_S: '0.3' }));
    }
    nginx = await startNginx(hubs.map((h) => new URL(h.url).host));
    // Linked to hub A directly: the asset arrives at A only.
    worker = spawnWorker(['--hub', hubs[0].url, '--lanes', '1', '--lan-ip', '127.0.41.1', '--chrome', CHROMIUM]);
    await waitFor('chrome worker alive on both hubs', async () => {
      const views = await Promise.all(hubs.map((h) => fetch(`${h.url}/admin/workers`).then(json)));
      return views.every((v) => v.workers.some((w: any) => w.alive && w.worker_id === 'w411'));
    }, 60_000, 100);
  }, 120_000);

  afterAll(async () => {
    await worker?.kill('SIGTERM');
    await Promise.all(hubs.map((h) => h.kill('SIGTERM')));
    await nginx?.stop();
    await backends?.drop();
    site?.close();
    for (const d of dataDirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it("lists and serves a fetch job's screenshot on both hubs and through nginx", async () => {
    const submitted = await fetch(`${hubs[0].url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'fetch', spec: { url: siteUrl, screenshot: true } }) }).then(json);
    const done = await waitFor('fetch job done', async () => {
      const j = await fetch(`${hubs[1].url}/jobs/${submitted.id}`).then(json);
      return ['succeeded', 'failed', 'canceled'].includes(j.status) ? j : undefined;
    }, 60_000, 100);
    expect(done).toMatchObject({ status: 'succeeded', worker_id: 'w411' });
    for (const base of [hubs[0].url, hubs[1].url, nginx.url, nginx.url]) {
      const job = await fetch(`${base}/jobs/${done.id}`).then(json);
      expect(job.assets).toEqual(['screenshot.png']);
      const res = await fetch(`${base}/jobs/${done.id}/assets/screenshot.png`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/png');
      expect(Buffer.from(await res.arrayBuffer()).subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
    }
    // Nothing on either hub's disk: the database holds it.
    for (const d of dataDirs) expect(fs.existsSync(path.join(d, 'assets', done.id))).toBe(false);
  });
});
