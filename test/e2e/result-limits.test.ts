// Issue 16, reproductions 3 and 4 with real Chromium: a `paprika worker` process whose eval
// returns 40 MB, or whose full-page screenshot of a long page is over PAPRIKA_MAX_RESULT_BYTES,
// reports `failed: result too large` (naming the screenshot) without losing its link, and its
// next job runs; an eval returning NUL and lone surrogates is stored as succeeded. Real
// Postgres and Redis.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnWorker, type WorkerProcess } from '../harness/agents.ts';
import { realBackends, startTestHub, type TestHub } from '../harness/hub.ts';
import { json, post } from '../harness/http.ts';
import { waitFor } from '../harness/processes.ts';
import { requireServices } from '../harness/services.ts';

const CHROMIUM = '/usr/bin/chromium';
const run = (fs.existsSync(CHROMIUM) || process.env.CI === 'true') && requireServices(['postgres', 'redis']);

// A long page of noise: its full-page PNG cannot compress below the cap.
const LONG_PAGE = `<!doctype html><title>long</title><body style="margin:0"><canvas id="c" width="1200" height="6000"></canvas><script>
const c = document.getElementById('c').getContext('2d'); const img = c.createImageData(1200, 6000);
for (let i = 0; i < img.data.length; i++) img.data[i] = (i % 4 === 3) ? 255 : Math.random() * 256;
c.putImageData(img, 0, 0);</script></body>`;

describe.skipIf(!run)('result limits with a Chrome worker', () => {
  let site: http.Server;
  let siteUrl: string;
  let h: TestHub;
  let drop: () => Promise<void>;
  let worker: WorkerProcess;
  const linkedLines = () => worker.output().split('\n').filter((l) => l.includes('"msg":"linked"')).length;
  const done = (id: string) =>
    waitFor(`job ${id}`, async () => {
      const j = await fetch(`${h.url}/jobs/${id}`).then(json);
      return ['succeeded', 'failed', 'canceled'].includes(j.status) ? j : undefined;
    }, 90_000, 100);
  const macro = (steps: unknown[]) => post(`${h.url}/jobs`, { kind: 'macro', spec: { steps, timeout_s: 80 } });

  beforeAll(async () => {
    site = http.createServer((req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(req.url === '/tiny' ? '<!doctype html><title>tiny</title><p>tiny</p>' : LONG_PAGE));
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
    const b = await realBackends();
    drop = b.drop;
    h = await startTestHub({ ...b.env, PAPRIKA_HEARTBEAT_S: '0.5', PAPRIKA_ASSIGN_WAIT_S: '5' });
    worker = spawnWorker(['--hub', h.url, '--lanes', '1', '--lan-ip', '127.0.32.1', '--chrome', CHROMIUM], { PAPRIKA_HEARTBEAT_S: '0.5', PAPRIKA_MAX_RESULT_BYTES: String(4 * 1024 * 1024) });
    await waitFor('chrome worker linked', async () => h.hub.localLinks.size === 1, 60_000, 100);
  }, 90_000);

  afterAll(async () => {
    await worker?.kill('SIGTERM');
    await h?.stop();
    await drop?.();
    site?.close();
  });

  it('an eval returning 40 MB fails as too large; the link stays, the next job succeeds', async () => {
    const big = await done((await macro([{ op: 'eval', expression: "'x'.repeat(40 * 1024 * 1024)", name: 'big' }])).id);
    expect(big).toMatchObject({ status: 'failed', error: expect.stringMatching(/^result too large: .* over PAPRIKA_MAX_RESULT_BYTES \(4\.0 MB\); its largest part is the value big \(40\.0 MB\)/), result: { failed_step: 1 } });
    const next = await done((await macro([{ op: 'eval', expression: '1 + 1', name: 'two' }])).id);
    expect(next).toMatchObject({ status: 'succeeded', result: { values: { two: 2 } } });
    expect(linkedLines()).toBe(1);
  });

  it('a macro whose values pass the cap only together stops at the step that passes it; the agent lives on', async () => {
    // Each value alone is under the cap; a sum past V8's longest string (three of 190 MB) once
    // crashed the agent when the result was serialised after the last step.
    const steps = ['a', 'b', 'c'].map((name) => ({ op: 'eval', name, expression: `'${name}'.repeat(1.5 * 1024 * 1024)` }));
    const job = await done((await macro(steps)).id);
    expect(job).toMatchObject({ status: 'failed', error: expect.stringMatching(/^result too large: 4\.5 MB is over PAPRIKA_MAX_RESULT_BYTES \(4\.0 MB\); its largest part is the value [abc] \(1\.5 MB\)$/), result: { failed_step: 3 } });
    expect((await done((await macro([{ op: 'eval', expression: '1', name: 'one' }])).id)).status).toBe('succeeded');
    expect(linkedLines()).toBe(1);
  });

  it('a full-page screenshot of a long page over the cap is refused, naming the screenshot', async () => {
    const shot = await done((await macro([{ op: 'goto', url: siteUrl }, { op: 'screenshot', name: 'whole', full_page: true }])).id);
    expect(shot).toMatchObject({ status: 'failed', error: expect.stringMatching(/its largest part is whole\.png \(\d+\.\d MB\): take a smaller screenshot/) });
    const next = await done((await macro([{ op: 'eval', expression: "'ok'", name: 'v' }])).id);
    expect(next.status).toBe('succeeded');
    expect(linkedLines()).toBe(1);
  });

  it('a macro of 120 screenshot steps succeeds with every screenshot stored', async () => {
    // The link once took 100 assets a result: this job's result was refused by the schema and
    // sent again every heartbeat while the job held the lane until its deadline and grace.
    const steps = [{ op: 'goto', url: `${siteUrl}tiny` }, ...Array.from({ length: 120 }, (_, i) => ({ op: 'screenshot', name: `s${i}` }))];
    const job = await done((await macro(steps)).id);
    expect(job.status).toBe('succeeded');
    expect(job.assets).toHaveLength(120);
    const png = Buffer.from(await (await fetch(`${h.url}/jobs/${job.id}/assets/s119.png`)).arrayBuffer());
    expect(png.subarray(1, 4).toString()).toBe('PNG');
  }, 120_000);

  it('an eval returning NUL and lone surrogates is stored as succeeded, the text replaced', async () => {
    const odd = await done((await macro([{ op: 'eval', expression: "({ nul: 'a\\u0000b', lone: 'x\\uD800', ['k\\u0000']: 1 })", name: 'odd' }])).id);
    expect(odd.status).toBe('succeeded');
    expect(odd.result.values.odd).toEqual({ nul: 'a\uFFFDb', lone: 'x\uFFFD', ['k\uFFFD']: 1 });
  });
});
