// Hand one job to one local lane: pick, reserve the lane, write the assignment, send
// HubAssignJob, and undo both if the send fails. A queued job is taken with the conditional
// UPDATE (inline retries and the redrive loop); a new job that finds a free lane at once is
// inserted already running, one statement instead of two. The claim rules live here only.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { JobRequest, RunnableJob } from '../wire/job-spec.ts';
import { encode } from '../wire/protocol.ts';
import type { Clock } from '../ports/clock.ts';
import type { Claim, JobRow, JobStore, NewJob } from '../ports/job-store.ts';
import type { HubEvents } from './hub-events.ts';
import type { LocalFleet } from './local-fleet.ts';
import type { HubMetrics } from './metrics.ts';
import type { WorkerLink } from './worker-link.ts';

export type AssignOutcome =
  | { kind: 'assigned'; job: JobRow }
  /** No local lane is free right now. */
  | { kind: 'no_lane' }
  /** Someone else claimed it, or it is no longer queued: `job` is its current row. */
  | { kind: 'taken'; job: JobRow | undefined }
  /** The send failed and the claim was undone; the job is queued (released) again. */
  | { kind: 'send_failed' }
  /** The job can never run (e.g. rerun of an unknown job) and was failed. */
  | { kind: 'failed'; job: JobRow | undefined };

interface Reservation {
  link: WorkerLink;
  lane: number;
  claim: Claim;
}

export class Dispatcher {
  constructor(
    private readonly config: Config,
    private readonly store: JobStore,
    private readonly fleet: LocalFleet,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly events: HubEvents,
    private readonly metrics: HubMetrics,
  ) {}

  /**
   * Pick a worker and hold one of its lanes for `jobId` (synchronously: no pick can race it).
   * `spec` is what runs (a rerun's resolved spec), so its `timeout_s` sets the deadline.
   */
  private reserve(jobId: string, spec: { timeout_s?: number }): Reservation | undefined {
    const link = this.fleet.pick();
    if (!link) return undefined;
    const assignmentId = randomUUID();
    const lane = link.reserve({ kind: 'job', id: jobId, assignmentId });
    if (lane === undefined) return undefined;
    const now = this.clock.now();
    const timeoutS = spec.timeout_s ?? this.config.jobTimeoutS;
    return {
      link,
      lane,
      claim: { workerId: link.worker_id, hubId: this.config.hubId, lane, assignmentId, novncUrl: link.viewUrl(lane), now: new Date(now), deadlineAt: new Date(now + timeoutS * 1000) },
    };
  }

  private unreserve(r: Reservation, jobId: string): void {
    if (r.link.release(jobId) !== undefined) this.fleet.laneFreed();
  }

  /** Send the assignment; on failure undo the claim (the job is queued and released again). */
  private async send(r: Reservation, job: JobRow, runnable: RunnableJob, via: 'inline' | 'redrive'): Promise<AssignOutcome> {
    try {
      await r.link.socket.send(encode({ type: 'assign', job_id: job.id, assignment_id: r.claim.assignmentId, lane: r.lane, deadline: r.claim.deadlineAt.getTime(), ...runnable }));
    } catch (err) {
      this.log.warn({ job_id: job.id, worker_id: r.link.worker_id, err: String(err) }, 'assign send failed; claim undone');
      await this.store.unclaimJob(job.id, r.claim.assignmentId, new Date(this.clock.now()));
      this.unreserve(r, job.id);
      return { kind: 'send_failed' };
    }
    this.metrics.assignments.inc({ via });
    this.log.debug({ job_id: job.id, worker_id: r.link.worker_id, lane: r.lane, via }, 'job assigned');
    this.events.jobChanged(job);
    this.events.workersChanged();
    return { kind: 'assigned', job };
  }

  /** A queued job → a local lane, through the conditional UPDATE. */
  async assign(job: JobRow, via: 'inline' | 'redrive'): Promise<AssignOutcome> {
    const runnable = await this.resolve(job.kind, job.spec);
    if (typeof runnable === 'string') {
      const failed = await this.store.failJobIf(job.id, { status: 'queued' }, runnable, new Date(this.clock.now()));
      if (failed) this.events.jobChanged(failed);
      return { kind: 'failed', job: failed };
    }
    const r = this.reserve(job.id, runnable.spec);
    if (!r) return { kind: 'no_lane' };
    let claimed: JobRow | undefined;
    try {
      claimed = await this.store.claimQueuedJob(job.id, r.claim);
    } catch (err) {
      this.unreserve(r, job.id);
      throw err;
    }
    if (!claimed) {
      this.unreserve(r, job.id);
      return { kind: 'taken', job: await this.store.getJob(job.id) };
    }
    return this.send(r, claimed, runnable, via);
  }

  /**
   * A new job: when a lane is free now, insert it running on that lane in one statement;
   * otherwise insert it queued. `created` is false when the idempotency key was used before.
   */
  async submit(req: JobRequest, job: NewJob): Promise<{ job: JobRow; created: boolean; outcome: AssignOutcome | undefined }> {
    const spec = req.spec as Record<string, unknown>;
    const runnable = await this.resolve(req.kind, spec);
    const r = typeof runnable === 'string' ? undefined : this.reserve(job.id, runnable.spec);
    if (!r) {
      const inserted = await this.store.insertJob(job);
      return { ...inserted, outcome: undefined };
    }
    let inserted;
    try {
      inserted = await this.store.insertRunningJob(job, r.claim);
    } catch (err) {
      this.unreserve(r, job.id);
      throw err;
    }
    if (!inserted.created) {
      this.unreserve(r, job.id);
      return { ...inserted, outcome: undefined };
    }
    return { ...inserted, outcome: await this.send(r, inserted.job, runnable as RunnableJob, 'inline') };
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
