// `npx tsx bench/console-scale.ts [--workers 2000] [--lanes 2]`: the console with a large fleet
// of simulated workers (real agents over real WebSockets, all in this process), measured in
// headless Chromium: time to first render of the worker table and of the lane wall, and the
// longest task and longest frame while scrolling each from top to bottom.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { chromium, type Page } from 'playwright-core';
import { startSimAgent, type SimAgent } from '../test/harness/agents.ts';
import { ensureConsoleBuilt } from '../test/harness/console-build.ts';
import { startTestHub } from '../test/harness/hub.ts';

const CHROMIUM = process.env.PAPRIKA_CHROMIUM ?? '/usr/bin/chromium';

interface ScrollFigures {
  firstRenderMs: number;
  longestTaskMs: number;
  longestFrameMs: number;
  frames: number;
}

/** Long tasks (>50 ms, as Chromium reports them) and rAF frame gaps while `scroller` scrolls to its end. */
async function scrollFigures(page: Page, scroller: string): Promise<{ longestTaskMs: number; longestFrameMs: number; frames: number }> {
  // A string, not a function: tsx's name helpers do not exist in the page.
  return page.evaluate(`(${SCROLL_SCRIPT})(${JSON.stringify(scroller)})`) as Promise<{ longestTaskMs: number; longestFrameMs: number; frames: number }>;
}

const SCROLL_SCRIPT = `async (sel) => {
  const el = document.querySelector(sel);
  let longestTask = 0;
  const obs = new PerformanceObserver((list) => { for (const e of list.getEntries()) longestTask = Math.max(longestTask, e.duration); });
  obs.observe({ type: 'longtask', buffered: false });
  let longestFrame = 0, frames = 0, last = performance.now();
  await new Promise((resolve) => {
    const step = () => {
      const now = performance.now();
      longestFrame = Math.max(longestFrame, now - last);
      last = now;
      frames++;
      el.scrollTop += 400;
      if (el.scrollTop + el.clientHeight >= el.scrollHeight - 1 || frames > 5000) resolve();
      else requestAnimationFrame(step);
    };
    requestAnimationFrame(step);
  });
  await new Promise((r) => setTimeout(r, 100));
  obs.disconnect();
  return { longestTaskMs: Math.round(longestTask), longestFrameMs: Math.round(longestFrame), frames };
}`;

async function measureView(page: Page, url: string, ready: string, expected: number | string, scroller: string): Promise<ScrollFigures> {
  const started = Date.now();
  await page.goto(url);
  await page.waitForFunction(`document.querySelector(${JSON.stringify(ready)})?.textContent?.includes(${JSON.stringify(String(expected))}) ?? false`, undefined, { timeout: 120_000, polling: 50 });
  const firstRenderMs = Date.now() - started;
  return { firstRenderMs, ...(await scrollFigures(page, scroller)) };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { workers: { type: 'string', default: '2000' }, lanes: { type: 'string', default: '2' } } });
  const n = Number(values.workers);
  const lanes = Number(values.lanes);
  await ensureConsoleBuilt();
  const hub = await startTestHub({ PAPRIKA_HEARTBEAT_S: '5', PAPRIKA_WORKER_TTL_S: '30', PAPRIKA_REGISTER_PER_MIN: '1000000', PAPRIKA_REGISTER_BURST: '100000', PAPRIKA_REGISTER_PER_IP_PER_MIN: '1000000' });
  const agents: SimAgent[] = [];
  const t0 = Date.now();
  for (let i = 0; i < n; i += 50) agents.push(...(await Promise.all(Array.from({ length: Math.min(50, n - i) }, () => startSimAgent(hub.url, lanes, { heartbeatS: 5 })))));
  console.log(`${n} simulated workers (${n * lanes} lanes) linked in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    const table = await measureView(page, `${hub.url}/#/workers`, '.toolbar .count', n, '.wbody');
    console.log(`worker table: first render ${table.firstRenderMs} ms, longest task while scrolling ${table.longestTaskMs} ms (0: none over 50 ms), longest frame ${table.longestFrameMs} ms over ${table.frames} frames`);
    const wall = await measureView(page, `${hub.url}/#/wall`, '.view-wall .count', `of ${n * lanes} lanes`, '.view-wall');
    console.log(`lane wall: first render ${wall.firstRenderMs} ms, longest task while scrolling ${wall.longestTaskMs} ms, longest frame ${wall.longestFrameMs} ms over ${wall.frames} frames`);
    const out = path.join(import.meta.dirname, 'results');
    fs.mkdirSync(out, { recursive: true });
    fs.writeFileSync(path.join(out, 'console-scale.json'), JSON.stringify({ workers: n, lanes, table, wall, at: new Date().toISOString() }, null, 2));
  } finally {
    await browser.close();
    await Promise.all(agents.map((a) => a.stop().catch(() => {})));
    await hub.stop();
  }
}

await main();
