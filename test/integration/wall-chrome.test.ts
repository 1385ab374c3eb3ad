// The wall on real Chromium: a worker with 2 Chrome lanes, a console watching both; the lane
// running a job whose page keeps changing sends JPEG thumbs (FF D8) that change while it runs,
// the idle lane says idle, and when nobody watches the lanes' screencasts stop.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromePool } from '../../worker-agent/src/chrome/chrome-lane.ts';
import { startSimAgent, type SimAgent } from '../harness/agents.ts';
import { json } from '../harness/http.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { waitFor } from '../harness/wait.ts';
import { openWall, type WallClient } from '../harness/wall-client.ts';

const CHROMIUM = '/usr/bin/chromium';
const haveChrome = fs.existsSync(CHROMIUM);
if (!haveChrome && process.env.CI !== 'true') console.warn(`\n!!! SKIPPING wall-chrome tests: ${CHROMIUM} is missing (apt-get install chromium) !!!\n`);

// A page that repaints several times a second: a counter and a background that changes colour.
const PAGE = `<!doctype html><html><head><title>wall</title></head><body style="margin:0;font:64px sans-serif">
<div id="n">0</div><script>let n = 0; setInterval(() => { n++; document.getElementById('n').textContent = n; document.body.style.background = 'hsl(' + (n * 37 % 360) + ',70%,60%)'; }, 150);</script>
</body></html>`;

describe.skipIf(!haveChrome && process.env.CI !== 'true')('lane wall on real Chromium', () => {
  let site: http.Server;
  let siteUrl: string;
  let h: TestHub;
  let agent: SimAgent;
  let wall: WallClient;

  beforeAll(async () => {
    site = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE));
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    h = await startTestHub({ PAPRIKA_ASSIGN_WAIT_S: '20' });
    agent = await startSimAgent(h.url, 2, { pool: chromePool({ lanes: 2, chromePath: CHROMIUM, singleChrome: false }) });
  }, 90_000);
  afterAll(async () => {
    wall?.close();
    await agent?.stop();
    await h?.stop();
    site?.closeAllConnections();
    site?.close();
  });

  it("a watched lane running a job sends JPEG thumbs that change while its page changes; the other lane is idle", async () => {
    wall = await openWall(h.url);
    wall.watch([0, 1].map((lane) => ({ worker_id: agent.workerId, lane })));
    await waitFor('both lanes followed', async () => agent.agent.thumbs.lanes.join() === '0,1');
    await waitFor('both lanes idle', async () => wall.thumbs(agent.workerId, 0).some((t) => t.idle) && wall.thumbs(agent.workerId, 1).some((t) => t.idle), 20_000);
    const job = await fetch(`${h.url}/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'macro', spec: { steps: [{ op: 'goto', url: `${siteUrl}/` }, { op: 'eval', expression: 'new Promise(r => setTimeout(() => r(1), 8000))' }] } }),
    }).then(json);
    expect(job.status).toBe('running');
    // (an object: lane 0 would read as "not yet")
    const { lane } = await waitFor('a lane with JPEG thumbs', async () => [0, 1].map((l) => ({ lane: l })).find(({ lane: l }) => wall.thumbs(agent.workerId, l).filter((t) => t.jpeg).length >= 3), 30_000);
    const frames = wall.thumbs(agent.workerId, lane).filter((t) => t.jpeg);
    for (const t of frames) expect(Buffer.from(t.jpeg, 'base64').subarray(0, 2).toString('hex')).toBe('ffd8');
    expect(new Set(frames.map((t) => t.jpeg)).size).toBeGreaterThanOrEqual(2); // the screen changed between thumbs
    for (let i = 1; i < frames.length; i++) expect(frames[i].at - frames[i - 1].at).toBeGreaterThanOrEqual(900);
    expect(wall.thumbs(agent.workerId, 1 - lane).every((t) => t.idle)).toBe(true);
    // Small: a 320×200 thumbnail, well under the limit.
    expect(Math.max(...frames.map((t) => t.jpeg.length))).toBeLessThan(60_000);
    wall.watch([]);
    await waitFor('screencasts stopped', async () => agent.agent.thumbs.lanes.length === 0);
    await waitFor('job done', async () => (await fetch(`${h.url}/jobs/${job.id}`).then(json)).status === 'succeeded', 30_000);
  }, 90_000);
});
