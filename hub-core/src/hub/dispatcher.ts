// Hand one job to one local lane: resolve what runs, hold a lane, and let the ledger write
// the claim and send it. A queued job is taken with the conditional UPDATE (inline retries
// and the redrive loop); a new job that finds a free lane at once is inserted already
// running, one statement instead of two.
import { randomUUID } from 'node:crypto';
import type { Config } from '../config.ts';
import type { JobRequest, RunnableJob } from '../wire/job-spec.ts';
import type { Clock } from '../ports/clock.ts';
import type { JobRow, JobStore, NewJob } from '../ports/job-store.ts';
import type { AssignOutcome, JobLedger, Reservation } from './job-ledger.ts';
import type { LaneBook } from './lane-book.ts';

export type { AssignOutcome } from './job-ledger.ts';

export class Dispatcher {
  constructor(
    private readonly config: Config,
    private readonly store: JobStore,
    private readonly lanes: LaneBook,
    private readonly ledger: JobLedger,
    private readonly clock: Clock,
  ) {}

  /**
   * Pick a worker and hold one of its lanes for `jobId` (synchronously: no pick can race it).
   * `runnable` is what runs (a rerun's resolved kind and spec): its kind picks the worker, its `timeout_s` sets the deadline.
   */
  private reserve(jobId: string, runnable: RunnableJob): Reservation | undefined {
    const spec: { timeout_s?: number } = runnable.spec;
    const assignmentId = randomUUID();
    const held = this.lanes.reserve({ kind: 'job', id: jobId, assignmentId }, undefined, runnable.kind);
    if (!held) return undefined;
    const { link, lane } = held;
    const now = this.clock.now();
    const timeoutS = spec.timeout_s ?? this.config.jobTimeoutS;
    return {
      link,
      lane,
      claim: { workerId: link.worker_id, hubId: this.config.hubId, lane, assignmentId, novncUrl: link.viewUrl(lane), now: new Date(now), deadlineAt: new Date(now + timeoutS * 1000) },
    };
  }

  /** A queued job → a local lane, through the conditional UPDATE. */
  async assign(job: JobRow, via: 'inline' | 'redrive'): Promise<AssignOutcome> {
    const runnable = await this.resolve(job.kind, job.spec);
    if (typeof runnable === 'string') return { kind: 'failed', job: await this.ledger.failUnrunnable(job.id, runnable) };
    const r = this.reserve(job.id, runnable);
    if (!r) return { kind: 'no_lane' };
    return this.ledger.claim(job, r, runnable, via);
  }

  /**
   * Queued jobs → local lanes, claimed in one statement: each job holds a lane for its kind
   * (in order, while lanes are free); outcomes in the jobs' order.
   */
  async assignMany(jobs: JobRow[], via: 'inline' | 'redrive'): Promise<AssignOutcome[]> {
    const outcomes: Array<AssignOutcome | Promise<AssignOutcome> | undefined> = [];
    const claims: Array<{ job: JobRow; r: Reservation; runnable: RunnableJob; at: number }> = [];
    for (const job of jobs) {
      const runnable = await this.resolve(job.kind, job.spec);
      if (typeof runnable === 'string') {
        outcomes.push(this.ledger.failUnrunnable(job.id, runnable).then((failed) => ({ kind: 'failed', job: failed })));
        continue;
      }
      const r = this.reserve(job.id, runnable);
      if (!r) {
        outcomes.push({ kind: 'no_lane' });
        continue;
      }
      claims.push({ job, r, runnable, at: outcomes.length });
      outcomes.push(undefined);
    }
    const claimed = await this.ledger.claimMany(claims, via);
    claims.forEach((c, i) => (outcomes[c.at] = claimed[i]));
    return Promise.all(outcomes as Array<AssignOutcome | Promise<AssignOutcome>>);
  }

  /**
   * New jobs of a batch in one statement: the first ones, while lanes for their kinds are
   * free, inserted running and sent; the rest queued for redrive. Returns the rows made.
   */
  async submitBatch(jobs: NewJob[]): Promise<JobRow[]> {
    const items: Array<{ job: NewJob; r?: Reservation; runnable?: RunnableJob }> = [];
    let lanesLeft = true;
    for (const job of jobs) {
      const runnable = lanesLeft ? await this.resolve(job.kind, job.spec) : undefined;
      const r = runnable === undefined || typeof runnable === 'string' ? undefined : this.reserve(job.id, runnable);
      if (runnable !== undefined && typeof runnable !== 'string' && !r) lanesLeft = this.lanes.hasFreeLane();
      items.push(r ? { job, r, runnable: runnable as RunnableJob } : { job });
    }
    return this.ledger.insertBatch(items);
  }

  /**
   * A new job: when a lane is free now, insert it running on that lane in one statement;
   * otherwise insert it queued. `created` is false when the idempotency key was used before.
   */
  async submit(req: JobRequest, job: NewJob): Promise<{ job: JobRow; created: boolean; outcome?: AssignOutcome }> {
    const runnable = await this.resolve(req.kind, req.spec as Record<string, unknown>);
    const r = typeof runnable === 'string' ? undefined : this.reserve(job.id, runnable);
    if (!r) return this.ledger.insertQueued(job);
    return this.ledger.insertRunning(job, r, runnable as RunnableJob);
  }

  /** A rerun runs the earlier job's kind and spec; returns an error string when it cannot. */
  private async resolve(kind: string, spec: Record<string, unknown>, depth = 0): Promise<RunnableJob | string> {
    if (kind !== 'rerun') return { kind, spec } as RunnableJob;
    if (depth >= 8) return 'rerun: chain of reruns too long';
    const sourceId = String(spec.job_id);
    const source = await this.store.getJob(sourceId);
    if (!source) return `rerun: job ${sourceId} not found`;
    const inner = await this.resolve(source.kind, source.spec, depth + 1);
    if (typeof inner === 'string' || typeof spec.timeout_s !== 'number') return inner;
    // The rerun's own timeout_s wins over the one it copies.
    return { kind: inner.kind, spec: { ...inner.spec, timeout_s: spec.timeout_s } } as RunnableJob;
  }
}
