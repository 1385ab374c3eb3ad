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
import { startSimAgent, type SimAgent } from '../harness/agents.ts';
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
  });
});
