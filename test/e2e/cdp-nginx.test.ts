// Issue 19 through real nginx with the generated config: two hubs behind its round robin, one
// Chrome worker linked through nginx (its tunnels hashed to the hub of its link). Every connect
// through nginx works, whichever hub takes it (the other one proxies, one hop).
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import puppeteer from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimAgent, type SimAgent } from '../harness/agents.ts';
import { realBackends, startTestHub, type TestHub } from '../harness/hub.ts';
import { NGINX_BIN, startNginx, type Nginx } from '../harness/nginx.ts';
import { waitFor } from '../harness/processes.ts';
import { requireServices } from '../harness/services.ts';
import { chromePool } from '../../worker-agent/src/chrome/chrome-lane.ts';

const CHROMIUM = '/usr/bin/chromium';
const ready = requireServices(['postgres', 'redis']) && ((fs.existsSync(CHROMIUM) && NGINX_BIN !== undefined) || process.env.CI === 'true');
const TOKEN = 'cdp-nginx-api';

describe.skipIf(!ready)('GET /cdp through nginx round robin', () => {
  let backends: Awaited<ReturnType<typeof realBackends>>;
  let site: http.Server;
  let siteUrl: string;
  const hubs: TestHub[] = [];
  let nginx: Nginx;
  let agent: SimAgent;
  const inFlight = () => hubs.reduce((n, h) => n + h.hub.localLinks.all().reduce((m, l) => m + l.in_flight, 0), 0);

  beforeAll(async () => {
    site = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<title>via nginx</title>'));
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    backends = await realBackends();
    const env = { ...backends.env, PAPRIKA_API_TOKEN: TOKEN, PAPRIKA_WORKER_TOKEN: 'w', PAPRIKA_ADMIN_TOKEN: 'ad', PAPRIKA_PEER_TOKEN: 'peer', PAPRIKA_ASSIGN_WAIT_S: '5', PAPRIKA_HEARTBEAT_S: '0.3', PAPRIKA_HUB_HEARTBEAT_S: '0.3', PAPRIKA_WORKER_TTL_S: '3' };
    for (const id of ['cdp-ngx-a', 'cdp-ngx-b']) hubs.push(await startTestHub({ ...env, PAPRIKA_HUB_ID: id }));
    nginx = await startNginx(hubs.map((h) => h.url.replace('http://', '')));
    agent = await startSimAgent(nginx.url, 1, { token: 'w', heartbeatS: 0.3, pool: chromePool({ lanes: 1, chromePath: CHROMIUM, singleChrome: false }) });
  }, 90_000);

  afterAll(async () => {
    await agent?.stop();
    await nginx?.stop();
    for (const h of hubs) await h.stop();
    await backends?.drop();
    site?.close();
  });

  it('runs a script on every connect, whichever hub nginx picks', async () => {
    const withWorker = hubs.find((h) => h.hub.localLinks.size === 1)!;
    const other = hubs.find((h) => h !== withWorker)!;
    await waitFor('the other hub sees the free lane', async () => (await other.hub.forwarder.bestPeer('cdp')) !== undefined, 10_000);
    for (let i = 0; i < 4; i++) {
      const browser = await puppeteer.connect({ browserWSEndpoint: `${nginx.url.replace('http', 'ws')}/cdp?token=${TOKEN}` });
      const page = await browser.newPage();
      await page.goto(`${siteUrl}/`);
      expect(await page.title()).toBe('via nginx');
      await browser.disconnect();
      await waitFor('lane freed', async () => inFlight() === 0);
      await waitFor('the peer sees it free again', async () => (await other.hub.forwarder.bestPeer('cdp')) !== undefined, 10_000);
    }
    const opened = async (h: TestHub) => Number(/paprika_cdp_connections_opened_total\{via="(?:local|peer)"\} (\d+)/.exec(await (await fetch(`${h.url}/metrics`)).text())?.[1] ?? 0);
    // Round robin over two hubs: both took connects, one served them on its worker, the other proxied.
    expect(await opened(withWorker)).toBeGreaterThan(0);
    expect(await opened(other)).toBeGreaterThan(0);
  });
});
