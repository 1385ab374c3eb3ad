// The admin console end to end: a hub with three simulated agents, the console in headless
// Chromium. Drain from the table reaches the scheduler; a killed agent turns offline live.
// Then hubs with PAPRIKA_API_TOKEN and PAPRIKA_ADMIN_TOKEN: the console sends each route
// group its own token, and asks once when both are the same.
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimAgents } from '../harness/agents.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { waitFor } from '../harness/wait.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DIST_INDEX = path.join(ROOT, 'renderer/dist/index.html');
const ARTIFACTS = path.join(ROOT, 'test-artifacts');
const CHROMIUM = process.env.PAPRIKA_CHROMIUM ?? '/usr/bin/chromium';
const TERMINAL = new Set(['succeeded', 'failed', 'canceled']);

type Agents = Awaited<ReturnType<typeof startSimAgents>>;
interface JobJson {
  id: string;
  status: string;
  worker_id: string | null;
}

/** Every hub serves renderer/dist: build it once if this checkout has not. */
async function ensureConsoleBuilt(): Promise<void> {
  if (fs.existsSync(DIST_INDEX)) return;
  const { build } = await import('vite');
  await build({ configFile: path.join(ROOT, 'renderer/vite.config.ts'), logLevel: 'warn' });
}

async function runSleepJob(hubUrl: string, apiToken?: string): Promise<JobJson> {
  const auth: Record<string, string> = apiToken ? { authorization: `Bearer ${apiToken}` } : {};
  const res = await fetch(`${hubUrl}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body: JSON.stringify({ kind: 'sleep', spec: { ms: 50 } }) });
  expect(res.status).toBe(201);
  const { id } = (await res.json()) as JobJson;
  return waitFor(`job ${id} to end`, async () => {
    const job = (await (await fetch(`${hubUrl}/jobs/${id}`, { headers: auth })).json()) as JobJson;
    return TERMINAL.has(job.status) ? job : undefined;
  }, 10_000, 25);
}

describe.skipIf(!fs.existsSync(CHROMIUM))('admin console against a live hub', () => {
  let hub: TestHub;
  let agents: Agents;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  const row = (id: string): Locator => page.locator(`[data-testid="worker-row"][data-worker-id="${id}"]`);

  beforeAll(async () => {
    await ensureConsoleBuilt();
    hub = await startTestHub({ PAPRIKA_HEARTBEAT_S: '0.2', PAPRIKA_WORKER_TTL_S: '1' });
    agents = await startSimAgents(hub.url, 3, 2, { heartbeatS: 0.2 });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1480, height: 800 } });
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    await page.goto(`${hub.url}/`);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await agents?.stopAll().catch(() => {});
    await hub?.stop();
  });

  it('lists the three workers with disk use and in-flight load', async () => {
    await expect.poll(() => page.locator('[data-testid="worker-row"]').count(), { timeout: 10_000 }).toBe(3);
    for (const a of agents.agents) {
      const r = row(a.workerId);
      await expect.poll(() => r.locator('[data-testid="worker-alive"]').textContent(), { timeout: 5000 }).toBe('alive');
      await expect.poll(() => r.locator('[data-testid="worker-disk"]').textContent(), { timeout: 5000 }).toMatch(/^\d+%$/);
      expect(await r.locator('[data-testid="worker-inflight"]').textContent()).toMatch(/^\d+\/2$/);
    }
  });

  it('drains a worker from the table, and new jobs go to the other two', async () => {
    const drained = agents.agents[0].workerId;
    const patched = page.waitForResponse((res) => res.request().method() === 'PATCH' && res.url().endsWith(`/admin/workers/${drained}`));
    await row(drained).locator('[data-testid="set-drain"]').click();
    // A busy worker asks first; an idle one is drained at once.
    const confirm = page.locator('[data-testid="confirm-yes"]');
    if (await confirm.isVisible().catch(() => false)) await confirm.click();
    expect((await patched).status()).toBe(200);
    await expect.poll(() => row(drained).locator('[data-testid="worker-status"]').textContent(), { timeout: 5000 }).toContain('drain');

    const jobs: JobJson[] = [];
    for (let i = 0; i < 6; i++) jobs.push(await runSleepJob(hub.url));
    expect(jobs.map((j) => j.status)).toEqual(Array(6).fill('succeeded'));
    const others = new Set(agents.agents.slice(1).map((a) => a.workerId));
    for (const j of jobs) expect(others.has(j.worker_id!)).toBe(true);

    fs.mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'console.png') });
  });

  it('marks a killed agent offline within the TTL, without a reload', async () => {
    await page.evaluate(() => ((window as unknown as { __sameDocument: boolean }).__sameDocument = true));
    const victim = agents.agents[1];
    await victim.kill();
    // The TTL (1 s) lapses and the live feed brings the change: the row turns offline in the
    // same document while its neighbour stays alive (the bound only ends a failed wait).
    await expect.poll(() => row(victim.workerId).locator('[data-testid="worker-alive"]').textContent(), { timeout: 15_000, interval: 100 }).toBe('offline');
    expect(await page.evaluate(() => (window as unknown as { __sameDocument?: boolean }).__sameDocument)).toBe(true);
    expect(await row(agents.agents[2].workerId).locator('[data-testid="worker-alive"]').textContent()).toBe('alive');
    expect(pageErrors).toEqual([]);
  });
});

describe.skipIf(!fs.existsSync(CHROMIUM))('admin console against a hub with API and admin tokens', () => {
  let browser: Browser;
  const prompt = (page: Page, scope: 'admin' | 'api'): Locator => page.locator(`[data-testid="token-prompt"][data-token-scope="${scope}"]`);
  const jobRow = (page: Page, id: string): Locator => page.locator(`[data-testid="job-row"][data-job-id="${id}"]`);

  /** A hub with these tokens (on loopback: tokens would bind it to 0.0.0.0), one agent and one finished job. */
  async function hubWithJob(tokens: { api: string; admin: string }) {
    const hub = await startTestHub({ PAPRIKA_API_TOKEN: tokens.api, PAPRIKA_ADMIN_TOKEN: tokens.admin, PAPRIKA_BIND: '127.0.0.1', PAPRIKA_HEARTBEAT_S: '0.2' });
    const agents = await startSimAgents(hub.url, 1, 1, { heartbeatS: 0.2 });
    // Finished before the console opens: only GET /jobs can show it, not a live job event.
    const job = await runSleepJob(hub.url, tokens.api);
    expect(job.status).toBe('succeeded');
    return { hub, agents, job };
  }

  /** Which bearer each hub call carried, by path group. */
  function recordBearers(page: Page): { jobs: Set<string>; admin: Set<string> } {
    const seen = { jobs: new Set<string>(), admin: new Set<string>() };
    page.on('request', (req) => {
      const p = new URL(req.url()).pathname;
      const bearer = req.headers().authorization ?? '(none)';
      if (p.startsWith('/jobs')) seen.jobs.add(bearer);
      else if (p.startsWith('/admin/') && p !== '/admin/events') seen.admin.add(bearer);
    });
    return seen;
  }

  beforeAll(async () => {
    await ensureConsoleBuilt();
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('asks for the admin token, then the API token, lists and opens a job, and keeps both across a reload', async () => {
    const { hub, agents, job } = await hubWithJob({ api: 'api-t', admin: 'admin-t' });
    const page = await browser.newPage({ viewport: { width: 1480, height: 800 } });
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    const bearers = recordBearers(page);
    try {
      await page.goto(`${hub.url}/#/jobs`);
      await prompt(page, 'admin').waitFor({ timeout: 10_000 });
      expect(await prompt(page, 'admin').textContent()).toContain('Admin token (PAPRIKA_ADMIN_TOKEN)');
      await page.fill('[data-testid="token-input"]', 'admin-t');
      await page.click('[data-testid="token-save"]');

      // The admin token opens /admin/* but the hub refuses it on /jobs: now the API token.
      await prompt(page, 'api').waitFor({ timeout: 10_000 });
      expect(await prompt(page, 'api').textContent()).toContain('API token (PAPRIKA_API_TOKEN)');
      // An operator without the API token can put the question off; the Jobs view offers it again.
      await page.click('[data-testid="token-skip"]');
      await page.locator('[data-testid="api-token-needed"]').waitFor({ timeout: 5000 });
      expect(await page.locator('[data-testid="token-prompt"]').count()).toBe(0);
      await page.click('[data-testid="api-token-ask"]');
      await prompt(page, 'api').waitFor({ timeout: 5000 });
      await page.fill('[data-testid="token-input"]', 'api-t');
      await page.click('[data-testid="token-save"]');

      await jobRow(page, job.id).waitFor({ timeout: 10_000 });
      expect(await page.locator('[data-testid="token-prompt"]').count()).toBe(0);
      await jobRow(page, job.id).click();
      await expect.poll(() => page.locator('[data-testid="job-detail"] .facts .pill').textContent(), { timeout: 5000 }).toBe('succeeded');
      await page.click('[data-testid="tab-workers"]');
      await expect.poll(() => page.locator('[data-testid="worker-row"]').count(), { timeout: 10_000 }).toBe(1);
      expect(bearers.admin.has('Bearer admin-t')).toBe(true);
      expect(bearers.admin.has('Bearer api-t')).toBe(false);
      expect(bearers.jobs.has('Bearer api-t')).toBe(true);

      // Both tokens are kept in the browser: a reload asks for neither.
      await page.click('[data-testid="tab-jobs"]');
      await page.reload();
      await jobRow(page, job.id).waitFor({ timeout: 10_000 });
      expect(await page.locator('[data-testid="token-prompt"]').count()).toBe(0);
      expect(pageErrors).toEqual([]);
    } finally {
      await page.close();
      await agents.stopAll().catch(() => {});
      await hub.stop();
    }
  });

  it('asks only once when the API and admin tokens are the same', async () => {
    const { hub, agents, job } = await hubWithJob({ api: 'same-t', admin: 'same-t' });
    const page = await browser.newPage({ viewport: { width: 1480, height: 800 } });
    const bearers = recordBearers(page);
    let apiAsked = false;
    try {
      await page.goto(`${hub.url}/#/jobs`);
      await prompt(page, 'admin').waitFor({ timeout: 10_000 });
      void prompt(page, 'api')
        .waitFor({ timeout: 15_000 })
        .then(() => (apiAsked = true), () => {});
      await page.fill('[data-testid="token-input"]', 'same-t');
      await page.click('[data-testid="token-save"]');
      await jobRow(page, job.id).waitFor({ timeout: 10_000 });
      // Past the next jobs poll: still no second question.
      const isJobsPoll = (res: { url(): string; request(): { method(): string } }) => res.request().method() === 'GET' && new URL(res.url()).pathname === '/jobs';
      await page.waitForResponse(isJobsPoll, { timeout: 15_000 });
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))); // its answer rendered
      expect(apiAsked).toBe(false);
      expect(await page.locator('[data-testid="token-prompt"]').count()).toBe(0);
      expect(bearers.jobs.has('Bearer same-t')).toBe(true);
    } finally {
      await page.close();
      await agents.stopAll().catch(() => {});
      await hub.stop();
    }
  });
});
