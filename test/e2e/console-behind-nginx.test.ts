// The console behind nginx with two hubs: requests go round robin, yet the header names one
// hub (the one holding the console's live feed) and says any of the two answers; the favicon
// is served instead of a 404.
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureConsoleBuilt } from '../harness/console-build.ts';
import { startFleet, type Fleet } from '../harness/fleet.ts';
import { NGINX_BIN } from '../harness/nginx.ts';
import { findOverflows } from '../harness/page-layout.ts';
import { requireServices } from '../harness/services.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const ARTIFACTS = path.join(ROOT, 'test-artifacts');
const CHROMIUM = process.env.PAPRIKA_CHROMIUM ?? '/usr/bin/chromium';
const run = requireServices(['postgres', 'redis']) && fs.existsSync(CHROMIUM) && Boolean(NGINX_BIN);

describe.skipIf(!run)('console behind nginx, two hubs', () => {
  let fleet: Fleet;
  let browser: Browser;

  beforeAll(async () => {
    await ensureConsoleBuilt();
    fleet = await startFleet({ hubs: 2, agents: 2, lanes: 1 });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await fleet?.stop();
  });

  it('names the hub of its live feed, steadily, and says any of the two answers', async () => {
    // Round robin really alternates: two GETs of /healthz name both hubs.
    const answered = new Set<string>();
    for (let i = 0; i < 4; i++) answered.add(((await (await fetch(`${fleet.nginx.url}/healthz`)).json()) as { hub_id: string }).hub_id);
    expect(answered.size).toBe(2);

    const page = await browser.newPage({ viewport: { width: 1024, height: 768 } });
    const notFound: string[] = [];
    page.on('response', (r) => r.status() === 404 && notFound.push(r.url()));
    let socketsOpened = 0;
    page.on('websocket', () => socketsOpened++);
    try {
      await page.goto(`${fleet.nginx.url}/`);
      const ident = page.locator('[data-testid="hub-ident"]');
      await expect.poll(() => ident.textContent(), { timeout: 15_000 }).toMatch(/ · 2 hubs live/);
      const first = (await ident.textContent())!.split(' · ')[0];
      expect(fleet.hubs.map((h) => h.id)).toContain(first);
      expect(await ident.getAttribute('title')).toContain('Any of the 2 live hubs answers');
      // Several polls and snapshots later (round robin under them), the same hub is named.
      for (let i = 0; i < 2; i++) {
        await page.waitForResponse((r) => r.url().includes('/admin/stats'), { timeout: 15_000 });
        expect((await ident.textContent())!.split(' · ')[0]).toBe(first);
      }
      // One live feed through nginx the whole time (a refused socket fell back to round-robin polling, and the name flipped).
      expect(socketsOpened).toBe(1);
      expect(await page.locator('[data-testid="connection-banner"]').count()).toBe(0);
      expect(await findOverflows(page)).toEqual([]);
      fs.mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: path.join(ARTIFACTS, 'workers-behind-nginx-1024x768.png') });
      const icon = await fetch(`${fleet.nginx.url}/favicon.ico`);
      expect(icon.status).toBe(200);
      expect(icon.headers.get('content-type')).toContain('image/svg+xml');
      expect(notFound).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
