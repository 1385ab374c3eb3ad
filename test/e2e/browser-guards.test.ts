// In a real headless Chromium (finding 6 and the console's headers): a page of another origin
// cannot cancel a job on a tokenless hub with a no-cors POST nor open its event stream, and
// the console served by a hub runs under its Content-Security-Policy without a violation,
// its live feed authenticated by a subprotocol instead of a token in the URL.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimAgent, type SimAgent } from '../harness/agents.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { json } from '../harness/http.ts';
import { waitFor } from '../harness/processes.ts';

const CHROMIUM = process.env.PAPRIKA_CHROMIUM ?? '/usr/bin/chromium';
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DIST_INDEX = path.join(ROOT, 'renderer/dist/index.html');

describe.skipIf(!fs.existsSync(CHROMIUM))('browser guards in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    if (!fs.existsSync(DIST_INDEX)) {
      const { build } = await import('vite');
      await build({ configFile: path.join(ROOT, 'renderer/vite.config.ts'), logLevel: 'warn' });
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
  });

  describe('a page of another origin against a tokenless hub', () => {
    let h: TestHub;
    let sim: SimAgent;
    let site: http.Server;
    let sitePort: number;
    beforeAll(async () => {
      h = await startTestHub({});
      sim = await startSimAgent(h.url, 1);
      site = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>elsewhere</title><p>hello'));
      await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
      sitePort = (site.address() as { port: number }).port;
    });
    afterAll(async () => {
      await new Promise((r) => site?.close(r));
      await sim?.stop();
      await h?.stop();
    });

    it.each(['127.0.0.1', 'localhost'])('cannot cancel a job or open the event stream from http://%s:<other port>', async (siteHost) => {
      const job = await fetch(`${h.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'sleep', spec: { ms: 600_000 } }) }).then(json);
      expect(job.status).toBe('running');
      const page = await browser.newPage();
      try {
        await page.goto(`http://${siteHost}:${sitePort}/`);
        const outcome = await page.evaluate(
          async ({ hubUrl, id }) => {
            // An opaque answer comes back either way; the hub must have refused it.
            const post = await fetch(`${hubUrl}/jobs/${id}/cancel`, { method: 'POST', mode: 'no-cors' }).then(
              (r) => r.type,
              (e) => `error ${e}`,
            );
            const socket = await new Promise<string>((resolve) => {
              const ws = new WebSocket(`${hubUrl.replace('http', 'ws')}/admin/events`);
              ws.onopen = () => resolve('open');
              ws.onerror = () => resolve('refused');
            });
            return { post, socket };
          },
          { hubUrl: h.url, id: job.id },
        );
        expect(outcome.socket).toBe('refused');
        expect(outcome.post).not.toMatch(/^error/); // the request did reach the hub
        expect((await fetch(`${h.url}/jobs/${job.id}`).then(json)).status).toBe('running');
      } finally {
        await page.close();
        await fetch(`${h.url}/jobs/${job.id}/cancel`, { method: 'POST' });
      }
    });
  });

  it('runs the console under its policy with no violation; the live feed needs no token in its URL', async () => {
    const h = await startTestHub({ PAPRIKA_ADMIN_TOKEN: 'adm-t', PAPRIKA_BIND: '127.0.0.1', PAPRIKA_HEARTBEAT_S: '0.2' });
    const sim = await startSimAgent(h.url, 1, { heartbeatS: 0.2 });
    const page = await browser.newPage();
    try {
      const violations: string[] = [];
      page.on('console', (m) => /Content Security Policy|Refused to/i.test(m.text()) && violations.push(m.text()));
      page.on('pageerror', (e) => violations.push(String(e)));
      await page.addInitScript(() => {
        localStorage.setItem('paprika.adminToken', 'adm-t');
        document.addEventListener('securitypolicyviolation', (e) => console.error(`Refused to: CSP ${e.violatedDirective} ${e.blockedURI}`));
      });
      const sockets: string[] = [];
      let frames = 0;
      page.on('websocket', (ws) => {
        sockets.push(ws.url());
        ws.on('framereceived', () => frames++);
      });
      const res = await page.goto(`${h.url}/`);
      expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
      await page.locator(`[data-testid="worker-row"][data-worker-id="${sim.workerId}"]`).waitFor({ timeout: 15_000 });
      await waitFor('a live-feed frame', async () => frames > 0, 10_000, 20);
      expect(sockets.length).toBeGreaterThan(0);
      for (const url of sockets) expect(new URL(url).searchParams.get('token')).toBeNull();
      expect(violations).toEqual([]);
    } finally {
      await page.close();
      await sim.stop();
      await h.stop();
    }
  }, 60_000);
});
