// wall: 200 simulated lanes (50 workers × 4, synthetic thumbnails) on the lane wall in headless
// Chromium, every tile watched (a viewport tall enough to mount them all), each lane running a
// sleep job. Measured: the hub process's CPU (from /proc) and the bytes it sends per tile per
// second over /admin/wall (counted in the page), and the console's frame time (rAF intervals)
// and long tasks. Peers: the same hub with the wall closed (CPU), the JPEG bytes themselves
// (bandwidth: what base64 and JSON add), and the same wall with its thumbnail socket refused
// (frame time: what the thumbnails cost the console).
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startSimAgent, type SimAgent } from '../test/harness/agents.ts';
import { ensureConsoleBuilt } from '../test/harness/console-build.ts';
import { realBackends } from '../test/harness/hub.ts';
import { freePort, spawnHub, waitFor } from '../test/harness/processes.ts';
import { sampleTree } from './process-tree.ts';
import { summary, type Figure } from './report.ts';

const CHROMIUM = process.env.PAPRIKA_CHROMIUM ?? '/usr/bin/chromium';

/** Counts what the hub sends on /admin/wall (text frames: characters are bytes), and can refuse that socket. */
const COUNTER_SCRIPT = `(() => {
  const Native = window.WebSocket;
  const c = (window.__wall = { bytes: 0, frames: 0, jpegBytes: 0 });
  window.WebSocket = class extends Native {
    constructor(url, protocols) {
      const wall = String(url).includes('/admin/wall');
      if (wall && window.__blockWall) throw new Error('wall socket refused by the bench');
      super(url, protocols);
      if (wall) this.addEventListener('message', (e) => {
        const s = e.data;
        c.bytes += s.length;
        const i = s.indexOf('"jpeg":"');
        if (i < 0) return;
        c.frames++;
        c.jpegBytes += Math.floor(((s.indexOf('"', i + 8) - i - 8) * 3) / 4);
      });
    }
  };
})()`;

/** rAF intervals and long tasks over `ms`, and the wall socket's counters over the same window. */
const MEASURE_SCRIPT = `async (ms) => {
  const c = window.__wall, start = { ...c };
  const gaps = [];
  const longTasks = [];
  const obs = new PerformanceObserver((list) => { for (const e of list.getEntries()) longTasks.push(e.duration); });
  obs.observe({ type: 'longtask', buffered: false });
  const t0 = performance.now();
  await new Promise((resolve) => {
    let last = t0;
    const step = (now) => { gaps.push(now - last); last = now; if (now - t0 < ms) requestAnimationFrame(step); else resolve(); };
    requestAnimationFrame(step);
  });
  obs.disconnect();
  const s = (performance.now() - t0) / 1000;
  return { gaps, longTasks, seconds: s, bytes: c.bytes - start.bytes, frames: c.frames - start.frames, jpegBytes: c.jpegBytes - start.jpegBytes };
}`;

interface Window_ {
  gaps: number[];
  longTasks: number[];
  seconds: number;
  bytes: number;
  frames: number;
  jpegBytes: number;
  hubCpuPct: number;
}

async function measure(page: Page, hubPid: number, ms: number): Promise<Window_> {
  const cpu0 = sampleTree([hubPid]).cpuMs;
  const t0 = performance.now();
  const w = (await page.evaluate(`(${MEASURE_SCRIPT})(${ms})`)) as Omit<Window_, 'hubCpuPct'>;
  const hubCpuPct = ((sampleTree([hubPid]).cpuMs - cpu0) / (performance.now() - t0)) * 100;
  return { ...w, hubCpuPct };
}

/** Polls an expression in the page (page.evaluate is not subject to the console's CSP, a waitForFunction poll is). */
const until = (page: Page, expr: string) => waitFor(expr, async () => (await page.evaluate(expr)) as boolean, 60_000, 100);

async function openWall(browser: Browser, url: string, block: boolean, lanes: number): Promise<Page> {
  // Tall enough that the virtualiser mounts every worker row: all 200 tiles are watched.
  const page = await browser.newPage({ viewport: { width: 1440, height: 9000 } });
  await page.addInitScript(`${block ? 'window.__blockWall = true;' : ''}${COUNTER_SCRIPT}`);
  await page.goto(`${url}/#/wall`);
  await until(page, `document.querySelectorAll('[data-testid="lane-tile"]').length === ${lanes}`);
  // Settled alike with and without thumbnails: every busy lane knows its job (the running-jobs poll landed).
  await until(page, `document.querySelector('.view-wall .count')?.textContent?.includes('${lanes} busy') ?? false`);
  if (!block) await until(page, `document.querySelectorAll('img[data-testid="lane-thumb"][data-thumb-at]').length === ${lanes}`);
  return page;
}

export async function wallFigures(o: { workers: number; lanes: number; seconds: number }): Promise<Figure[]> {
  await ensureConsoleBuilt();
  const total = o.workers * o.lanes;
  const backends = await realBackends();
  const port = await freePort();
  const hub = await spawnHub(port, { ...backends.env, PAPRIKA_LOG_LEVEL: 'silent', PAPRIKA_HEARTBEAT_S: '5', PAPRIKA_WORKER_TTL_S: '30', PAPRIKA_REGISTER_BURST: '100000', PAPRIKA_REGISTER_PER_MIN: '100000' });
  const pid = hub.child.pid!;
  const agents: SimAgent[] = [];
  let browser: Browser | undefined;
  try {
    for (let i = 0; i < o.workers; i += 25) agents.push(...(await Promise.all(Array.from({ length: Math.min(25, o.workers - i) }, () => startSimAgent(hub.url, o.lanes, { heartbeatS: 5 })))));
    // Every lane busy (a page to screencast): one long sleep job each.
    const jobs = await Promise.all(
      Array.from({ length: total }, async () => (await (await fetch(`${hub.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'sleep', spec: { ms: 600_000 } }) })).json()) as { id: string }),
    );
    await waitFor('every lane busy', async () => ((await (await fetch(`${hub.url}/admin/workers`)).json()) as { workers: Array<{ in_flight: number }> }).workers.reduce((a, w) => a + w.in_flight, 0) === total, 60_000, 200);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
    const ms = o.seconds * 1000;

    // Baseline: the console open on the workers view, the wall closed (no thumbnail is produced).
    const idlePage = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await idlePage.addInitScript(COUNTER_SCRIPT);
    await idlePage.goto(`${hub.url}/#/workers`);
    await idlePage.locator('.view').first().waitFor();
    const closed = await measure(idlePage, pid, ms);
    await idlePage.close();

    const blockedPage = await openWall(browser, hub.url, true, total);
    await measure(blockedPage, pid, 1000); // warm-up, discarded: the first frames after mounting 200 tiles
    const noThumbs = await measure(blockedPage, pid, ms);
    await blockedPage.close();

    const wallPage = await openWall(browser, hub.url, false, total);
    await measure(wallPage, pid, 1000);
    const open = await measure(wallPage, pid, ms);
    await wallPage.close();
    for (const j of jobs) await fetch(`${hub.url}/jobs/${j.id}/cancel`, { method: 'POST' }).catch(() => undefined);

    const gapsOpen = summary(open.gaps);
    const gapsBlocked = summary(noThumbs.gaps);
    const perTile = (n: number) => n / total / open.seconds;
    const extra = {
      tiles: total,
      seconds: o.seconds,
      frames_per_tile_per_s: perTile(open.frames),
      frame_ms_p50: gapsOpen.p50,
      frame_ms_p99: gapsOpen.p99,
      frame_ms_p50_without_thumbs: gapsBlocked.p50,
      long_tasks: open.longTasks.length,
      longest_task_ms: Math.max(0, ...open.longTasks),
      long_tasks_without_thumbs: noThumbs.longTasks.length,
      hub_cpu_pct_wall_open: open.hubCpuPct,
      hub_cpu_pct_wall_closed: closed.hubCpuPct,
      hub_cpu_pct_wall_without_thumbs: noThumbs.hubCpuPct,
    };
    console.log(
      `wall: ${total} tiles, ${perTile(open.frames).toFixed(2)} frames/tile/s, ${perTile(open.bytes).toFixed(0)} B/tile/s; hub CPU ${open.hubCpuPct.toFixed(1)} % (wall closed ${closed.hubCpuPct.toFixed(1)} %); console frame p50 ${gapsOpen.p50.toFixed(1)} ms p99 ${gapsOpen.p99.toFixed(1)} ms, ${open.longTasks.length} long tasks (longest ${extra.longest_task_ms.toFixed(0)} ms)`,
    );
    const out = path.join(import.meta.dirname, 'results');
    fs.mkdirSync(out, { recursive: true });
    fs.writeFileSync(path.join(out, 'wall.json'), JSON.stringify({ ...extra, bytes_per_tile_per_s: perTile(open.bytes), jpeg_bytes_per_tile_per_s: perTile(open.jpegBytes), at: new Date().toISOString() }, null, 2));
    return [
      { name: `wall hub CPU, ${total} tiles watched (peer: wall closed)`, unit: '% of a core', paprika: open.hubCpuPct, peer: closed.hubCpuPct, peerName: 'same hub, wall closed', higherIsBetter: false, extra },
      { name: 'wall bytes sent per tile (peer: the JPEG bytes alone)', unit: 'B/s', paprika: perTile(open.bytes), peer: perTile(open.jpegBytes), peerName: 'JPEG payload', higherIsBetter: false, extra },
      { name: `wall console frame time p99, ${total} live tiles (peer: no thumbnails)`, unit: 'ms', paprika: gapsOpen.p99, peer: gapsBlocked.p99, peerName: 'same wall, thumbnail socket refused', higherIsBetter: false, extra },
    ];
  } finally {
    await browser?.close();
    await Promise.all(agents.map((a) => a.stop().catch(() => {})));
    await hub.kill();
    await backends.drop();
  }
}
