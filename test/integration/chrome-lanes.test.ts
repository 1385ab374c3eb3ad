// Chrome lanes on the real Debian Chromium: fetch, macro, crash and hang recovery, deadlines,
// parallel lanes; with a Chrome per lane (the default) and with both lanes sharing one.
import dgram from 'node:dgram';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunnableJob } from '../../hub-core/src/wire/job-spec.ts';
import { chromePool, type ChromePool } from '../../worker-agent/src/chrome/chrome-lane.ts';
import { findChrome } from '../../worker-agent/src/chrome/find-chrome.ts';
import type { JobContext } from '../../worker-agent/src/lanes/lane.ts';
import { nextEvent } from '../harness/wait.ts';

const CHROMIUM = '/usr/bin/chromium';
const haveChrome = fs.existsSync(CHROMIUM);
if (!haveChrome && process.env.CI !== 'true') console.warn(`\n!!! SKIPPING chrome-lanes tests: ${CHROMIUM} is missing (apt-get install chromium) !!!\n`);

const PAGE = `<!doctype html><html><head><title>Paprika test form</title></head><body>
<h1 id="heading">Hello lanes</h1>
<form><input id="name" name="name" value=""><a id="link" href="/next" data-kind="internal">next</a></form>
</body></html>`;

function ctx(ms = 20_000, controller = new AbortController()): JobContext & { controller: AbortController } {
  return { jobId: `job-${Math.random().toString(36).slice(2)}`, deadline: Date.now() + ms, signal: controller.signal, controller };
}

describe.skipIf(!haveChrome && process.env.CI !== 'true').each([
  { mode: 'a Chrome per lane', sharedChrome: false },
  { mode: 'one shared Chrome', sharedChrome: true },
])('Chrome lanes on real Chromium ($mode)', ({ sharedChrome }) => {
  let server: http.Server;
  let base: string;
  let pool: ChromePool;
  let slowAnswered = 0; // /slow answers sent: a job that ended before one did ended on its abort
  const held: http.ServerResponse[] = []; // /hold requests, answered once both lanes' jobs wait there

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/slow') return void setTimeout(() => (slowAnswered++, res.writeHead(200, { 'content-type': 'text/html' }).end('<title>slow</title>')), 10_000);
      // A macro's "I got this far" (fetched by an eval step): the test waits for the request.
      if (req.url === '/mark') return void res.writeHead(204, { 'access-control-allow-origin': '*' }).end();
      if (req.url === '/hold') {
        held.push(res);
        if (held.length === 2) for (const r of held.splice(0)) r.end('both');
        return;
      }
      // A page of the size asked for (full-page screenshots).
      const tall = /^\/tall\?w=(\d+)&h=(\d+)$/.exec(req.url ?? '');
      if (tall) return void res.writeHead(200, { 'content-type': 'text/html' }).end(`<body style="margin:0"><div style="width:${tall[1]}px;height:${tall[2]}px;background:linear-gradient(red,blue)"></div></body>`);
      res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    pool = chromePool({ lanes: 2, chromePath: CHROMIUM, singleChrome: false, sharedChrome, viewBase: 'http://127.0.0.1:1', hangTimeoutMs: 2000 });
    await pool.start();
  });

  afterAll(async () => {
    await pool?.stop();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('finds the explicit Chrome first and a system one without it', () => {
    expect(findChrome({ explicitPath: CHROMIUM })).toBe(CHROMIUM);
    expect(findChrome({ explicitPath: '/nope/chrome', exists: (f) => f === CHROMIUM })).toBe(CHROMIUM);
    expect(findChrome({ exists: () => false })).toBeUndefined();
  });

  it('reports view URLs per lane', () => {
    expect(pool.lanes.map((l) => l.viewUrl)).toEqual(['http://127.0.0.1:1/lanes/0/view', 'http://127.0.0.1:1/lanes/1/view']);
    const novnc = chromePool({ lanes: 2, chromePath: CHROMIUM, singleChrome: true, novncBase: 'http://vnc.local:6080/' });
    expect(novnc.lanes.map((l) => l.viewUrl)).toEqual(['http://vnc.local:6080/lanes/0']);
  });

  it('fetch returns status, title and a PNG screenshot', async () => {
    const out = await pool.lanes[0].runJob({ kind: 'fetch', spec: { url: `${base}/form`, screenshot: true } }, ctx());
    expect(out.error).toBeUndefined();
    expect(out.status).toBe('succeeded');
    expect(out.result).toMatchObject({ status_code: 200, title: 'Paprika test form', final_url: `${base}/form` });
    expect((out.result as { html_bytes: number }).html_bytes).toBeGreaterThan(100);
    expect(out.assets?.map((a) => [a.name, a.content_type])).toEqual([['screenshot.png', 'image/png']]);
    const png = Buffer.from(out.assets![0].data_base64, 'base64');
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  });

  it('macro types into the input and extracts values, attributes and eval results', async () => {
    const job: RunnableJob = {
      kind: 'macro',
      spec: {
        steps: [
          { op: 'goto', url: `${base}/form` },
          { op: 'type', selector: '#name', text: 'Ada Lovelace' },
          { op: 'extract', selector: '#name', property: 'value', name: 'typed' },
          { op: 'extract', selector: '#heading', name: 'heading' },
          { op: 'extract', selector: '#link', attr: 'data-kind', name: 'kind' },
          { op: 'eval', expression: '({ n: document.querySelectorAll("input").length })', name: 'inputs' },
          { op: 'screenshot' },
        ],
      },
    };
    const out = await pool.lanes[1].runJob(job, ctx());
    expect(out.error).toBeUndefined();
    expect(out.result).toEqual({ values: { typed: 'Ada Lovelace', heading: 'Hello lanes', kind: 'internal', inputs: { n: 1 } }, steps: 7 });
    expect(out.assets?.map((a) => a.name)).toEqual(['screenshot-7.png']);
  });

  it("an eval value JSON cannot write fails the job naming why (it succeeded with null); statements, promises and undefined still work", async () => {
    const run = (expression: string) => pool.lanes[1].runJob({ kind: 'macro', spec: { steps: [{ op: 'goto', url: `${base}/form` }, { op: 'eval', expression, name: 'v' }] } }, ctx());
    for (const expression of ['(() => { const a = {}; a.self = a; return a; })()', '(() => { let a = []; for (let i = 0; i < 20000; i++) a = [a]; return a; })()']) {
      const out = await run(expression);
      expect(out.status).toBe('failed');
      expect(out.error).toMatch(/^step 2 \(eval\): the expression's value is not JSON-serialisable: .*(circular|Maximum call stack)/);
    }
    expect((await run('const x = 2; x * 21')).result).toEqual({ values: { v: 42 }, steps: 2 });
    expect((await run('new Promise((r) => setTimeout(() => r({ late: true }), 10))')).result).toEqual({ values: { v: { late: true } }, steps: 2 });
    expect((await run('undefined')).result).toEqual({ values: { v: null }, steps: 2 });
    expect((await run('new Date(0)')).result).toEqual({ values: { v: '1970-01-01T00:00:00.000Z' }, steps: 2 });
  });

  it("a page's WebRTC sends no UDP around the lane's proxy: no STUN packet arrives, no candidate is gathered", async () => {
    // Chrome ignored the flag the lanes had (--force-webrtc-ip-handling-policy): a job's page
    // sent STUN straight to any address, and read the answer back, past every egress rule.
    const udp = dgram.createSocket('udp4');
    let packets = 0;
    udp.on('message', () => packets++);
    await new Promise<void>((r) => udp.bind(0, '127.0.0.1', r));
    try {
      const stun = `stun:127.0.0.1:${udp.address().port}`;
      const gather = `(async () => {
        const pc = new RTCPeerConnection({ iceServers: [{ urls: '${stun}' }] });
        pc.createDataChannel('x');
        const found = [];
        pc.onicecandidate = (e) => e.candidate && found.push(e.candidate.candidate);
        await pc.setLocalDescription(await pc.createOffer());
        // Gathering ends at once without UDP; with it, an unanswered STUN server holds it ~40 s (the bound is for that failure).
        await Promise.race([new Promise((r) => (pc.onicegatheringstatechange = () => pc.iceGatheringState === 'complete' && r())), new Promise((r) => setTimeout(r, 5000))]);
        return found;
      })()`;
      const out = await pool.lanes[0].runJob({ kind: 'macro', spec: { steps: [{ op: 'goto', url: `${base}/form` }, { op: 'eval', expression: gather, name: 'candidates' }] } }, ctx());
      expect(out.error).toBeUndefined();
      expect(out.result).toMatchObject({ values: { candidates: [] } });
      expect(packets).toBe(0);
    } finally {
      udp.close();
    }
  });

  it('a full-page screenshot is the whole page up to 16 MP; a larger page fails the step at once, naming its size (encoding it would stall the browser)', async () => {
    const tall = (w: number, h: number) => `${base}/tall?w=${w}&h=${h}`;
    const shot = (url: string) => pool.lanes[0].runJob({ kind: 'macro', spec: { steps: [{ op: 'goto', url }, { op: 'screenshot', name: 'whole', full_page: true }] } }, ctx());
    const ok = await shot(tall(1000, 3000));
    expect(ok.error).toBeUndefined();
    const png = Buffer.from(ok.assets!.find((a) => a.name === 'whole.png')!.data_base64, 'base64');
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1000, 3000]); // IHDR width, height
    const big = await shot(tall(2000, 30000));
    expect(big.status).toBe('failed');
    expect(big.error).toMatch(/full_page screenshot of 2000 x 30000 px \(60\.0 MP\) is over the limit of 16 MP/);
  });

  it('every screenshot counts against the result cap, same name or not: the macro stops at the step that passes it', async () => {
    const one = await pool.lanes[0].runJob({ kind: 'macro', spec: { steps: [{ op: 'goto', url: `${base}/form` }, { op: 'screenshot', name: 'x' }] } }, ctx());
    const b64 = one.assets![0].data_base64.length;
    // Room for two and a half: the third screenshot named x passes the cap (all of them stay in assets).
    const steps = [{ op: 'goto', url: `${base}/form` }, ...Array.from({ length: 6 }, () => ({ op: 'screenshot', name: 'x' }))];
    const out = await pool.lanes[0].runJob({ kind: 'macro', spec: { steps } } as RunnableJob, { ...ctx(), maxResultBytes: Math.floor(b64 * 2.5) });
    expect(out.status).toBe('failed');
    expect(out.error).toMatch(/^result too large: .* over PAPRIKA_MAX_RESULT_BYTES .*; its largest part is x\.png/);
    expect(out.result).toEqual({ failed_step: 4 });
  });

  it('an idle lane\'s Chrome runs a renderer only for its pages: no spare renderer, no browser UI no one sees', async () => {
    await Promise.all(pool.lanes.map((l) => l.runJob({ kind: 'fetch', spec: { url: `${base}/form` } }, ctx())));
    await Promise.all(pool.lanes.map((l) => l.idle()));
    // Each page here is a lane's next context, made while it idles: one renderer each, and no
    // browser start-up tab beside them (it held a renderer for the browser's whole life). Chrome
    // would add one for the omnibox popup's WebUI of every window (each job's context opens one)
    // and a spare one made for the next navigation of a context that closes with its job: both
    // started and thrown away once a job.
    const browsers = [...new Set(pool.lanes.map((l) => l.browserHost.current!))];
    const pages = (await Promise.all(browsers.map(async (c) => (await c.browser.targets()).filter((t) => t.type() === 'page').length))).reduce((a, b) => a + b, 0);
    expect(pages).toBe(pool.lanes.length);
    expect(renderersUnder(browsers.map((c) => c.pid!))).toBe(pages);
    // The network service and the GPU thread run inside the browser process (~18 MiB a browser).
    expect(chromeProcessesUnder(browsers.map((c) => c.pid!), /--utility-sub-type=network\.mojom\.NetworkService|--type=gpu-process/)).toBe(0);
  });

  it('a failing step fails the job with its number, op and reason', async () => {
    const out = await pool.lanes[0].runJob({ kind: 'macro', spec: { steps: [{ op: 'goto', url: `${base}/form` }, { op: 'extract', selector: '#missing', name: 'x' }] } }, ctx());
    expect(out).toMatchObject({ status: 'failed', error: 'step 2 (extract): no element matches #missing' });
  });

  it('a Chrome killed mid-job fails that job as crashed, and the next job on the lane succeeds', async () => {
    const lane = pool.lanes[0];
    const pidBefore = lane.pid!;
    // Killed once the page is up and the job has reached its endless wait_for.
    const marked = nextEvent(server, 'request', 'the macro to reach its last step', (req: http.IncomingMessage) => req.url === '/mark', 20_000);
    const running = lane.runJob({ kind: 'macro', spec: { steps: [{ op: 'goto', url: `${base}/form` }, { op: 'eval', expression: "fetch('/mark').then(() => 1)", name: 'mark' }, { op: 'wait_for', selector: '#never' }] } }, ctx());
    await marked;
    process.kill(pidBefore, 'SIGKILL');
    const out = await running;
    expect(out.status).toBe('failed');
    expect(out.error).toMatch(/^chrome crashed: browser process exited \(SIGKILL\)/);
    const next = await lane.runJob({ kind: 'fetch', spec: { url: `${base}/form` } }, ctx());
    expect(next).toMatchObject({ status: 'succeeded', result: { title: 'Paprika test form' } });
    expect(lane.pid).not.toBe(pidBefore);
  });

  it('a hung Chrome (stopped process) is killed and relaunched; the job fails with the reason', async () => {
    const lane = pool.lanes[1];
    const pidBefore = lane.pid!;
    // Stopped once the job is inside Chrome (its page has fetched /mark) and waiting there.
    const marked = nextEvent(server, 'request', 'the macro to reach its last step', (req: http.IncomingMessage) => req.url === '/mark', 20_000);
    const running = lane.runJob({ kind: 'macro', spec: { steps: [{ op: 'goto', url: `${base}/form` }, { op: 'eval', expression: "fetch('/mark').then(() => 1)", name: 'mark' }, { op: 'wait_for', selector: '#never' }] } }, ctx());
    await marked;
    process.kill(pidBefore, 'SIGSTOP'); // alive but deaf: no CDP answers, like a wedged browser
    const out = await running;
    expect(out).toMatchObject({ status: 'failed' });
    expect(out.error).toMatch(/^chrome crashed: hung \(no answer to a CDP call within 2 s\)/);
    const next = await lane.runJob({ kind: 'fetch', spec: { url: `${base}/form` } }, ctx());
    expect(next).toMatchObject({ status: 'succeeded' });
    expect(lane.pid).not.toBe(pidBefore);
  });

  it('a deadline abort fails the job with timeout; a cancel cancels it', async () => {
    // The deadline's abort comes while the page is loading (its request is at the server).
    const timed = ctx(1000);
    const answeredBefore = slowAnswered;
    void nextEvent(server, 'request', 'the slow page requested', (req: http.IncomingMessage) => req.url === '/slow', 20_000).then(() => timed.controller.abort('timeout'));
    const out = await pool.lanes[0].runJob({ kind: 'fetch', spec: { url: `${base}/slow` } }, timed);
    expect(out, JSON.stringify(out).slice(0, 500)).toEqual({ status: 'failed', error: 'timeout' });
    expect(slowAnswered).toBe(answeredBefore); // ended on the abort, before the page could answer

    // Cancelled once running (past the start's own check of the signal).
    const canceled = ctx();
    const cancelling = pool.lanes[0].runJob({ kind: 'sleep', spec: { ms: 5000 } }, canceled);
    canceled.controller.abort('canceled');
    expect(await cancelling).toEqual({ status: 'canceled', error: 'canceled' });
    // The lane is free again at once.
    expect((await pool.lanes[0].runJob({ kind: 'sleep', spec: { ms: 10 } }, ctx())).status).toBe('succeeded');
  });

  it('two lanes run two jobs in parallel', async () => {
    // Each job waits at /hold, which answers only once both jobs wait there: run one after the
    // other, neither could finish. No wall-time bound.
    const job: RunnableJob = { kind: 'macro', spec: { steps: [{ op: 'goto', url: `${base}/form` }, { op: 'eval', expression: "fetch('/hold').then((r) => r.text())", name: 'held' }] } };
    const outs = await Promise.all(pool.lanes.map((l) => l.runJob(job, ctx(45_000))));
    expect(outs.map((o) => [o.status, o.error])).toEqual([
      ['succeeded', undefined],
      ['succeeded', undefined],
    ]);
    expect(outs.map((o) => (o.result as { values: { held: string } }).values.held)).toEqual(['both', 'both']);
  });

  it('a session keeps one page across commands and answers ping', async () => {
    const lane = pool.lanes[1];
    await lane.openSession('s-1');
    // The whole session's budget, a crash and a relaunch included, on a loaded machine.
    const signal = AbortSignal.timeout(45_000);
    expect(await lane.sessionCommand({ op: 'ping' }, signal)).toEqual({ pong: true, lane: 1, session_id: 's-1' });
    await lane.sessionCommand({ op: 'goto', url: `${base}/form` }, signal);
    await lane.sessionCommand({ op: 'type', selector: '#name', text: 'kept' }, signal);
    expect(await lane.sessionCommand({ op: 'extract', selector: '#name', property: 'value', name: 'v' }, signal)).toEqual({ name: 'v', value: 'kept' });
    await expect(lane.sessionCommand({ op: 'click', selector: '#missing' }, AbortSignal.timeout(1000))).rejects.toThrow();
    // A crash loses the page's state but not the session: the next command gets a fresh page.
    // Killed while a command is inside Chrome: an eval that has fetched /mark and never returns.
    const marked = nextEvent(server, 'request', 'the session command to reach Chrome', (req: http.IncomingMessage) => req.url === '/mark', 20_000);
    const crashing = lane.sessionCommand({ op: 'eval', expression: "fetch('/mark').then(() => new Promise(() => {}))" }, signal);
    await marked;
    process.kill(lane.pid!, 'SIGKILL');
    await expect(crashing).rejects.toThrow(/^chrome crashed: browser process exited/);
    expect(await lane.sessionCommand({ op: 'eval', expression: 'location.href' }, signal)).toEqual({ value: 'about:blank' });
    const busy = await lane.runJob({ kind: 'sleep', spec: { ms: 1 } }, ctx());
    expect(busy).toMatchObject({ status: 'failed', error: 'lane 1 is busy with a session' });
    await lane.closeSession();
    expect((await lane.runJob({ kind: 'sleep', spec: { ms: 1 } }, ctx())).status).toBe('succeeded');
  });

  it('stopping the pool ends every Chrome and removes its profile', async () => {
    const pids = [...new Set(pool.lanes.map((l) => l.pid!))];
    expect(pids).toHaveLength(sharedChrome ? 1 : 2);
    // This pool's profiles, read from its Chromes' own command lines: other test files running
    // beside this one make profiles of their own in the same temp folder.
    const profiles = pids.map((pid) => /--user-data-dir=([^\0]+)/.exec(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8'))?.[1]);
    expect(profiles.every((p) => p && path.basename(p).startsWith('paprika-lane-'))).toBe(true);
    await pool.stop();
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
    expect(profiles.filter((p) => fs.existsSync(p!))).toEqual([]);
  });
});

/** Renderer processes (`--type=renderer`) among the descendants of `roots`, from /proc. */
function renderersUnder(roots: number[]): number {
  return chromeProcessesUnder(roots, /(^|[\0 ])--type=renderer([\0 ]|$)/);
}

/** Chrome's processes under these browser pids whose command line matches `kind`. */
function chromeProcessesUnder(roots: number[], kind: RegExp): number {
  const parent = new Map<number, number>();
  const matching = new Set<number>();
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      parent.set(Number(e), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      // Chrome rewrites its command line into one space-separated string.
      if (kind.test(fs.readFileSync(`/proc/${e}/cmdline`, 'utf8'))) matching.add(Number(e));
    } catch {
      // exited meanwhile
    }
  }
  const under = (pid: number): boolean => {
    for (let p: number | undefined = pid, hops = 0; p !== undefined && p > 1 && hops < 64; p = parent.get(p), hops++) if (roots.includes(p)) return true;
    return false;
  };
  return [...matching].filter(under).length;
}
