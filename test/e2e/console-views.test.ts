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

/** Waits for the job's end through the hub's long poll (GET /jobs/:id?wait_s=), at most 60 s. */
async function waitEnded(hubUrl: string, id: string): Promise<string> {
  for (let asked = 0; asked < 6; asked++) {
    const job = (await (await fetch(`${hubUrl}/jobs/${id}?wait_s=10`)).json()) as { status: string };
    if (['succeeded', 'failed', 'canceled'].includes(job.status)) return job.status;
  }
  throw new Error(`job ${id} did not end within 60 s`);
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

  const jobRow = (id: string) => page.locator(`[data-testid="job-row"][data-job-id="${id}"]`);
  const jobStatus = async (id: string) => ((await (await fetch(`${hub.url}/jobs/${id}`)).json()) as { status: string }).status;
  const pollStatus = (id: string, want: string) => expect.poll(() => jobStatus(id), { timeout: 10_000 }).toBe(want);

  it('keeps the jobs filter in the address: a shared link shows the same list', async () => {
    await page.setViewportSize(SIZES[0]);
    await page.goto(`${hub.url}/#/jobs`);
    await page.click('[data-testid="count-failed"]');
    await expect.poll(() => page.evaluate(() => location.hash)).toBe('#/jobs?status=failed');
    await page.fill('input.search', 'sleep');
    await expect.poll(() => page.evaluate(() => location.hash)).toBe('#/jobs?status=failed&q=sleep');
    const shared = await browser.newPage({ viewport: SIZES[1] });
    try {
      await shared.goto(`${hub.url}/#/jobs?status=failed&q=sleep`);
      await shared.locator('[data-testid="job-row"]').first().waitFor({ timeout: 10_000 });
      expect(await shared.locator('[data-testid="count-failed"]').getAttribute('class')).toContain('on');
      expect(await shared.inputValue('input.search')).toBe('sleep');
      const statuses = await shared.locator('[data-testid="job-row"] .pill').allTextContents();
      expect(statuses.length).toBeGreaterThan(0);
      expect(new Set(statuses)).toEqual(new Set(['failed']));
    } finally {
      await shared.close();
    }
  });

  it('reruns a job from its detail pane, and the address names the open job', async () => {
    await page.goto(`${hub.url}/#/jobs?status=succeeded`);
    const first = page.locator('[data-testid="job-row"]').first();
    await first.waitFor({ timeout: 10_000 });
    const sourceId = (await first.getAttribute('data-job-id'))!;
    await first.click();
    await expect.poll(() => page.evaluate(() => location.hash)).toBe(`#/jobs?status=succeeded&job=${sourceId}`);
    await page.click('[data-testid="job-rerun"]');
    await expect.poll(() => page.locator('[data-testid="job-detail"] h2').textContent(), { timeout: 10_000 }).not.toBe(sourceId);
    const newId = (await page.locator('[data-testid="job-detail"] h2').textContent())!;
    await pollStatus(newId, 'succeeded');
    const rerun = (await (await fetch(`${hub.url}/jobs/${newId}`)).json()) as { kind: string; spec: { job_id: string } };
    expect(rerun).toMatchObject({ kind: 'rerun', spec: { job_id: sourceId } });
    for (const size of SIZES) {
      await page.setViewportSize(size);
      await page.screenshot({ path: path.join(ARTIFACTS, `jobs-detail-${size.width}x${size.height}.png`) });
      expect(await findOverflows(page)).toEqual([]);
    }
  });

  it('asks before cancelling a running job, and does nothing when told no', async () => {
    await page.setViewportSize(SIZES[0]);
    const { id } = await submit(hub.url, { kind: 'sleep', spec: { ms: 60_000 } });
    await pollStatus(id, 'running');
    await page.goto(`${hub.url}/#/jobs?job=${id}`);
    await expect.poll(() => page.locator('[data-testid="job-detail"] .facts .pill').textContent(), { timeout: 10_000 }).toBe('running');
    await page.click('[data-testid="job-cancel"]');
    await page.locator('[data-testid="confirm-dialog"]').waitFor();
    // Two buttons that both said "Cancel" read as the same thing: the one that does nothing says so.
    expect(await page.locator('[data-testid="confirm-no"]').textContent()).toBe('Keep it running');
    expect(await page.locator('[data-testid="confirm-yes"]').textContent()).toBe('Cancel the job');
    await page.click('[data-testid="confirm-no"]');
    expect(await page.locator('[data-testid="confirm-dialog"]').count()).toBe(0);
    expect(await jobStatus(id)).toBe('running');
    // The question is about this job: opening another job closes it.
    const other = await submit(hub.url, { kind: 'sleep', spec: { ms: 60_000 } });
    await page.click('[data-testid="job-cancel"]');
    await page.locator('[data-testid="confirm-dialog"]').waitFor();
    await page.goto(`${hub.url}/#/jobs?job=${other.id}`);
    await expect.poll(() => page.locator('[data-testid="confirm-dialog"]').count(), { timeout: 10_000 }).toBe(0);
    await page.goto(`${hub.url}/#/jobs?job=${id}`);
    await expect.poll(() => page.locator('[data-testid="job-detail"] .facts .pill').textContent(), { timeout: 10_000 }).toBe('running');
    await page.click('[data-testid="job-cancel"]');
    await page.click('[data-testid="confirm-yes"]');
    await pollStatus(id, 'canceled');
    expect((await fetch(`${hub.url}/jobs/${other.id}/cancel`, { method: 'POST' })).status).toBe(200);
  });

  it('with every worker drained and jobs queued, the queue panel names the filter excluding each worker; the queued jobs cancel in bulk with one confirmation', async () => {
    const ids = agents.agents.map((a) => a.workerId);
    for (const id of ids) {
      const res = await fetch(`${hub.url}/admin/workers/${id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status: 'drain' }) });
      expect(res.status).toBe(200);
    }
    const queued = await Promise.all([0, 1, 2].map(() => submit(hub.url, { kind: 'sleep', spec: { ms: 10 } })));
    for (const q of queued) expect(await jobStatus(q.id)).toBe('queued');
    await page.goto(`${hub.url}/#/jobs?status=queued`);
    const verdict = (id: string) => page.locator(`[data-testid="queue-verdict"][data-worker-id="${id}"]`);
    for (const id of ids) await expect.poll(() => verdict(id).getAttribute('data-excluded-by'), { timeout: 10_000 }).toBe('drain');
    expect(await page.locator('[data-testid="queue-panel"] summary').textContent()).toContain('no worker takes work now');
    expect(await page.locator('[data-testid="queue-by-kind"] tbody tr').allTextContents()).toEqual([expect.stringMatching(/^sleep3/)]);
    // One worker on standby instead: the panel says standby for it, drain for the others.
    await fetch(`${hub.url}/admin/workers/${ids[0]}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status: 'standby' }) });
    await expect.poll(() => verdict(ids[0]).getAttribute('data-excluded-by'), { timeout: 10_000 }).toBe('standby');
    expect(await verdict(ids[1]).getAttribute('data-excluded-by')).toBe('drain');
    for (const size of SIZES) {
      await page.setViewportSize(size);
      expect(await findOverflows(page)).toEqual([]);
      await page.screenshot({ path: path.join(ARTIFACTS, `jobs-queue-${size.width}x${size.height}.png`) });
    }
    await page.locator('[data-testid="job-row"]').first().waitFor();
    await expect.poll(() => page.locator('[data-testid="jobs-cancel-queued"]').textContent(), { timeout: 10_000 }).toContain('Cancel 3 queued');
    await page.click('[data-testid="jobs-cancel-queued"]');
    expect(await page.locator('[data-testid="confirm-dialog"] h2').textContent()).toBe('Cancel 3 queued jobs?');
    await page.click('[data-testid="confirm-yes"]');
    for (const q of queued) await pollStatus(q.id, 'canceled');
    await expect.poll(() => page.locator('[data-testid="jobs-bulk-note"]').textContent()).toContain('Canceled 3 of 3');
    for (const id of ids) await fetch(`${hub.url}/admin/workers/${id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status: 'active' }) });
  });

  it('opens a worker drawer: verdict now, lanes, sparklines, kinds, version, status changes with the old status, last jobs', async () => {
    const id = agents.agents[0].workerId;
    await page.setViewportSize(SIZES[0]);
    await page.goto(`${hub.url}/#/workers`);
    await page.locator(`[data-testid="worker-row"][data-worker-id="${id}"] [data-testid="worker-open"]`).click();
    const drawer = page.locator(`[data-testid="worker-drawer"][data-worker-id="${id}"]`);
    await drawer.locator('[data-testid="drawer-verdict"]').waitFor({ timeout: 10_000 });
    expect(await drawer.locator('[data-testid="drawer-verdict"]').getAttribute('data-excluded-by')).toBe('');
    // The previous test moved it active → drain → standby → active: each entry names the old status.
    await expect.poll(() => drawer.locator('[data-testid="drawer-audit"] li').allTextContents(), { timeout: 10_000 }).toEqual([
      expect.stringContaining('standby → active'),
      expect.stringContaining('drain → standby'),
      expect.stringContaining('active → drain'),
    ]);
    expect(await drawer.locator('[data-testid="drawer-kinds"]').textContent()).toContain('sleep');
    expect(await drawer.locator('[data-testid="drawer-jobs"] tr').count()).toBeGreaterThan(0);
    for (const k of ['disk', 'cpu', 'mem']) await drawer.locator(`[data-testid="spark-${k}"] polyline`).waitFor({ state: "attached", timeout: 10_000 });
    for (const size of SIZES) {
      await page.setViewportSize(size);
      await page.screenshot({ path: path.join(ARTIFACTS, `worker-drawer-${size.width}x${size.height}.png`) });
      expect(await findOverflows(page)).toEqual([]);
    }
    const get = (p: string) => fetch(`${hub.url}${p}`);
    expect([400, 404]).toContain((await get(`/admin/workers/${"a".repeat(200)}/detail`)).status);
    expect([400, 404]).toContain((await get(`/admin/workers/a%2F..%2Fb/detail`)).status);
    expect((await get(`/admin/workers/${id}/detail?x=1`)).status).toBe(400);
    const nobody = (await (await get('/admin/workers/nobody/detail')).json()) as { worker: unknown; verdict: unknown; jobs: unknown[] };
    expect(nobody).toMatchObject({ worker: null, verdict: null, jobs: [] });
  });

  it('shows every lane on the wall with what holds it, grouped by worker, and filters it', async () => {
    await page.setViewportSize(SIZES[0]);
    const long = await Promise.all([0, 1, 2].map(() => submit(hub.url, { kind: 'sleep', spec: { ms: 60_000 } })));
    for (const j of long) await pollStatus(j.id, 'running');
    await page.goto(`${hub.url}/#/wall`);
    await expect.poll(() => page.locator('[data-testid="lane-tile"]').count(), { timeout: 10_000 }).toBe(agents.agents.length * 2);
    expect(await page.locator('[data-testid="wall-worker-group"]').count()).toBe(agents.agents.length);
    for (const j of long) await expect.poll(() => page.locator(`[data-testid="lane-tile"]:has-text("sleep ${j.id.slice(0, 8)}")`).count(), { timeout: 10_000 }).toBe(1);
    await page.selectOption('[data-testid="wall-state"]', 'busy');
    await expect.poll(() => page.locator('[data-testid="lane-tile"]').count()).toBe(3);
    await page.selectOption('[data-testid="wall-state"]', 'idle');
    await expect.poll(() => page.locator('[data-testid="lane-tile"]').count()).toBe(agents.agents.length * 2 - 3);
    await page.selectOption('[data-testid="wall-state"]', '');
    await page.fill('[data-testid="wall-worker"]', agents.agents[0].workerId);
    await expect.poll(() => page.locator('[data-testid="lane-tile"]').count()).toBe(2);
    await page.fill('[data-testid="wall-worker"]', '');
    for (const j of long) await fetch(`${hub.url}/jobs/${j.id}/cancel`, { method: 'POST' });
  });

  it('every view at 1440×900 and 1024×768: screenshot, and nothing sticks out of its container', async () => {
    for (const size of SIZES) {
      await page.setViewportSize(size);
      for (const view of ['workers', 'wall', 'hubs', 'jobs', 'charts']) {
        await page.goto(`${hub.url}/#/${view}`);
        await page.locator('.view').first().waitFor();
        await page.waitForLoadState('networkidle').catch(() => {});
        await page.screenshot({ path: path.join(ARTIFACTS, `view-${view}-${size.width}x${size.height}.png`) });
        expect(await findOverflows(page), `${view} at ${size.width}`).toEqual([]);
      }
    }
  });

  it('left no page errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
