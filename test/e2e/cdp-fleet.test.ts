// Issue 19 across hubs (Postgres + Redis, two hubs in process, a real Chromium lane): a client
// on a hub that holds no worker gets a lane of another hub (one hop, peer token); a connect
// waiting ASSIGN_WAIT succeeds when a lane frees; a hub that stops takes its clients with it
// and the lane comes back.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import puppeteer from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimAgent, type SimAgent } from '../harness/agents.ts';
import { realBackends, startTestHub, type TestHub } from '../harness/hub.ts';
import { waitFor } from '../harness/processes.ts';
import { requireServices } from '../harness/services.ts';
import { chromePool } from '../../worker-agent/src/chrome/chrome-lane.ts';

const CHROMIUM = '/usr/bin/chromium';
const hasChrome = fs.existsSync(CHROMIUM);
const TOKEN = 'cdp-fleet-api';
const PAGE = `<!doctype html><html><head><title>Across hubs</title></head><body></body></html>`;

describe.skipIf(!requireServices(['postgres', 'redis']) || (!hasChrome && process.env.CI !== 'true'))('GET /cdp across hubs', () => {
  let backends: Awaited<ReturnType<typeof realBackends>>;
  let site: http.Server;
  let siteUrl: string;
  let a: TestHub;
  let b: TestHub;
  let agent: SimAgent;
  const inFlightOnA = () => a.hub.localLinks.all().reduce((n, l) => n + l.in_flight, 0);
  const cdpUrl = (hub: TestHub) => `${hub.url.replace('http', 'ws')}/cdp?token=${TOKEN}`;

  beforeAll(async () => {
    site = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE));
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    backends = await realBackends();
    const env = { ...backends.env, PAPRIKA_API_TOKEN: TOKEN, PAPRIKA_WORKER_TOKEN: 'w', PAPRIKA_ADMIN_TOKEN: 'ad', PAPRIKA_PEER_TOKEN: 'peer', PAPRIKA_ASSIGN_WAIT_S: '5', PAPRIKA_HEARTBEAT_S: '0.3', PAPRIKA_HUB_HEARTBEAT_S: '0.3', PAPRIKA_WORKER_TTL_S: '3' };
    a = await startTestHub({ ...env, PAPRIKA_HUB_ID: 'cdp-hub-a' });
    b = await startTestHub({ ...env, PAPRIKA_HUB_ID: 'cdp-hub-b' });
    agent = await startSimAgent(a.url, 1, { token: 'w', heartbeatS: 0.3, pool: chromePool({ lanes: 1, chromePath: CHROMIUM, singleChrome: false }) });
  }, 90_000);

  afterAll(async () => {
    await agent?.stop();
    await b?.stop().catch(() => {});
    await a?.stop();
    await backends?.drop();
    site?.close();
  });

  it('gives a client of a hub with no worker a lane of another hub, one hop', async () => {
    expect(b.hub.localLinks.size).toBe(0);
    await waitFor('B sees the worker with a free lane', async () => (await b.hub.forwarder.bestPeer())?.hubId === 'cdp-hub-a', 10_000);
    const browser = await puppeteer.connect({ browserWSEndpoint: cdpUrl(b) });
    expect(inFlightOnA()).toBe(1);
    const page = await browser.newPage();
    await page.goto(`${siteUrl}/`);
    expect(await page.title()).toBe('Across hubs');
    const metrics = await (await fetch(`${b.url}/metrics`)).text();
    expect(metrics).toMatch(/paprika_cdp_connections_opened_total\{via="peer"\} 1/);
    expect(metrics).toMatch(/paprika_cdp_connections_open 1/);
    await browser.disconnect();
    await waitFor('lane freed on A', async () => inFlightOnA() === 0);
  });

  it('waits ASSIGN_WAIT for a lane and connects when one frees during the wait', async () => {
    const first = await puppeteer.connect({ browserWSEndpoint: cdpUrl(a) });
    expect(inFlightOnA()).toBe(1);
    const waiting = puppeteer.connect({ browserWSEndpoint: cdpUrl(a) });
    await waitFor('second connect waits for a lane', async () => a.hub.lanes.waiting > 0);
    await first.disconnect();
    const second = await waiting;
    expect(inFlightOnA()).toBe(1);
    await second.disconnect();
    await waitFor('lane freed', async () => inFlightOnA() === 0);
  });

  it('a hub that stops takes its clients with it, and the lane comes back', async () => {
    await waitFor('B sees a free lane again', async () => (await b.hub.forwarder.bestPeer())?.hubId === 'cdp-hub-a', 10_000);
    const browser = await puppeteer.connect({ browserWSEndpoint: cdpUrl(b) });
    const gone = new Promise<void>((r) => browser.once('disconnected', () => r()));
    expect(inFlightOnA()).toBe(1);
    await b.stop();
    await gone;
    await waitFor('lane freed on A', async () => inFlightOnA() === 0);
  });
});
