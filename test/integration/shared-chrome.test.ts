// `--shared-chrome` on real Chromium: two lanes run their jobs at once in one browser, each in a
// context of its own that sees nothing of the other's; a SIGKILLed shared Chrome fails both
// lanes' running jobs as a crash, is relaunched once for both, and the next jobs succeed; a due
// recycle waits for the running job instead of cutting it off, and holds new work back meanwhile.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MacroStep, RunnableJob } from '../../hub-core/src/wire/job-spec.ts';
import { chromePool, type ChromePool } from '../../worker-agent/src/chrome/chrome-lane.ts';
import type { JobContext } from '../../worker-agent/src/lanes/lane.ts';
import { nextEvent, waitFor } from '../harness/wait.ts';

const CHROMIUM = '/usr/bin/chromium';
const haveChrome = fs.existsSync(CHROMIUM);
if (!haveChrome && process.env.CI !== 'true') console.warn(`\n!!! SKIPPING shared-chrome tests: ${CHROMIUM} is missing !!!\n`);

function ctx(ms = 30_000): JobContext {
  return { jobId: `job-${Math.random().toString(36).slice(2)}`, deadline: Date.now() + ms, signal: new AbortController().signal };
}

/** A macro that opens `path`, then waits for `/hold?tag` to be answered. */
function heldMacro(base: string, path: string, tag: string, more: MacroStep[] = []): RunnableJob {
  return {
    kind: 'macro',
    spec: {
      steps: [
        { op: 'goto', url: `${base}${path}` },
        { op: 'eval', expression: `fetch('/hold?${tag}').then((r) => r.text())`, name: 'held' },
        ...more,
      ],
    },
  };
}

describe.skipIf(!haveChrome && process.env.CI !== 'true')('lanes sharing one Chrome (--shared-chrome)', () => {
  let server: http.Server;
  let base: string;
  let pool: ChromePool;
  const held = new Map<string, http.ServerResponse>();
  const cookies: Array<{ url: string; cookie: string | undefined }> = [];

  const release = (tag: string) => {
    held.get(tag)?.end('released');
    held.delete(tag);
  };
  // The server's own handler runs first: once this event is seen, `held` has the request.
  const marked = (tag: string) => nextEvent(server, 'request', `the job ${tag} to reach its hold`, (req: http.IncomingMessage) => req.url === `/hold?${tag}`, 30_000);

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      cookies.push({ url: req.url ?? '', cookie: req.headers.cookie });
      const html = (body: string, headers: Record<string, string> = {}) => res.writeHead(200, { 'content-type': 'text/html', ...headers }).end(`<!doctype html><title>t</title>${body}`);
      if (req.url?.startsWith('/hold?')) return void held.set(req.url.slice('/hold?'.length), res);
      if (req.url === '/set') return html(`<script>document.cookie = 'js=1; path=/'; localStorage.setItem('k', 'v');</script>`, { 'set-cookie': 'sid=secret; HttpOnly; Path=/' });
      html('<h1>plain</h1>');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    pool = chromePool({ lanes: 2, chromePath: CHROMIUM, singleChrome: false, sharedChrome: true, recycleJobs: 1_000, hangTimeoutMs: 5000 });
    await pool.start();
  }, 60_000);

  afterAll(async () => {
    for (const tag of [...held.keys()]) release(tag);
    await pool?.stop();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('both lanes run on one browser process, and run their jobs at the same time', async () => {
    expect(pool.lanes[0].pid).toBeDefined();
    expect(pool.lanes[1].pid).toBe(pool.lanes[0].pid);
    // Each job waits at /hold until both have reached it: only jobs running at once can finish.
    const both = Promise.all([marked('p0'), marked('p1')]).then(() => (release('p0'), release('p1')));
    const outs = await Promise.all([pool.lanes[0].runJob(heldMacro(base, '/plain', 'p0'), ctx()), pool.lanes[1].runJob(heldMacro(base, '/plain', 'p1'), ctx())]);
    await both;
    expect(outs.map((o) => [o.status, o.error])).toEqual([
      ['succeeded', undefined],
      ['succeeded', undefined],
    ]);
  });

  it('a job on the other lane, running at the same time or after, sees none of its cookies or storage', async () => {
    const reached = marked('iso');
    const first = pool.lanes[0].runJob(heldMacro(base, '/set', 'iso', [{ op: 'eval', expression: 'document.cookie', name: 'cookie' }]), ctx());
    await reached; // job A has its cookie and localStorage and is still running
    const probe: RunnableJob = {
      kind: 'macro',
      spec: {
        steps: [
          { op: 'goto', url: `${base}/plain?probe` },
          { op: 'eval', expression: "[document.cookie, localStorage.getItem('k')]", name: 'state' },
        ],
      },
    };
    const during = await pool.lanes[1].runJob(probe, ctx());
    release('iso');
    const a = await first;
    expect(a.error).toBeUndefined();
    expect((a.result as { values: { cookie: string } }).values.cookie).toBe('js=1');
    expect((during.result as { values: { state: unknown } }).values.state).toEqual(['', null]);
    const after = await pool.lanes[1].runJob(probe, ctx());
    expect((after.result as { values: { state: unknown } }).values.state).toEqual(['', null]);
    // The server never saw job A's cookie on a probe's request.
    expect(cookies.filter((c) => c.url === '/plain?probe').map((c) => c.cookie)).toEqual([undefined, undefined]);
  });

  it('a SIGKILLed shared Chrome fails both running jobs as a crash, is relaunched once, and both lanes run again', async () => {
    const pidBefore = pool.lanes[0].pid!;
    const crashesBefore = pool.recycles!().crash;
    const reached = Promise.all([marked('k0'), marked('k1')]);
    const running = [pool.lanes[0].runJob(heldMacro(base, '/plain', 'k0'), ctx()), pool.lanes[1].runJob(heldMacro(base, '/plain', 'k1'), ctx())];
    await reached;
    process.kill(pidBefore, 'SIGKILL');
    const outs = await Promise.all(running);
    for (const out of outs) {
      expect(out.status).toBe('failed');
      expect(out.error).toMatch(/^chrome crashed: browser process exited \(SIGKILL\)/);
    }
    held.clear();
    const next = await Promise.all(pool.lanes.map((l) => l.runJob({ kind: 'fetch', spec: { url: `${base}/plain` } }, ctx())));
    expect(next.map((o) => o.status)).toEqual(['succeeded', 'succeeded']);
    expect(pool.lanes[0].pid).not.toBe(pidBefore);
    expect(pool.lanes[1].pid).toBe(pool.lanes[0].pid);
    expect(pool.recycles!().crash).toBe(crashesBefore + 1); // one browser, one restart
  });
});

describe.skipIf(!haveChrome && process.env.CI !== 'true')('recycling a shared Chrome', () => {
  let server: http.Server;
  let base: string;
  let pool: ChromePool;
  const held = new Map<string, http.ServerResponse>();
  const requested: string[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      requested.push(req.url ?? '');
      if (req.url?.startsWith('/hold?')) return void held.set(req.url.slice('/hold?'.length), res);
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>t</title>');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // Recycled after 2 lanes × 1 job = 2 finished jobs.
    pool = chromePool({ lanes: 2, chromePath: CHROMIUM, singleChrome: false, sharedChrome: true, recycleJobs: 1 });
    await pool.start();
  }, 60_000);

  afterAll(async () => {
    for (const res of held.values()) res.end();
    await pool?.stop();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('a due recycle waits for the running job, holds new work back, then runs it on the new browser', async () => {
    const [lane0, lane1] = pool.lanes;
    const pidBefore = lane0.pid!;
    const reached = nextEvent(server, 'request', 'the long job to reach its hold', (req: http.IncomingMessage) => req.url === '/hold?long', 30_000);
    const long = lane0.runJob(heldMacro(base, '/', 'long'), ctx());
    await reached;
    // Two more jobs on the browser make the recycle due while the long one still runs.
    for (let i = 0; i < 2; i++) expect((await lane1.runJob({ kind: 'fetch', spec: { url: `${base}/` } }, ctx())).status).toBe('succeeded');
    expect(lane1.browserHost.draining).toBe(true);
    const third = lane1.runJob({ kind: 'fetch', spec: { url: `${base}/third` } }, ctx());
    // Held back: the recycle waits for the long job, and the third job waits for the recycle.
    await waitFor('the first job to have released the browser', async () => lane1.browserHost.holding === 1);
    expect(requested).not.toContain('/third');
    expect(lane0.pid).toBe(pidBefore);
    held.get('long')!.end('done');
    held.delete('long');
    expect(await long).toMatchObject({ status: 'succeeded' }); // not cut off by the recycle
    expect(await third).toMatchObject({ status: 'succeeded' });
    expect(lane1.pid).not.toBe(pidBefore);
    expect(pool.recycles!()).toEqual({ jobs: 1, rss: 0, crash: 0 });
    await waitFor('both lanes idle on the new browser', async () => (await Promise.all(pool.lanes.map((l) => l.idle())), true));
    expect(lane0.pid).toBe(lane1.pid);
  });
});
