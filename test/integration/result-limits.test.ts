// Results a hub cannot take as sent (issue 16, reproductions 3 and 4): a frame over the link's
// limit is answered `result_refused`, not a dropped link, and the worker reports the job failed
// instead; text Postgres cannot store (NUL, lone surrogates) is replaced so a succeeded job is
// stored as succeeded; a result the database refuses is reported, and the worker gives up after
// a bound. Real Postgres and Redis; the big results come from a lane that returns what the test
// says (Chrome's own path is test/e2e/result-limits.test.ts).
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunnableJob, SessionCommand } from '../../hub-core/src/wire/job-spec.ts';
import { openJobStore } from '../../hub-core/src/adapters/sql/sql-job-store.ts';
import { MAX_ASSETS, MAX_FRAME_BYTES, MAX_RESULT_DEPTH, encode } from '../../hub-core/src/wire/protocol.ts';
import type { JobStore } from '../../hub-core/src/ports/job-store.ts';
import { WorkerAgent } from '../../worker-agent/src/agent.ts';
import type { JobOutcome, Lane } from '../../worker-agent/src/lanes/lane.ts';
import { AGENT_DATA_DIR, nextLanIp } from '../harness/agents.ts';
import { realBackends, startTestHub, type TestHub } from '../harness/hub.ts';
import { json, post } from '../harness/http.ts';
import { waitFor } from '../harness/processes.ts';
import { rawLink } from '../harness/raw-link.ts';
import { requireServices } from '../harness/services.ts';

const run = requireServices(['postgres', 'redis']);

/** What a session's `eval` returns, by expression. */
const sessionValues = new Map<string, unknown>([
  ['huge', 'y'.repeat(MAX_FRAME_BYTES + 1024)],
  ['big', 'b'.repeat(2 * 1024 * 1024)],
  ['small', { ok: true }],
]);

/** A lane whose sleep job returns `outcomes[ms]` (else a small success): the worker's own result, as big or odd as a page could make it. */
class ScriptedLane implements Lane {
  readonly viewUrl = null;
  constructor(
    readonly index: number,
    private readonly outcomes: Map<number, JobOutcome>,
  ) {}
  async start() {}
  async runJob(job: RunnableJob): Promise<JobOutcome> {
    return (job.kind === 'sleep' ? this.outcomes.get(job.spec.ms) : undefined) ?? { status: 'succeeded', result: { ok: true } };
  }
  async openSession() {}
  async sessionCommand(command: SessionCommand): Promise<unknown> {
    return command.op === 'eval' ? sessionValues.get(command.expression) ?? null : null;
  }
  async closeSession() {}
  async stop() {}
}

describe.skipIf(!run)('results a hub cannot take as sent', () => {
  let h: TestHub;
  let drop: () => Promise<void>;
  let store: JobStore;
  const waitJob = (id: string) =>
    waitFor(`job ${id} ends`, async () => {
      const j = await fetch(`${h.url}/jobs/${id}`).then(json);
      return ['succeeded', 'failed', 'canceled'].includes(j.status) ? j : undefined;
    }, 30_000);

  beforeAll(async () => {
    const b = await realBackends();
    drop = b.drop;
    store = await openJobStore({ databaseUrl: b.env.DATABASE_URL });
    h = await startTestHub({ ...b.env, PAPRIKA_HEARTBEAT_S: '0.2', PAPRIKA_ASSIGN_WAIT_S: '5' });
  });
  afterAll(async () => {
    await h?.stop();
    await store?.close();
    await drop?.();
  });

  it('a frame over the limit gets result_refused naming the job; the link stays up and the next job runs', async () => {
    const { ws, frames } = await rawLink(h.url, 'w-big-frame');
    const job = await post(`${h.url}/jobs`, { kind: 'sleep', spec: { ms: 1 } });
    const assign = await waitFor('assign', async () => frames.find((f) => f.type === 'assign' && f.job_id === job.id));
    ws.send(encode({ type: 'job_result', job_id: job.id, assignment_id: assign.assignment_id, status: 'succeeded', result: 'x'.repeat(MAX_FRAME_BYTES + 1024) }));
    const refused = await waitFor('result_refused', async () => frames.find((f) => f.type === 'result_refused'));
    expect(refused).toMatchObject({ job_id: job.id, code: 'too_large', max_bytes: MAX_FRAME_BYTES });
    expect(ws.readyState).toBe(ws.OPEN);
    // What an agent does with it: report the job failed, which the hub stores and acks.
    ws.send(encode({ type: 'job_result', job_id: job.id, assignment_id: assign.assignment_id, status: 'failed', error: `result too large: ${refused.reason}` }));
    await waitFor('ack', async () => frames.some((f) => f.type === 'result_ack' && f.job_id === job.id));
    expect(await waitJob(job.id)).toMatchObject({ status: 'failed', error: expect.stringMatching(/^result too large/) });
    const next = await post(`${h.url}/jobs`, { kind: 'sleep', spec: { ms: 1 } });
    const a2 = await waitFor('second assign', async () => frames.find((f) => f.type === 'assign' && f.job_id === next.id));
    ws.send(encode({ type: 'job_result', job_id: next.id, assignment_id: a2.assignment_id, status: 'succeeded', result: { ok: 1 } }));
    expect((await waitJob(next.id)).status).toBe('succeeded');
    ws.close();
  });

  it('NUL and lone surrogates in a result (values and keys) are replaced: the job is stored as succeeded, the worker acked', async () => {
    const { ws, frames } = await rawLink(h.url, 'w-odd-text');
    const job = await post(`${h.url}/jobs`, { kind: 'sleep', spec: { ms: 1 } });
    const assign = await waitFor('assign', async () => frames.find((f) => f.type === 'assign' && f.job_id === job.id));
    const result = { text: 'a\u0000b', high: 'x\uD800', low: '\uDC00y', pair: '😀', list: ['\u0000'], ['k\u0000']: 1 };
    ws.send(encode({ type: 'job_result', job_id: job.id, assignment_id: assign.assignment_id, status: 'succeeded', result, error: 'note\u0000' }));
    await waitFor('ack', async () => frames.some((f) => f.type === 'result_ack' && f.job_id === job.id));
    const stored = await waitJob(job.id);
    expect(stored.status).toBe('succeeded');
    expect(stored.result).toEqual({ text: 'a\uFFFDb', high: 'x\uFFFD', low: '\uFFFDy', pair: '😀', list: ['\uFFFD'], ['k\uFFFD']: 1 });
    expect(frames.some((f) => f.type === 'result_refused')).toBe(false);
    ws.close();
  });

  it('an agent whose result is over the link limit reports failed: result too large, keeps its link, and runs the next job', async () => {
    const outcomes = new Map<number, JobOutcome>([
      [7, { status: 'succeeded', result: 'y'.repeat(MAX_FRAME_BYTES + 1024) }],
      [8, { status: 'succeeded', result: { text: 'z'.repeat(300 * 1024) } }],
      [9, { status: 'succeeded', result: 'w'.repeat(2 * 1024 * 1024) }],
    ]);
    const lanIp = nextLanIp();
    const log = pino({ level: process.env.PAPRIKA_TEST_LOG_LEVEL ?? 'silent' });
    // Caps as the options say: above the link limit, so the hub's refusal is what stops it.
    const make = (maxResultBytes: number) =>
      new WorkerAgent({ hubUrl: h.url, pool: { lanes: [new ScriptedLane(0, outcomes)], singleChrome: false, kinds: ['sleep'], start: async () => {}, stop: async () => {} }, lanIp, hostname: 'scripted', dataDir: AGENT_DATA_DIR, heartbeatS: 0.2, diskMaxPct: 100, log, maxResultBytes, backoff: { baseMs: 50, capMs: 200 } });
    const agent = make(2 * MAX_FRAME_BYTES);
    await agent.start();
    await agent.linked;
    const link = h.hub.localLinks.get(agent.workerId!);
    try {
      const big = await post(`${h.url}/jobs`, { kind: 'sleep', spec: { ms: 7 } });
      const failed = await waitJob(big.id);
      expect(failed).toMatchObject({ status: 'failed', error: expect.stringMatching(/^result too large: frame of \d+ bytes is over the link's limit/) });
      expect(h.hub.localLinks.get(agent.workerId!)).toBe(link); // the same link: never dropped
      // Inline JSON over 256 KB travels as the asset result.json; the job row keeps a pointer.
      const mid = await waitJob((await post(`${h.url}/jobs`, { kind: 'sleep', spec: { ms: 8 } })).id);
      expect(mid.status).toBe('succeeded');
      expect(mid.result).toMatchObject({ result_asset: 'result.json' });
      expect(mid.assets).toContain('result.json');
      const body = await fetch(`${h.url}/jobs/${mid.id}/assets/result.json`).then(json);
      expect(body.text).toHaveLength(300 * 1024);
    } finally {
      await agent.stop(0);
    }
    // The same agent under a 1 MB cap: its 2 MB result is refused before it is sent.
    const capped = make(1024 * 1024);
    await capped.start();
    await capped.linked;
    try {
      const job = await waitJob((await post(`${h.url}/jobs`, { kind: 'sleep', spec: { ms: 9 } })).id);
      expect(job).toMatchObject({ status: 'failed', error: expect.stringMatching(/^result too large: 2\.\d MB is over PAPRIKA_MAX_RESULT_BYTES \(1\.0 MB\); its largest part is result\.json/) });
      expect((await waitJob((await post(`${h.url}/jobs`, { kind: 'sleep', spec: { ms: 1 } })).id)).status).toBe('succeeded');
    } finally {
      await capped.stop(0);
    }
  });

  it('a result the hub cannot read (more assets than the link takes) ends the job failed at once, naming why; the link stays', async () => {
    // A macro may take up to 500 screenshots: a result with more assets than the link's schema
    // allowed was answered with a bare error, and the worker sent it again every heartbeat
    // while the job held its lane until its deadline and grace (then `timeout`).
    const shot = (i: number) => ({ name: `s-${i}.png`, content_type: 'image/png', data_base64: 'iVBORw0KGgo=' });
    const tooMany = MAX_ASSETS + 1;
    const outcomes = new Map<number, JobOutcome>([
      [11, { status: 'succeeded', result: { shots: 120 }, assets: Array.from({ length: 120 }, (_, i) => shot(i)) }],
      [12, { status: 'succeeded', result: { shots: tooMany }, assets: Array.from({ length: tooMany }, (_, i) => shot(i)) }],
    ]);
    const log = pino({ level: process.env.PAPRIKA_TEST_LOG_LEVEL ?? 'silent' });
    const agent = new WorkerAgent({ hubUrl: h.url, pool: { lanes: [new ScriptedLane(0, outcomes)], singleChrome: false, kinds: ['sleep'], start: async () => {}, stop: async () => {} }, lanIp: nextLanIp(), hostname: 'many-assets', dataDir: AGENT_DATA_DIR, heartbeatS: 0.2, diskMaxPct: 100, log, backoff: { baseMs: 50, capMs: 200 } });
    await agent.start();
    await agent.linked;
    const link = h.hub.localLinks.get(agent.workerId!);
    try {
      // 120 screenshots (a macro of 120 screenshot steps): stored, every asset listed.
      const many = await waitJob((await post(`${h.url}/jobs`, { kind: 'sleep', spec: { ms: 11 } })).id);
      expect(many.status).toBe('succeeded');
      expect(many.assets).toHaveLength(120);
      // Past what any job can make: the worker caps it before it is sent.
      const over = await waitJob((await post(`${h.url}/jobs`, { kind: 'sleep', spec: { ms: 12 } })).id);
      expect(over).toMatchObject({ status: 'failed', error: `result has ${tooMany} assets, over the limit of ${MAX_ASSETS}` });
      expect(h.hub.localLinks.get(agent.workerId!)).toBe(link);
    } finally {
      await agent.stop(0);
    }
    // A worker that sends one anyway (an older or foreign agent) gets result_refused naming the
    // field, not a bare error: an agent reports the job failed instead and the lane frees.
    const { ws, frames } = await rawLink(h.url, 'w-bad-result');
    const job = await post(`${h.url}/jobs`, { kind: 'sleep', spec: { ms: 1 } });
    const assign = await waitFor('assign', async () => frames.find((f) => f.type === 'assign' && f.job_id === job.id));
    ws.send(encode({ type: 'job_result', job_id: job.id, assignment_id: assign.assignment_id, status: 'succeeded', assets: Array.from({ length: tooMany }, (_, i) => shot(i)) }));
    const refused = await waitFor('result_refused', async () => frames.find((f) => f.type === 'result_refused'));
    expect(refused).toMatchObject({ job_id: job.id, code: 'invalid', reason: expect.stringMatching(/assets/) });
    expect(frames.some((f) => f.type === 'error')).toBe(false);
    ws.send(encode({ type: 'job_result', job_id: job.id, assignment_id: assign.assignment_id, status: 'failed', error: `result refused by the hub: ${refused.reason}` }));
    expect(await waitJob(job.id)).toMatchObject({ status: 'failed', error: expect.stringMatching(/^result refused by the hub: .*assets/) });
    ws.close();
  });

  it('a result nested deeper than the hub walks is refused as invalid, and the agent reports the job failed (it stayed running, unstored)', async () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 5000; i++) deep = { a: deep };
    let shallow: unknown = 'bottom';
    for (let i = 0; i < MAX_RESULT_DEPTH - 1; i++) shallow = [shallow];
    const outcomes = new Map<number, JobOutcome>([
      [21, { status: 'succeeded', result: { deep } }],
      [22, { status: 'succeeded', result: shallow }],
    ]);
    const log = pino({ level: process.env.PAPRIKA_TEST_LOG_LEVEL ?? 'silent' });
    const agent = new WorkerAgent({ hubUrl: h.url, pool: { lanes: [new ScriptedLane(0, outcomes)], singleChrome: false, kinds: ['sleep'], start: async () => {}, stop: async () => {} }, lanIp: nextLanIp(), hostname: 'deep-results', dataDir: AGENT_DATA_DIR, heartbeatS: 0.2, diskMaxPct: 100, log, backoff: { baseMs: 50, capMs: 200 } });
    await agent.start();
    await agent.linked;
    try {
      // The agent does not send what the hub would refuse.
      const tooDeep = await waitJob((await post(`${h.url}/jobs`, { kind: 'sleep', spec: { ms: 21 } })).id);
      expect(tooDeep).toMatchObject({ status: 'failed', error: 'result nested deeper than 256 levels of arrays and objects: return less' });
      // The lane is free again and a result at the limit is stored whole.
      const atLimit = await waitJob((await post(`${h.url}/jobs`, { kind: 'sleep', spec: { ms: 22 } })).id);
      expect(atLimit.status).toBe('succeeded');
      expect(atLimit.result).toEqual(shallow);
    } finally {
      await agent.stop(0);
    }
    // A worker that sends one anyway: result_refused (invalid) naming the depth, nothing half-stored.
    const { ws, frames } = await rawLink(h.url, 'w-deep-result');
    const job = await post(`${h.url}/jobs`, { kind: 'sleep', spec: { ms: 1 } });
    const assign = await waitFor('assign', async () => frames.find((f) => f.type === 'assign' && f.job_id === job.id));
    // Written by hand: JSON.stringify here overflows the test's own stack at this depth.
    const frame = encode({ type: 'job_result', job_id: job.id, assignment_id: assign.assignment_id, status: 'succeeded', result: 'DEEP' });
    ws.send(frame.replace('"DEEP"', `${'{"a":'.repeat(5000)}"bottom"${'}'.repeat(5000)}`));
    const refused = await waitFor('result_refused', async () => frames.find((f) => f.type === 'result_refused'));
    expect(refused).toMatchObject({ job_id: job.id, code: 'invalid', reason: expect.stringMatching(/nested deeper than 256 levels/) });
    expect((await (await fetch(`${h.url}/jobs/${job.id}`)).json()).status).toBe('running');
    ws.close();
  });

  it("a session command's reply over the cap or the link's limit is answered at once as too large; the session and the link stay", async () => {
    const log = pino({ level: process.env.PAPRIKA_TEST_LOG_LEVEL ?? 'silent' });
    const agent = new WorkerAgent({ hubUrl: h.url, pool: { lanes: [new ScriptedLane(0, new Map())], singleChrome: false, kinds: ['sleep', 'session'], start: async () => {}, stop: async () => {} }, lanIp: nextLanIp(), hostname: 'session-sizes', dataDir: AGENT_DATA_DIR, heartbeatS: 0.2, diskMaxPct: 100, log, maxResultBytes: 1024 * 1024, backoff: { baseMs: 50, capMs: 200 } });
    await agent.start();
    await agent.linked;
    const link = h.hub.localLinks.get(agent.workerId!);
    const command = (id: string, expression: string) =>
      // The guard: before, the hub waited PAPRIKA_FORWARD_TIMEOUT_S (60 s) for a reply it had refused.
      fetch(`${h.url}/sessions/${id}/commands`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ op: 'eval', expression }), signal: AbortSignal.timeout(10_000) });
    try {
      const session = await post(`${h.url}/sessions`, {});
      for (const [expression, size] of [['huge', /^result too large: 32\.0 MB is over PAPRIKA_MAX_RESULT_BYTES \(1\.0 MB\)/], ['big', /^result too large: 2\.0 MB is over PAPRIKA_MAX_RESULT_BYTES \(1\.0 MB\)/]] as const) {
        const res = await command(session.session_id, expression);
        expect(res.status).toBe(400);
        expect((await res.json()).error).toMatch(size);
      }
      const ok = await command(session.session_id, 'small');
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ ok: true });
      expect(h.hub.localLinks.get(agent.workerId!)).toBe(link);
      await fetch(`${h.url}/sessions/${session.session_id}`, { method: 'DELETE' });
    } finally {
      await agent.stop(0);
    }
  });

  it("a session reply over the link's limit from a worker that sent it anyway answers the client at once; a reply from another worker is ignored", async () => {
    const holder = await rawLink(h.url, 'w-session-holder');
    const other = await rawLink(h.url, 'w-session-other');
    // Both raw workers open a session when asked; only the holder's replies should count.
    for (const w of [holder, other]) {
      w.ws.on('message', (m) => {
        const msg = JSON.parse(String(m));
        if (msg.type === 'session_open') w.ws.send(encode({ type: 'session_reply', request_id: msg.request_id, ok: true, result: { lane: msg.lane } }));
      });
    }
    const session = await post(`${h.url}/sessions`, {});
    const [mine, theirs] = session.worker_id === 'w-session-holder' ? [holder, other] : [other, holder];
    const command = (expression: string) => fetch(`${h.url}/sessions/${session.session_id}/commands`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ op: 'eval', expression }), signal: AbortSignal.timeout(10_000) });
    // The other worker answers the request first, with the id it should never have seen: ignored.
    const asked = command('1');
    const request = await waitFor('session_command', async () => mine.frames.find((f) => f.type === 'session_command'));
    theirs.ws.send(encode({ type: 'session_reply', request_id: request.request_id, ok: true, result: { v: 'forged' } }));
    // A barrier: the link's frames are handled in order, so once the hub refuses this job_started, it has handled the forged reply.
    const bogus = randomUUID();
    theirs.ws.send(encode({ type: 'job_started', job_id: bogus, assignment_id: bogus, lane: 0 }));
    await waitFor('the forged reply handled', async () => theirs.frames.some((f) => f.type === 'error' && String(f.message).includes(bogus)));
    mine.ws.send(encode({ type: 'session_reply', request_id: request.request_id, ok: true, result: { v: 'real' } }));
    expect(await (await asked).json()).toEqual({ v: 'real' });
    // A reply over the link's limit: refused, and the client answered at once, not after the forward timeout.
    const huge = command('2');
    const second = await waitFor('second session_command', async () => mine.frames.filter((f) => f.type === 'session_command')[1]);
    mine.ws.send(encode({ type: 'session_reply', request_id: second.request_id, ok: true, result: 'z'.repeat(MAX_FRAME_BYTES + 1024) }));
    const res = await huge;
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/^result too large: frame of \d+ bytes is over the link's limit/);
    expect(mine.ws.readyState).toBe(mine.ws.OPEN);
    holder.ws.close();
    other.ws.close();
  });

  it('a result the database refuses is reported to the worker, which sends it at most 5 times and then drops it', async () => {
    // Postgres refusing the row's data (class 22) cannot be provoked once text is sanitised:
    // this store refuses one job's finish the way it would.
    let refusals = 0;
    let refusedJob = '';
    const real = await openJobStore({ databaseUrl: h.env.DATABASE_URL });
    const refusing = new Proxy(real, {
      get(target, prop, receiver) {
        if (prop === 'finishJob')
          return async (id: string, args: unknown) => {
            if (id === refusedJob) {
              refusals++;
              throw Object.assign(new Error('invalid input syntax for type json'), { code: '22P02' });
            }
            return (target.finishJob as (i: string, a: unknown) => Promise<unknown>)(id, args);
          };
        const v = Reflect.get(target, prop, receiver);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    }) as JobStore;
    const h2 = await startTestHub({ ...h.env, PAPRIKA_HUB_ID: `${h.hub.config.hubId}-b`, PAPRIKA_HEARTBEAT_S: '0.1', PAPRIKA_PORT: '0' }, { store: refusing });
    const lines: string[] = [];
    const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(l) });
    const agent = new WorkerAgent({ hubUrl: h2.url, pool: { lanes: [new ScriptedLane(0, new Map())], singleChrome: false, kinds: ['sleep'], start: async () => {}, stop: async () => {} }, lanIp: nextLanIp(), hostname: 'refused', dataDir: AGENT_DATA_DIR, heartbeatS: 0.1, diskMaxPct: 100, log, backoff: { baseMs: 50, capMs: 200 } });
    try {
      await agent.start();
      await agent.linked;
      const job = await fetch(`${h2.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'sleep', spec: { ms: 1 } }) }).then(json);
      refusedJob = job.id;
      await waitFor('the worker gives up', async () => lines.some((l) => l.includes('result dropped: the hub refused to store it')));
      expect(refusals).toBe(5);
      // Still linked and working: the next job is stored normally.
      const next = await fetch(`${h2.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'sleep', spec: { ms: 1 } }) }).then(json);
      await waitFor('next job stored', async () => ((await real.getJob(next.id))?.status === 'succeeded' ? true : undefined));
      expect(refusals).toBe(5);
    } finally {
      await agent.stop(0);
      await h2.stop();
      await real.close();
    }
  });
});
