// The console's views against a live hub and workers, in headless Chromium at 1440×900 and
// 1024×768: the charts draw inside their plots with unique ticks, and no view has an element
// sticking out of its container. Screenshots of every view land in test-artifacts/.
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimAgents } from '../harness/agents.ts';
import { ensureConsoleBuilt } from '../harness/console-build.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { chartGeometry, findOverflows } from '../harness/page-layout.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const ARTIFACTS = path.join(ROOT, 'test-artifacts');
const CHROMIUM = process.env.PAPRIKA_CHROMIUM ?? '/usr/bin/chromium';
const SIZES = [
  { width: 1440, height: 900 },
  { width: 1024, height: 768 },
];

type Agents = Awaited<ReturnType<typeof startSimAgents>>;

async function submit(hubUrl: string, body: unknown): Promise<{ id: string }> {
  const res = await fetch(`${hubUrl}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string };
}

async function waitEnded(hubUrl: string, id: string): Promise<string> {
  for (;;) {
    const job = (await (await fetch(`${hubUrl}/jobs/${id}`)).json()) as { status: string };
    if (['succeeded', 'failed', 'canceled'].includes(job.status)) return job.status;
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe.skipIf(!fs.existsSync(CHROMIUM))('console views at operator screen sizes', () => {
  let hub: TestHub;
  let agents: Agents;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    await ensureConsoleBuilt();
    hub = await startTestHub({ PAPRIKA_HEARTBEAT_S: '0.2', PAPRIKA_WORKER_TTL_S: '1' });
    agents = await startSimAgents(hub.url, 3, 2, { heartbeatS: 0.2 });
    // Some finished work for the throughput bars: succeeded and failed (a sleep past its timeout).
    const jobs = await Promise.all([...Array.from({ length: 6 }, () => submit(hub.url, { kind: 'sleep', spec: { ms: 20 } })), submit(hub.url, { kind: 'sleep', spec: { ms: 5000, timeout_s: 1 } })]);
    await Promise.all(jobs.map((j) => waitEnded(hub.url, j.id)));
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: SIZES[0] });
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    fs.mkdirSync(ARTIFACTS, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await agents?.stopAll().catch(() => {});
    await hub?.stop();
  });

  for (const size of SIZES) {
    for (const range of ['15m', '1h', '24h']) {
      it(`charts at ${size.width}×${size.height}, ${range}: bars inside the plot, tick labels unique, units on the axes`, async () => {
        await page.setViewportSize(size);
        await page.goto(`${hub.url}/#/charts`);
        await page.click(`[data-testid="range-${range}"]`);
        await page.locator('[data-testid="chart-throughput"] .recharts-bar-rectangle').first().waitFor({ timeout: 15_000 });
        const charts = await chartGeometry(page);
        expect(charts.map((c) => c.chart).sort()).toEqual(['chart-lanes', 'chart-queue', 'chart-throughput', 'chart-utilisation']);
        for (const c of charts) {
          expect(c.outside, c.chart).toEqual([]);
          expect(c.tickLabels.length, c.chart).toBeGreaterThanOrEqual(3);
          expect(new Set(c.tickLabels).size, `${c.chart}: ${c.tickLabels.join(' ')}`).toBe(c.tickLabels.length);
        }
        expect(charts.find((c) => c.chart === 'chart-throughput')!.bars).toBeGreaterThan(0);
        // Every y axis names its unit; lanes and percent are on different charts.
        const units = { throughput: ['jobs'], queue: ['queued jobs', 'oldest age (s)'], lanes: ['lanes'], utilisation: ['% of capacity'] };
        for (const [id, want] of Object.entries(units)) {
          const labels = await page.locator(`[data-testid="chart-${id}"] .recharts-label`).allTextContents();
          expect(labels.sort(), id).toEqual([...want, 'local time'].sort());
        }
        expect(await findOverflows(page)).toEqual([]);
        await page.screenshot({ path: path.join(ARTIFACTS, `charts-${range}-${size.width}x${size.height}.png`) });
      });
    }
  }

  it('left no page errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
