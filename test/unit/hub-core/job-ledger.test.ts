// The job ledger as a table of (state, event) → (statement, consequences): each transition
// runs one JobStore statement, then its consequences in the fixed order — lane released (a
// waiter woken, or 'spare'), console event, metric, frame to the worker. In-memory fakes
// record every step in one trace; time is a ManualClock. No database, no sockets, no sleeps.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../hub-core/src/config.ts';
import type { ReconcileAction } from '../../../hub-core/src/domain/reconcile.ts';
import { HubEvents } from '../../../hub-core/src/hub/hub-events.ts';
import { JobLedger, type Reservation } from '../../../hub-core/src/hub/job-ledger.ts';
import { LaneBook } from '../../../hub-core/src/hub/lane-book.ts';
import { LocalLinks } from '../../../hub-core/src/hub/local-links.ts';
import type { HubMetrics } from '../../../hub-core/src/hub/metrics.ts';
import { WorkerLink, type LinkSocket } from '../../../hub-core/src/hub/worker-link.ts';
import { ManualClock } from '../../../hub-core/src/ports/clock.ts';
import type { JobRow, JobStore, NewJob } from '../../../hub-core/src/ports/job-store.ts';

type Status = JobRow['status'];
const row = (id: string, status: Status, extra: Partial<JobRow> = {}): JobRow => ({
  id, kind: 'sleep', spec: { ms: 1 }, status, worker_id: null, lane: null, hub_id: 'hub-a', session_id: null, novnc_url: null, error: null, result: null, attempts: 0,
  created_at: new Date(0), assigned_at: null, finished_at: null, deadline_at: null, released_at: null, idempotency_key: null, ...extra,
});
const running = (id: string) => row(id, 'running', { worker_id: 'w1', lane: 0, session_id: `a-${id}` });

/** What each statement answers in a case, and what getJob reads afterwards. */
interface StoreState {
  created?: boolean;
  matched?: boolean;
  after?: Status;
  before?: Status;
  runningOfWorker?: JobRow[];
  throws?: boolean;
  /** Jobs a batch statement leaves out (taken meanwhile, key already held, canceled). */
  leftOut?: string[];
  /** Read queued, then claimed by redrive before the cancel's UPDATE ran. */
  claimedMeanwhile?: boolean;
  /** A batch statement the database refuses (SQLSTATE 22P02); the single-row one still works. */
  batchRefused?: boolean;
}

function setup(state: StoreState, opts: { sendFails?: boolean } = {}) {
  const trace: string[] = [];
  const clock = new ManualClock(1_000_000);
  const config = loadConfig({ PAPRIKA_HUB_ID: 'hub-a' });
  const fleet = new LocalLinks(config, clock, { next: () => 0 });
  const lanes = new (class extends LaneBook {
    override offer(count: number): void {
      trace.push(this.waiting > 0 ? 'lane freed: waiter woken' : 'lane freed: spare');
      super.offer(count);
    }
  })(fleet, clock);
  const socket: LinkSocket = {
    send: async (text) => {
      const frame = JSON.parse(text) as { type: string };
      if (opts.sendFails && frame.type === 'assign') {
        trace.push('frame assign (failed)');
        throw new Error('link is not open');
      }
      trace.push(`frame ${frame.type}`);
    },
    close: () => {},
    terminate: () => {},
    open: true,
  };
  const link = new WorkerLink('w1', socket, { max_concurrent: 2, lane_novnc_urls: ['sim://0', 'sim://1'], novnc_url: null, version: 't', platform: 'test' }, { lanIp: '10.0.0.1', hostname: 'w1', hubId: 'hub-a' }, 'active', clock.now());
  link.report({ disk_pct: 1 });
  fleet.add(link);
  const events = new HubEvents();
  events.on('job', (j: JobRow) => trace.push(`event job ${j.status}`));
  events.on('workers', () => trace.push('event workers'));
  const metric = (name: string) => ({ inc: () => trace.push(`metric ${name}`) });
  const metrics = {
    jobsSubmitted: metric('jobsSubmitted'), assignments: metric('assignments'), results: metric('results'), rejections: metric('rejections'),
    reconcilerActions: metric('reconcilerActions'), relinkOrphans: metric('relinkOrphans'),
  } as unknown as HubMetrics;
  const stmt = <T>(name: string, value: T): Promise<T> => {
    trace.push(`statement ${name}`);
    return state.throws ? Promise.reject(Object.assign(new Error('db down'), { code: 'ECONNREFUSED' })) : Promise.resolve(value);
  };
  const current = (id: string, s: Status | undefined) => (s === undefined ? undefined : s === 'running' ? running(id) : row(id, s));
  const store = {
    insertJob: (j: NewJob) => stmt('insertJob', { job: row(j.id, 'queued'), created: state.created ?? true }),
    insertRunningJob: (j: NewJob) => stmt('insertRunningJob', { job: running(j.id), created: state.created ?? true }),
    claimQueuedJob: (id: string) => stmt('claimQueuedJob', state.matched === false ? undefined : running(id)),
    unclaimJob: () => stmt('unclaimJob', state.matched !== false),
    finishJob: (id: string) => stmt('finishJob', state.matched === false || state.leftOut?.includes(id) ? undefined : row(id, 'succeeded')),
    insertBatch: (jobs: Array<NewJob & { claim?: unknown }>) =>
      stmt(`insertBatch ${jobs.length}`, jobs.filter((j) => !state.leftOut?.includes(j.id)).map((j) => (j.claim ? running(j.id) : row(j.id, 'queued')))),
    claimQueuedJobs: (claims: Array<{ id: string }>) => stmt(`claimQueuedJobs ${claims.length}`, claims.filter((c) => !state.leftOut?.includes(c.id)).map((c) => running(c.id))),
    finishJobs: (finishes: Array<{ id: string }>) => {
      if (state.batchRefused) {
        trace.push(`statement finishJobs ${finishes.length} (refused)`);
        return Promise.reject(Object.assign(new Error('invalid input syntax for type json'), { code: '22P02' }));
      }
      return stmt(`finishJobs ${finishes.length}`, finishes.filter((f) => !state.leftOut?.includes(f.id)).map((f) => row(f.id, 'succeeded')));
    },
    // The row keeps its worker when a running job is canceled (as the SQL does).
    cancelJob: (id: string) => stmt('cancelJob', state.matched === false ? undefined : row(id, 'canceled', state.before === 'running' || state.claimedMeanwhile ? { worker_id: 'w1', lane: 0 } : {})),
    failJobIf: (id: string) => stmt('failJobIf', state.matched === false ? undefined : row(id, 'failed')),
    markReleased: () => stmt('markReleased', undefined),
    forgetIdempotencyKey: () => stmt('forgetIdempotencyKey', true),
    setWorkerStatus: () => stmt('setWorkerStatus', undefined),
    listRunningOfWorker: async () => state.runningOfWorker ?? [],
    listRunning: async () => [running('j1'), running('j2')],
    getJob: async (id: string) => current(id, state.before ?? state.after),
  } as unknown as JobStore;
  const ledger = new JobLedger({ store, lanes, localLinks: fleet, clock, log: pino({ level: 'silent' }), events, metrics });
  ledger.on('released', () => trace.push('released: redrive woken'));
  const reserve = (id: string): Reservation => {
    const held = lanes.reserve({ kind: 'job', id, assignmentId: `a-${id}` })!;
    return { ...held, claim: { workerId: 'w1', hubId: 'hub-a', lane: held.lane, assignmentId: `a-${id}`, novncUrl: null, now: new Date(clock.now()), deadlineAt: new Date(clock.now() + 60_000) } };
  };
  return { trace, ledger, lanes, link, reserve, clock, store, state };
}

const newJob = (id: string): NewJob => ({ id, kind: 'sleep', spec: { ms: 1 }, hubId: 'hub-a', idempotencyKey: null, now: new Date(0) });
const sleep = { kind: 'sleep' as const, spec: { ms: 1 } };

type Case = {
  name: string;
  state: StoreState;
  sendFails?: boolean;
  /** A POST waits for a lane when the event happens. */
  waiter?: boolean;
  event: (s: ReturnType<typeof setup>) => Promise<unknown>;
  trace: string[];
  returns?: unknown;
  inFlight?: number;
};

const cases: Case[] = [
  { name: 'insert queued, new key', state: { created: true }, event: ({ ledger }) => ledger.insertQueued(newJob('j1')), trace: ['statement insertJob', 'event job queued', 'metric jobsSubmitted'] },
  { name: 'insert queued, key used before', state: { created: false }, event: ({ ledger }) => ledger.insertQueued(newJob('j1')), trace: ['statement insertJob'] },
  {
    name: 'insert running, sent', state: { created: true }, event: ({ ledger, reserve }) => ledger.insertRunning(newJob('j1'), reserve('j1'), sleep),
    trace: ['statement insertRunningJob', 'metric jobsSubmitted', 'frame assign', 'event job running', 'event workers', 'metric assignments'], inFlight: 1,
  },
  {
    // The bug this module fixed: the console once got the pre-unclaim `running` row here.
    name: 'insert running, send failed: undone, the queued row reported', state: { created: true, after: 'queued' }, sendFails: true, waiter: true,
    event: ({ ledger, reserve }) => ledger.insertRunning(newJob('j1'), reserve('j1'), sleep).then((r) => r.job.status),
    trace: ['statement insertRunningJob', 'metric jobsSubmitted', 'frame assign (failed)', 'statement unclaimJob', 'lane freed: waiter woken', 'event job queued'], returns: 'queued', inFlight: 0,
  },
  { name: 'insert running, key used before', state: { created: false }, event: ({ ledger, reserve }) => ledger.insertRunning(newJob('j1'), reserve('j1'), sleep), trace: ['statement insertRunningJob', 'lane freed: spare'], inFlight: 0 },
  {
    name: 'insert running, database down', state: { throws: true }, event: ({ ledger, reserve }) => ledger.insertRunning(newJob('j1'), reserve('j1'), sleep).catch((e: Error) => e.message),
    trace: ['statement insertRunningJob', 'lane freed: spare'], returns: 'db down', inFlight: 0,
  },
  {
    name: 'claim, won and sent', state: { matched: true }, event: ({ ledger, reserve }) => ledger.claim(row('j1', 'queued'), reserve('j1'), sleep, 'redrive').then((o) => o.kind),
    trace: ['statement claimQueuedJob', 'frame assign', 'event job running', 'event workers', 'metric assignments'], returns: 'assigned', inFlight: 1,
  },
  {
    name: 'claim, lost to another hub', state: { matched: false, after: 'running' }, waiter: true, event: ({ ledger, reserve }) => ledger.claim(row('j1', 'queued'), reserve('j1'), sleep, 'redrive').then((o) => o.kind),
    trace: ['statement claimQueuedJob', 'lane freed: waiter woken'], returns: 'taken', inFlight: 0,
  },
  {
    name: 'claim, send failed', state: { matched: true, after: 'queued' }, sendFails: true, event: ({ ledger, reserve }) => ledger.claim(row('j1', 'queued'), reserve('j1'), sleep, 'inline').then((o) => o.kind),
    trace: ['statement claimQueuedJob', 'frame assign (failed)', 'statement unclaimJob', 'lane freed: spare', 'event job queued'], returns: 'send_failed', inFlight: 0,
  },
  { name: 'unrunnable queued job failed', state: { matched: true }, event: ({ ledger }) => ledger.failUnrunnable('j1', 'rerun: job x not found'), trace: ['statement failJobIf', 'event job failed'] },
  {
    name: 'worker rejected: queued again, then the lane', state: { matched: true, after: 'queued' }, waiter: true,
    event: ({ ledger, reserve, link }) => (reserve('j1'), ledger.reject(link, 'j1', 'a-j1', 'disk_full')),
    trace: ['statement unclaimJob', 'lane freed: waiter woken', 'event job queued', 'metric rejections'], returns: true, inFlight: 0,
  },
  {
    name: 'result of an open run', state: { matched: true }, event: ({ ledger, link }) => ledger.finish(link, 'j1', { assignmentId: 'a-j1', status: 'succeeded', result: null, error: null }).then((r) => r?.status),
    trace: ['statement finishJob', 'event job succeeded', 'metric results', 'event workers', 'frame result_ack'], returns: 'succeeded',
  },
  {
    name: 'result repeated after it was stored: acked, nothing else', state: { matched: false },
    event: ({ ledger, link }) => ledger.finish(link, 'j1', { assignmentId: 'a-j1', status: 'succeeded', result: null, error: null }),
    trace: ['statement finishJob', 'event workers', 'frame result_ack'],
  },
  { name: 'cancel of a job running on a local link', state: { before: 'running' }, event: ({ ledger }) => ledger.cancel('j1').then((r) => r?.sentToWorker), trace: ['statement cancelJob', 'event job canceled', 'frame cancel'], returns: true },
  { name: 'cancel of a queued job', state: { before: 'queued' }, event: ({ ledger }) => ledger.cancel('j1').then((r) => r?.sentToWorker), trace: ['statement cancelJob', 'event job canceled'], returns: false },
  { name: 'cancel of a finished job', state: { before: 'succeeded', matched: false }, event: ({ ledger }) => ledger.cancel('j1').then((r) => r?.job.status), trace: ['statement cancelJob'], returns: 'succeeded' },
  { name: 'cancel of a job redrive claimed after it was last read queued: its worker is told', state: { before: 'queued', claimedMeanwhile: true }, event: ({ ledger }) => ledger.cancel('j1').then((r) => r?.sentToWorker), trace: ['statement cancelJob', 'event job canceled', 'frame cancel'], returns: true },
  { name: 'cancel that lost to the result answers the row as it is now', state: { after: 'succeeded', matched: false }, event: ({ ledger }) => ledger.cancel('j1').then((r) => r?.job.status), trace: ['statement cancelJob'], returns: 'succeeded' },
  { name: 'cancel passed on for a peer hub', state: { before: 'running' }, event: ({ ledger }) => ledger.cancelOnWorker('j1'), trace: ['frame cancel'], returns: true },
  { name: 'inline wait given up: released', state: { after: 'queued' }, event: ({ ledger }) => ledger.markReleased('j1').then((r) => r?.status), trace: ['statement markReleased', 'released: redrive woken'], returns: 'queued' },
  {
    name: 'reconciler fails a running orphan on a local link', state: { matched: true },
    event: ({ ledger }) => ledger.reconcile({ kind: 'fail_running', job_id: 'j1', assignment_id: 'a-j1', worker_id: 'w1', error: 'worker lost', reason: 'orphan' } satisfies ReconcileAction),
    trace: ['statement failJobIf', 'event job failed', 'metric reconcilerActions', 'frame cancel'],
  },
  {
    name: 'reconciler fails a job that timed out in the queue', state: { matched: true },
    event: ({ ledger }) => ledger.reconcile({ kind: 'fail_queued', job_id: 'j1', error: 'queued timeout', reason: 'queued_timeout' }),
    trace: ['statement failJobIf', 'event job failed', 'metric reconcilerActions'],
  },
  {
    name: 'reconciler action on a job that moved meanwhile', state: { matched: false },
    event: ({ ledger }) => ledger.reconcile({ kind: 'fail_running', job_id: 'j1', assignment_id: 'a-j1', worker_id: 'w1', error: 'worker lost', reason: 'orphan' }),
    trace: ['statement failJobIf'],
  },
  {
    name: 'fresh worker process linked without its job: failed', state: { matched: true, runningOfWorker: [running('j1'), running('j2')] },
    event: ({ ledger, link }) => ledger.settleRelinked(link, { known: new Set(['a-j2']), fresh: true, helloAt: new Date(0) }),
    trace: ['statement failJobIf', 'event job failed', 'metric relinkOrphans'],
  },
  {
    name: 're-link of the same process without its job: queued again', state: { matched: true, after: 'queued', runningOfWorker: [running('j1')] },
    event: ({ ledger, link }) => ledger.settleRelinked(link, { known: new Set(), fresh: false, helloAt: new Date(0) }),
    trace: ['statement unclaimJob', 'event job queued', 'metric relinkOrphans'],
  },
  { name: 'expired idempotency key forgotten', state: {}, event: ({ ledger }) => ledger.forgetIdempotencyKey('j1', new Date(0)), trace: ['statement forgetIdempotencyKey'], returns: true },
  { name: 'operator status recorded', state: {}, event: ({ ledger }) => ledger.recordWorkerStatus('w1', 'drain', 'admin'), trace: ['statement setWorkerStatus'] },
];

describe('JobLedger: (state, event) → (statement, consequences)', () => {
  it.each(cases)('$name', async (c) => {
    const s = setup(c.state, { sendFails: c.sendFails });
    const woken = c.waiter ? s.lanes.waitForLane(10_000) : undefined;
    const out = await c.event(s);
    expect(s.trace).toEqual(c.trace);
    if ('returns' in c) expect(out).toEqual(c.returns);
    if (c.inFlight !== undefined) expect(s.link.in_flight).toBe(c.inFlight);
    if (woken) {
      s.clock.advance(10_000);
      expect(await woken).toBe(c.trace.includes('lane freed: waiter woken'));
    }
  });
});

const result = { assignmentId: 'a', status: 'succeeded' as const, result: null, error: null };

describe('JobLedger: batches — one statement for many jobs, each job keeps its own consequences', () => {
  it('a bulk insert finding one free lane: that job inserted running and sent, the others queued and redrive woken', async () => {
    const s = setup({});
    s.link.holdLane({ kind: 'job', id: 'other', assignmentId: 'x' });
    const rows = await s.ledger.insertBatch([{ job: newJob('j1'), r: s.reserve('j1'), runnable: sleep }, { job: newJob('j2') }, { job: newJob('j3') }]);
    expect(rows.map((r) => [r.id, r.status])).toEqual([['j1', 'running'], ['j2', 'queued'], ['j3', 'queued']]);
    // The running job's frame is on its way while the queued ones are reported; redrive is woken last.
    expect(s.trace).toEqual(['statement insertBatch 3', 'metric jobsSubmitted', 'frame assign', 'event job queued', 'event job queued', 'event job running', 'event workers', 'metric assignments', 'released: redrive woken']);
    expect(s.link.in_flight).toBe(2);
  });

  it('a bulk insert whose reserved job kept an earlier key: its lane freed, nothing sent', async () => {
    const s = setup({ leftOut: ['j1'] });
    const rows = await s.ledger.insertBatch([{ job: newJob('j1'), r: s.reserve('j1'), runnable: sleep }]);
    expect(rows).toEqual([]);
    expect(s.trace).toEqual(['statement insertBatch 1', 'metric jobsSubmitted', 'lane freed: spare']);
    expect(s.link.in_flight).toBe(0);
  });

  it('a bulk insert the database refuses frees every reserved lane', async () => {
    const s = setup({ throws: true });
    await expect(s.ledger.insertBatch([{ job: newJob('j1'), r: s.reserve('j1'), runnable: sleep }, { job: newJob('j2'), r: s.reserve('j2'), runnable: sleep }])).rejects.toThrow('db down');
    expect(s.trace).toEqual(['statement insertBatch 2', 'lane freed: spare', 'lane freed: spare']);
    expect(s.link.in_flight).toBe(0);
  });

  it('two queued jobs claimed in one statement, one taken meanwhile: the other sent, the lost one frees its lane', async () => {
    const s = setup({ leftOut: ['j2'] });
    const out = await s.ledger.claimMany([{ job: row('j1', 'queued'), r: s.reserve('j1'), runnable: sleep }, { job: row('j2', 'queued'), r: s.reserve('j2'), runnable: sleep }], 'redrive');
    expect(out.map((o) => o.kind)).toEqual(['assigned', 'taken']);
    expect(s.trace).toEqual(['statement claimQueuedJobs 2', 'frame assign', 'lane freed: spare', 'event job running', 'event workers', 'metric assignments']);
    expect(s.link.in_flight).toBe(1);
  });

  it('a batched claim the database refuses frees every lane it held', async () => {
    const s = setup({ throws: true });
    await expect(s.ledger.claimMany([{ job: row('j1', 'queued'), r: s.reserve('j1'), runnable: sleep }, { job: row('j2', 'queued'), r: s.reserve('j2'), runnable: sleep }], 'redrive')).rejects.toThrow('db down');
    expect(s.link.in_flight).toBe(0);
  });

  it('one job to claim goes through the single-row statement', async () => {
    const s = setup({});
    const out = await s.ledger.claimMany([{ job: row('j1', 'queued'), r: s.reserve('j1'), runnable: sleep }], 'inline');
    expect(out.map((o) => o.kind)).toEqual(['assigned']);
    expect(s.trace[0]).toBe('statement claimQueuedJob');
  });

  it('results arriving in one turn are written in one statement; each is acked after it, in its own order of consequences', async () => {
    const s = setup({ leftOut: ['j2'] });
    const done = await Promise.all(['j1', 'j2', 'j3'].map((id) => s.ledger.finish(s.link, id, result)));
    expect(done.map((r) => r?.status)).toEqual(['succeeded', undefined, 'succeeded']);
    expect(s.trace).toEqual([
      'statement finishJobs 3',
      'event job succeeded', 'metric results', 'event workers', 'frame result_ack', // j1
      'event workers', 'frame result_ack', // j2: canceled meanwhile, its condition failed: nothing stored, still acked
      'event job succeeded', 'metric results', 'event workers', 'frame result_ack', // j3
    ]);
  });

  it('a batch of results the database refuses is written row by row: the others are stored', async () => {
    const s = setup({ batchRefused: true });
    const done = await Promise.all(['j1', 'j2'].map((id) => s.ledger.finish(s.link, id, result)));
    expect(done.map((r) => r?.status)).toEqual(['succeeded', 'succeeded']);
    expect(s.trace.filter((t) => t.startsWith('statement'))).toEqual(['statement finishJobs 2 (refused)', 'statement finishJob', 'statement finishJob']);
    expect(s.trace.filter((t) => t === 'frame result_ack')).toHaveLength(2);
  });

  it('results are not acked when the database is down (the worker sends them again)', async () => {
    const s = setup({ throws: true });
    const done = await Promise.all(['j1', 'j2'].map((id) => s.ledger.finish(s.link, id, result).catch((e: Error) => e.message)));
    expect(done).toEqual(['db down', 'db down']);
    expect(s.trace).toEqual(['statement finishJobs 2']);
  });
});
