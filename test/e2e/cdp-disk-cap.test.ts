// A CDP client may fill its own browser profile (downloads, cache, storage), but not the
// worker's disk: past PAPRIKA_CDP_MAX_DISK_MB the worker ends the client, removes the profile
// and frees the lane. Before, a page saving a 301 MB blob again and again filled the disk every
// lane and the agent share (outside probe). Real Chromium, a real puppeteer-core client over the
// hub's /cdp, a cap of 8 MB and a page that downloads 40 MB.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import puppeteer from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedLog, startSimAgent, type SimAgent } from '../harness/agents.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { waitFor } from '../harness/processes.ts';
import { chromePool } from '../../worker-agent/src/chrome/chrome-lane.ts';

const CHROMIUM = '/usr/bin/chromium';
const hasChrome = fs.existsSync(CHROMIUM);
const CAP = 8 * 1024 * 1024;
// A page with a link to a 40 MB download, as a Playwright client with acceptDownloads saves it.
const PAGE = `<!doctype html><title>big</title><a id="get" href="/big">get</a>`;

describe.skipIf(!hasChrome && process.env.CI !== 'true')('a CDP client that fills its profile', () => {
  let site: http.Server;
  let siteUrl: string;
  let h: TestHub;
  let agent: SimAgent;
  const agentLog = capturedLog();
  const inFlight = () => [...h.hub.localLinks.all()].reduce((n, l) => n + l.in_flight, 0);

  beforeAll(async () => {
    site = http.createServer((req, res) => {
      if (req.url === '/big') return void res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-disposition': 'attachment; filename=big.bin' }).end(Buffer.alloc(40 * 1024 * 1024, 7));
      res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    h = await startTestHub({ PAPRIKA_ASSIGN_WAIT_S: '0.5', PAPRIKA_HEARTBEAT_S: '0.5' });
    agent = await startSimAgent(h.url, 1, { log: agentLog.log, cdpMaxDiskBytes: CAP, pool: chromePool({ lanes: 1, chromePath: CHROMIUM, singleChrome: false }) });
  }, 90_000);
  afterAll(async () => {
    await agent?.stop();
    await h?.stop();
    site?.close();
  });

  it('is ended past PAPRIKA_CDP_MAX_DISK_MB: the client is disconnected, its profile removed, the lane free for the next client', async () => {
    const browser = await puppeteer.connect({ browserWSEndpoint: `${h.url.replace('http', 'ws')}/cdp` });
    const disconnected = new Promise<void>((r) => browser.once('disconnected', () => r()));
    const page = await browser.newPage();
    await page.goto(`${siteUrl}/`);
    // The profile this client got: the CDP browser this process (the in-process agent) started.
    const profile = await waitFor('the profile', async () => fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map((d) => {
      try {
        const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
        if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== process.pid) return undefined;
        return /--user-data-dir=([^\0]*paprika-cdp-[^\0]+)/.exec(fs.readFileSync(`/proc/${d}/cmdline`, 'utf8'))?.[1];
      } catch {
        return undefined;
      }
    }).find((p) => p && fs.existsSync(p)));
    const cdp = await browser.target().createCDPSession();
    await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: '/tmp/anywhere' }); // the guard puts it in the profile
    await page.click('#get').catch(() => {}); // the connection may end under it
    await disconnected;
    const ended = await waitFor('the worker ends it', async () => agentLog.lines.find((l) => l.msg === 'CDP client ended'));
    expect(ended.reason).toMatch(/^the client's browser profile passed 8 MB on the worker's disk \(\d+ MB; PAPRIKA_CDP_MAX_DISK_MB\)$/);
    await waitFor('the lane free', async () => inFlight() === 0);
    expect(fs.existsSync(profile!)).toBe(false);
    // The next client gets the lane and a clean browser.
    const next = await puppeteer.connect({ browserWSEndpoint: `${h.url.replace('http', 'ws')}/cdp` });
    const p2 = await next.newPage();
    await p2.goto(`${siteUrl}/`);
    expect(await p2.title()).toBe('big');
    await next.disconnect();
    await waitFor('the lane free again', async () => inFlight() === 0);
  });
});
