// Hand one queued job to one local lane: pick, reserve the lane, claim the row with the
// conditional UPDATE, send HubAssignJob, and undo both if the send fails. Inline POSTs and
// the redrive loop both come through here, so the claim rules live in one place.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { RunnableJob } from '../domain/job-spec.ts';
import { encode } from '../protocol.ts';
import type { Clock } from '../ports/clock.ts';
import type { JobRow, JobStore } from '../ports/job-store.ts';
import type { HubEvents } from './hub-events.ts';
import type { LocalFleet } from './local-fleet.ts';
import type { HubMetrics } from './metrics.ts';

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

  async assign(job: JobRow, via: 'inline' | 'redrive'): Promise<AssignOutcome> {
    const runnable = await this.resolve(job);
    if (typeof runnable === 'string') {
      const failed = await this.store.failJobIf(job.id, { status: 'queued' }, runnable, new Date(this.clock.now()));
      if (failed) this.events.jobChanged(failed);
      return { kind: 'failed', job: failed };
    }
    const link = this.fleet.pick();
    if (!link) return { kind: 'no_lane' };
    const assignmentId = randomUUID();
    const lane = link.reserve({ kind: 'job', id: job.id, assignmentId });
    if (lane === undefined) return { kind: 'no_lane' };

    const now = this.clock.now();
    const timeoutS = typeof job.spec.timeout_s === 'number' ? job.spec.timeout_s : this.config.jobTimeoutS;
    const deadline = now + timeoutS * 1000;
    let claimed: JobRow | undefined;
    try {
      claimed = await this.store.claimQueuedJob(job.id, {
        workerId: link.worker_id,
        hubId: this.config.hubId,
        lane,
        assignmentId,
        novncUrl: link.viewUrl(lane),
        now: new Date(now),
        deadlineAt: new Date(deadline),
      });
    } catch (err) {
      this.freeLane(link, job.id);
      throw err;
    }
    if (!claimed) {
      this.freeLane(link, job.id);
      return { kind: 'taken', job: await this.store.getJob(job.id) };
    }

    try {
      await link.socket.send(encode({ type: 'assign', job_id: job.id, assignment_id: assignmentId, lane, deadline, job: runnable }));
    } catch (err) {
      this.log.warn({ job_id: job.id, worker_id: link.worker_id, err: String(err) }, 'assign send failed; claim undone');
      await this.store.unclaimJob(job.id, assignmentId, new Date(this.clock.now()));
      this.freeLane(link, job.id);
      return { kind: 'send_failed' };
    }
    this.metrics.assignments.inc({ via });
    this.log.debug({ job_id: job.id, worker_id: link.worker_id, lane, via }, 'job assigned');
    this.events.jobChanged(claimed);
    this.events.workersChanged();
    return { kind: 'assigned', job: claimed };
  }

  private freeLane(link: { release(id: string): number | undefined }, jobId: string): void {
    if (link.release(jobId) !== undefined) this.fleet.laneFreed();
  }

  /** A rerun runs the earlier job's kind and spec; returns an error string when it cannot. */
  private async resolve(job: JobRow, depth = 0): Promise<RunnableJob | string> {
    if (job.kind !== 'rerun') return { kind: job.kind, spec: job.spec } as RunnableJob;
    if (depth >= 8) return 'rerun: chain of reruns too long';
    const sourceId = String(job.spec.job_id);
    const source = await this.store.getJob(sourceId);
    if (!source) return `rerun: job ${sourceId} not found`;
    if (source.kind === 'rerun') return this.resolve(source, depth + 1);
    const spec = { ...source.spec };
    if (typeof job.spec.timeout_s === 'number') spec.timeout_s = job.spec.timeout_s;
    return { kind: source.kind, spec } as RunnableJob;
  }
}
