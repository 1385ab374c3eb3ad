// Every job transition this hub makes, in one place. Each method runs the one JobStore
// statement and then every consequence, always in this order: the lane hold released (the
// lane book wakes a waiter by itself), the console event, the metric, the frame to the
// worker. Routes, loops and link handlers call these methods; nothing else outside adapters/
// calls a state-changing JobStore method, so no caller can forget a step.
// An assignment is the one transition whose frame comes first: it counts only once sent, and
// a failed send is undone here (the job queued and released again).
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import type { RunnableJob } from '../wire/job-spec.ts';
import type { ReconcileAction } from '../domain/reconcile.ts';
import type { Clock } from '../ports/clock.ts';
import type { Claim, Finish, JobRow, JobStore, NewJob, WorkerStatus } from '../ports/job-store.ts';
import type { HubEvents } from './hub-events.ts';
import type { LaneBook } from './lane-book.ts';
import type { LocalLinks } from './local-links.ts';
import type { HubMetrics } from './metrics.ts';
import { ResultWrites } from './result-writes.ts';
import type { WorkerLink } from './worker-link.ts';

export type AssignOutcome =
  | { kind: 'assigned'; job: JobRow }
  /** No local lane is free right now. */
  | { kind: 'no_lane' }
  /** Someone else claimed it, or it is no longer queued: `job` is its current row. */
  | { kind: 'taken'; job: JobRow | undefined }
  /** The send failed and the claim was undone: `job` is the row queued (released) again. */
  | { kind: 'send_failed'; job: JobRow | undefined }
  /** The job can never run (e.g. rerun of an unknown job) and was failed. */
  | { kind: 'failed'; job: JobRow | undefined };

/** A lane held for one job and the claim that will be written for it. */
export interface Reservation {
  link: WorkerLink;
  lane: number;
  claim: Claim;
}

export interface LedgerDeps {
  store: JobStore;
  lanes: LaneBook;
  localLinks: LocalLinks;
  clock: Clock;
  log: Logger;
  events: HubEvents;
  metrics: HubMetrics;
}

export class JobLedger extends EventEmitter<{ released: [] }> {
  private readonly results: ResultWrites;

  constructor(private readonly d: LedgerDeps) {
    super();
    this.results = new ResultWrites({ one: (id, f) => d.store.finishJob(id, f), many: (finishes) => d.store.finishJobs(finishes) });
  }

  private now(): Date {
    return new Date(this.d.clock.now());
  }

  /** A new queued job; with an Idempotency-Key used before, the existing job and created=false. */
  async insertQueued(job: NewJob): Promise<{ job: JobRow; created: boolean }> {
    const inserted = await this.d.store.insertJob(job);
    if (inserted.created) {
      this.d.events.jobChanged(inserted.job);
      this.d.metrics.jobsSubmitted.inc();
    }
    return inserted;
  }

  /**
   * Many new jobs in one statement: those given a reservation (a lane was free when the batch
   * came) inserted running on it and sent, the rest queued and released (the redrive loop is
   * woken to place them at once). Returns the rows made, each as it stands after its send; a
   * job whose key was already held is left out (and its lane freed).
   */
  async insertBatch(jobs: Array<{ job: NewJob; r?: Reservation; runnable?: RunnableJob }>): Promise<JobRow[]> {
    if (jobs.length === 0) return [];
    let rows: JobRow[];
    try {
      rows = await this.d.store.insertBatch(jobs.map(({ job, r }) => (r ? { ...job, claim: r.claim } : job)));
    } catch (err) {
      for (const { job, r } of jobs) if (r) this.d.lanes.release(r.link, job.id, r.claim.assignmentId);
      throw err;
    }
    this.d.metrics.jobsSubmitted.inc(rows.length);
    const made = new Map(rows.map((row) => [row.id, row]));
    let queued = 0;
    const out = await Promise.all(
      jobs.map(async ({ job, r, runnable }) => {
        const row = made.get(job.id);
        if (r && (!row || row.status !== 'running')) this.d.lanes.release(r.link, job.id, r.claim.assignmentId);
        if (!row) return undefined;
        if (r && runnable && row.status === 'running') return (await this.send(r, row, runnable, 'inline')).job ?? row;
        queued++;
        this.d.events.jobChanged(row);
        return row;
      }),
    );
    if (queued > 0) this.emit('released');
    return out.filter((row): row is JobRow => row !== undefined);
  }

  /** The jobs holding these idempotency keys (a read: a batch checks its keys before inserting). */
  jobsByIdempotencyKeys(keys: string[]): Promise<JobRow[]> {
    return this.d.store.jobsByIdempotencyKeys(keys);
  }

  /** A new job that found a free lane before it was written: inserted running, then sent. */
  async insertRunning(job: NewJob, r: Reservation, runnable: RunnableJob): Promise<{ job: JobRow; created: boolean; outcome?: AssignOutcome }> {
    let inserted;
    try {
      inserted = await this.d.store.insertRunningJob(job, r.claim);
    } catch (err) {
      this.d.lanes.release(r.link, job.id, r.claim.assignmentId);
      throw err;
    }
    if (!inserted.created) {
      this.d.lanes.release(r.link, job.id, r.claim.assignmentId);
      return inserted;
    }
    this.d.metrics.jobsSubmitted.inc();
    const outcome = await this.send(r, inserted.job, runnable, 'inline');
    return { job: outcome.job ?? inserted.job, created: true, outcome };
  }

  /** A queued job → the reserved lane, through the conditional UPDATE, then sent. */
  async claim(job: JobRow, r: Reservation, runnable: RunnableJob, via: 'inline' | 'redrive'): Promise<AssignOutcome> {
    let claimed: JobRow | undefined;
    try {
      claimed = await this.d.store.claimQueuedJob(job.id, r.claim);
    } catch (err) {
      this.d.lanes.release(r.link, job.id, r.claim.assignmentId);
      throw err;
    }
    if (!claimed) {
      this.d.lanes.release(r.link, job.id, r.claim.assignmentId);
      return { kind: 'taken', job: await this.d.store.getJob(job.id) };
    }
    return this.send(r, claimed, runnable, via);
  }

  /**
   * Queued jobs → their reserved lanes, claimed in one statement and then each sent. A job the
   * statement did not claim (taken meanwhile, or locked by another claimer) frees its lane;
   * its outcome is 'taken' without a re-read row (`job` undefined).
   */
  async claimMany(items: Array<{ job: JobRow; r: Reservation; runnable: RunnableJob }>, via: 'inline' | 'redrive'): Promise<AssignOutcome[]> {
    if (items.length === 0) return [];
    if (items.length === 1) return [await this.claim(items[0].job, items[0].r, items[0].runnable, via)];
    let claimed: JobRow[];
    try {
      claimed = await this.d.store.claimQueuedJobs(items.map(({ job, r }) => ({ id: job.id, claim: r.claim })));
    } catch (err) {
      for (const { job, r } of items) this.d.lanes.release(r.link, job.id, r.claim.assignmentId);
      throw err;
    }
    const byId = new Map(claimed.map((row) => [row.id, row]));
    return Promise.all(
      items.map(({ job, r, runnable }): Promise<AssignOutcome> | AssignOutcome => {
        const row = byId.get(job.id);
        if (row) return this.send(r, row, runnable, via);
        this.d.lanes.release(r.link, job.id, r.claim.assignmentId);
        return { kind: 'taken', job: undefined };
      }),
    );
  }

  private async send(r: Reservation, job: JobRow, runnable: RunnableJob, via: 'inline' | 'redrive'): Promise<Extract<AssignOutcome, { kind: 'assigned' | 'send_failed' }>> {
    const { claim } = r;
    try {
      await r.link.assign({ jobId: job.id, assignmentId: claim.assignmentId, lane: r.lane, deadline: claim.deadlineAt.getTime(), runnable });
    } catch (err) {
      this.d.log.warn({ job_id: job.id, worker_id: r.link.worker_id, err: String(err) }, 'assign send failed; claim undone');
      await this.d.store.unclaimJob(job.id, claim.assignmentId, this.now());
      this.d.lanes.release(r.link, job.id, r.claim.assignmentId);
      const queued = await this.d.store.getJob(job.id);
      if (queued) this.d.events.jobChanged(queued);
      return { kind: 'send_failed', job: queued };
    }
    this.d.log.debug({ job_id: job.id, worker_id: r.link.worker_id, lane: r.lane, via }, 'job assigned');
    this.d.events.jobChanged(job);
    this.d.events.workersChanged();
    this.d.metrics.assignments.inc({ via });
    return { kind: 'assigned', job };
  }

  /** A queued job that can never run (e.g. a rerun of an unknown job). */
  async failUnrunnable(jobId: string, error: string): Promise<JobRow | undefined> {
    const failed = await this.d.store.failJobIf(jobId, { status: 'queued' }, error, this.now());
    if (failed) this.d.events.jobChanged(failed);
    return failed;
  }

  /** The worker refused an assignment: back to queued, then the lane freed (the wake-up finds it queued). */
  async reject(link: WorkerLink, jobId: string, assignmentId: string, reason: string): Promise<boolean> {
    const back = await this.d.store.unclaimJob(jobId, assignmentId, this.now(), link.worker_id);
    this.d.log.info({ job_id: jobId, worker_id: link.worker_id, reason, requeued: back }, 'worker rejected job');
    this.d.lanes.release(link, jobId, assignmentId);
    const row = await this.d.store.getJob(jobId);
    if (row) this.d.events.jobChanged(row);
    this.d.metrics.rejections.inc({ reason });
    return back;
  }

  /**
   * A worker's result for its own run (the caller checked that, and freed the lane the moment
   * the result arrived). Acked after the write: an unacked result is sent again after a
   * reconnect, and a repeat changes nothing (the UPDATE only matches the running assignment).
   * Results arriving together are written in one statement (result-writes.ts); each is still
   * acked only after the statement holding it committed.
   */
  async finish(link: WorkerLink, jobId: string, f: Omit<Finish, 'now' | 'workerId'>): Promise<JobRow | undefined> {
    const finished = await this.results.write(jobId, { ...f, workerId: link.worker_id, now: this.now() });
    if (finished) {
      this.d.events.jobChanged(finished);
      this.d.metrics.results.inc({ status: f.status });
    } else {
      this.d.log.info({ job_id: jobId, worker_id: link.worker_id }, 'stale or repeated result ignored');
    }
    this.d.events.workersChanged();
    await link.ack(jobId);
    return finished;
  }

  /**
   * Cancels a queued or running job; tells the worker when this hub holds its link. Who to tell
   * is read from the canceled row itself: a job claimed between a read and the cancel (redrive
   * took it) was not told, and ran to its end after the cancel was answered.
   */
  async cancel(id: string): Promise<{ job: JobRow; sentToWorker: boolean } | undefined> {
    const canceled = await this.d.store.cancelJob(id, this.now());
    if (!canceled) {
      // Not queued or running (any more): answer the row as it is now, not as it was.
      const now = await this.d.store.getJob(id);
      return now ? { job: now, sentToWorker: false } : undefined;
    }
    this.d.events.jobChanged(canceled);
    const link = canceled.worker_id ? this.d.localLinks.get(canceled.worker_id) : undefined;
    const sent = link ? await link.cancel(id, 'canceled by request') : false;
    return { job: canceled, sentToWorker: sent };
  }

  /** A peer hub canceled a job whose worker links here: pass the cancel on (the row is already canceled). */
  async cancelOnWorker(id: string): Promise<boolean> {
    const job = await this.d.store.getJob(id);
    const link = job?.worker_id ? this.d.localLinks.get(job.worker_id) : undefined;
    return link ? link.cancel(id, 'canceled by request') : false;
  }

  /** POST /jobs gave up its inline wait: redrive may take the job at once (no age gate). */
  async markReleased(id: string): Promise<JobRow | undefined> {
    await this.d.store.markReleased(id, this.now()).catch((err: unknown) => this.d.log.warn({ job_id: id, err: String(err) }, 'release mark failed'));
    this.emit('released');
    return this.d.store.getJob(id).catch(() => undefined);
  }

  /** Frees a job's Idempotency-Key when the job was created at or before `createdBefore`. */
  forgetIdempotencyKey(jobId: string, createdBefore: Date): Promise<boolean> {
    return this.d.store.forgetIdempotencyKey(jobId, createdBefore);
  }

  /** One decision of the reconciler, as a conditional UPDATE on the state it saw. */
  async reconcile(a: ReconcileAction): Promise<JobRow | undefined> {
    const failed =
      a.kind === 'fail_queued'
        ? await this.d.store.failJobIf(a.job_id, { status: 'queued' }, a.error, this.now())
        : await this.d.store.failJobIf(a.job_id, { status: 'running', assignmentId: a.assignment_id }, a.error, this.now());
    if (!failed) return undefined;
    this.d.log.warn({ job_id: a.job_id, reason: a.reason, error: a.error }, 'reconciler failed a stale job');
    this.d.events.jobChanged(failed);
    this.d.metrics.reconcilerActions.inc({ reason: a.reason });
    if (a.kind === 'fail_running' && a.worker_id) await this.d.localLinks.get(a.worker_id)?.cancel(a.job_id, a.error);
    return failed;
  }

  /**
   * A job the database says this worker runs, assigned before its hello, that the worker
   * neither holds nor has a result for, will never report. From a fresh agent process it may
   * have been running when the old process died: fail it (a rerun is the client's call). From
   * a re-link of the same process it was never started (the old link closed before this hello,
   * and anything started is held or has its result pending): queue it again. Jobs assigned
   * after the hello (another hub may still hold a stale link) are left to the next hello.
   */
  async settleRelinked(link: WorkerLink, hello: { known: ReadonlySet<string>; fresh: boolean; helloAt: Date }): Promise<void> {
    const { store, log, events, metrics } = this.d;
    for (const row of await store.listRunningOfWorker(link.worker_id, hello.helloAt)) {
      const assignmentId = row.session_id;
      if (!assignmentId || hello.known.has(assignmentId)) continue;
      if (hello.fresh) {
        const failed = await store.failJobIf(row.id, { status: 'running', assignmentId }, `worker ${link.worker_id} restarted while holding this job`, this.now());
        if (!failed) continue;
        log.warn({ job_id: row.id, worker_id: link.worker_id }, 'job failed: its worker restarted without it');
        events.jobChanged(failed);
        metrics.relinkOrphans.inc({ outcome: 'failed' });
      } else if (await store.unclaimJob(row.id, assignmentId, this.now(), link.worker_id)) {
        log.info({ job_id: row.id, worker_id: link.worker_id }, 'job queued again: its assignment was lost with the old link');
        const queued = await store.getJob(row.id);
        if (queued) events.jobChanged(queued);
        metrics.relinkOrphans.inc({ outcome: 'requeued' });
      }
    }
  }

  /** An operator's drain/standby/active, durable first: it outlives the link and this hub (re-read at every hello). */
  recordWorkerStatus(workerId: string, status: WorkerStatus, actor: string): Promise<void> {
    return this.d.store.setWorkerStatus(workerId, status, actor, this.now());
  }

  /** An operator forgot an offline worker: its stored status goes, the audit says who and what it was. */
  recordWorkerForgotten(workerId: string, actor: string, details: Record<string, unknown>): Promise<void> {
    return this.d.store.forgetWorker(workerId, actor, details, this.now());
  }
}
