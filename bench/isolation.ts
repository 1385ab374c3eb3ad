// The cost of lanes that forget: a fetch job per iteration on one Chrome lane, run the way
// workers run it (a fresh browser context per job, closed at its end, the next one made while
// idle, every request through the lane's egress proxy), against the cheapest way to drive
// Chrome (one page reused for every navigation, direct). A second figure isolates the proxy.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromePool } from '../worker-agent/src/chrome/chrome-lane.ts';
import { endChrome, launchChrome } from '../worker-agent/src/chrome/chrome-process.ts';
import { findChrome } from '../worker-agent/src/chrome/find-chrome.ts';
import { summary, type Figure } from './report.ts';

const PAGE = '<!doctype html><title>bench</title><h1>hello</h1><img src="/pixel.png">';

export async function isolationFigures(o: { jobs: number }): Promise<Figure[]> {
  const chromePath = findChrome({});
  if (!chromePath) {
    console.log('isolation: skipped (no Chrome found)');
    return [];
  }
  const server = http.createServer((req, res) => {
    if (req.url === '/pixel.png') return res.writeHead(200, { 'content-type': 'image/png', 'cache-control': 'max-age=3600' }).end(Buffer.alloc(64));
    res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  try {
    // Fresh context per job, behind the proxy, as a worker runs it (recycling off: it is not what is measured).
    const pool = chromePool({ lanes: 1, chromePath, singleChrome: false, recycleJobs: 1_000_000 });
    await pool.start();
    const lane = pool.lanes[0];
    const job = { kind: 'fetch' as const, spec: { url } };
    const ctx = () => ({ jobId: 'bench', deadline: Date.now() + 30_000, signal: new AbortController().signal });
    for (let i = 0; i < 5; i++) await lane.runJob(job, ctx()); // warm up
    let t = performance.now();
    for (let i = 0; i < o.jobs; i++) {
      const out = await lane.runJob(job, ctx());
      if (out.status !== 'succeeded') throw new Error(`bench job failed: ${out.error}`);
    }
    const isolatedRate = o.jobs / ((performance.now() - t) / 1000);
    // Latency when the lane had a moment between jobs (the usual case): the next context is ready.
    const isolatedMs: number[] = [];
    for (let i = 0; i < o.jobs / 2; i++) {
      await lane.idle();
      t = performance.now();
      await lane.runJob(job, ctx());
      isolatedMs.push(performance.now() - t);
    }

    // Peers: one page reused for every job, behind the same lane proxy, then direct.
    const reusedMs: number[] = [];
    const reusedRate = async (proxyPort?: number) => {
      const chrome = await launchChrome(chromePath, { proxyPort });
      try {
        const page = await chrome.browser.newPage();
        for (let i = 0; i < 5; i++) await page.goto(url);
        const start = performance.now();
        for (let i = 0; i < o.jobs; i++) {
          const one = performance.now();
          await page.goto(url, { waitUntil: 'load' });
          await page.content();
          await page.title();
          if (proxyPort && i < o.jobs / 2) reusedMs.push(performance.now() - one);
        }
        return o.jobs / ((performance.now() - start) / 1000);
      } finally {
        await endChrome(chrome);
      }
    };
    const reusedProxied = await reusedRate(lane.proxy.port);
    await pool.stop();
    const reusedDirect = await reusedRate();
    return [
      { name: 'isolation, fetch job per fresh context (1 lane)', unit: 'jobs/s', paprika: isolatedRate, peer: reusedProxied, peerName: 'one reused page, same proxy', higherIsBetter: true, extra: { jobs: o.jobs } },
      { name: 'isolation, job latency p50 on an idle lane (next context made ahead)', unit: 'ms', paprika: summary(isolatedMs).p50, peer: summary(reusedMs).p50, peerName: 'one reused page, same proxy', higherIsBetter: false, extra: { jobs: isolatedMs.length } },
      { name: 'egress proxy, reused page', unit: 'jobs/s', paprika: reusedProxied, peer: reusedDirect, peerName: 'one reused page, direct', higherIsBetter: true, extra: { jobs: o.jobs } },
    ];
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}
