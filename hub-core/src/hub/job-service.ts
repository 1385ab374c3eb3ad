// POST /jobs and POST /jobs/:id/cancel: insert on a free local lane; else hand it at once to
// the peer with the most free lanes (one hop, from the fleet-wide view); only when no lane in
// the fleet is free, wait up to ASSIGN_WAIT for one here, try the peers once more, and
// otherwise leave the job queued and *released* so redrive may take it at once.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { decideRepeat } from '../domain/idempotency.ts';
import type { JobRequest } from '../wire/job-spec.ts';
import { PaprikaError } from '../wire/errors.ts';
import { withDeadline, type Clock } from '../ports/clock.ts';
import type { JobRow } from '../ports/job-store.ts';
import type { Dispatcher } from './dispatcher.ts';
import type { JobLedger } from './job-ledger.ts';
import type { LaneBook } from './lane-book.ts';
import type { Hop, PeerRouting } from './peer-routing.ts';

/** A new job: its row, and the peer's answer when a peer took it (the route sends that). */
export interface Submitted {
  job: JobRow;
  created: boolean;
  placedOnPeer?: unknown;
}

export class JobService {
  private _stopping = false;
  /** Queued jobs as last counted (sampled by the stats loop, raised by each insert). */
  private queuedEstimate = 0;
  private inlineWaits = 0;
  private settled: (() => void) | undefined;

  constructor(
    private readonly config: Config,
    private readonly ledger: JobLedger,
    private readonly lanes: LaneBook,
    private readonly dispatcher: Dispatcher,
    private readonly peers: Pick<PeerRouting, 'placeOnPeer'>,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  /** True once the hub stops: new jobs get 503. */
  get stopping(): boolean {
    return this._stopping;
  }

  /** POSTs still inside their inline wait: shutdown waits for them to settle. */
  get pendingInline(): number {
    return this.inlineWaits;
  }

  /** The stats loop's count of queued jobs (the queue_full check reads it). */
  sampledQueued(count: number): void {
    this.queuedEstimate = count;
  }

  /**
   * Refuse new jobs, wake every inline wait so it releases its job now, and wait up to `ms`
   * for those POSTs to settle.
   */
  async drain(ms: number): Promise<void> {
    this._stopping = true;
    this.lanes.wakeAll();
    if (this.inlineWaits === 0) return;
    const none = new Promise<void>((resolve) => (this.settled = resolve));
    await withDeadline(this.clock, ms, 'inline waits', none).catch(() => {});
  }

  /** `hop`: how the request came; a job a peer forwarded is never forwarded again. */
  async submit(req: JobRequest, idempotencyKey: string | null, signal?: AbortSignal, hop: Hop = { forwarded: true, auth: {} }): Promise<Submitted> {
    if (this._stopping) throw new PaprikaError('shutting_down', null, undefined, 1);
    if (this.queuedEstimate >= this.config.maxQueued) {
      throw new PaprikaError('queue_full', { queued: this.queuedEstimate, max_queued: this.config.maxQueued }, undefined, 5);
    }
    const newJob = { id: randomUUID(), kind: req.kind, spec: req.spec as Record<string, unknown>, hubId: this.config.hubId, idempotencyKey, now: new Date(this.clock.now()) };
    let submitted = await this.insert(req, newJob);
    // Twice at most: a key found expired is forgotten, and the second insert either takes it or
    // meets a job created a moment ago (never expired) by a concurrent request.
    for (let attempt = 0; !submitted.created; attempt++) {
      const verdict = decideRepeat(submitted.job, req, this.clock.now(), this.config.idempotencyTtlS);
      if (verdict === 'same_request') return submitted;
      if (verdict === 'different_request' || attempt > 0) {
        throw new PaprikaError('idempotency_key_reused', { idempotency_key: idempotencyKey, job_id: submitted.job.id });
      }
      await this.ledger.forgetIdempotencyKey(submitted.job.id, new Date(this.clock.now() - this.config.idempotencyTtlS * 1000));
      submitted = await this.insert(req, newJob);
    }
    if (submitted.outcome?.kind === 'assigned') return { job: submitted.outcome.job, created: true };
    // No local lane: a hub whose lanes are busy (or that holds no worker) made every POST wait
    // the whole ASSIGN_WAIT while peers had idle lanes (8 s on half the requests behind nginx).
    const early = await this.peers.placeOnPeer(submitted.job, hop);
    if (early !== undefined) return { job: submitted.job, created: true, placedOnPeer: early };
    this.queuedEstimate++;
    this.inlineWaits++;
    let job: JobRow;
    try {
      job = await this.assignInline(submitted.job, signal);
    } finally {
      this.inlineWaits--;
      if (this.inlineWaits === 0) this.settled?.();
    }
    // The whole fleet was full: a peer's lane may have freed during the wait.
    const late = job.status === 'queued' && !this._stopping ? await this.peers.placeOnPeer(job, hop) : undefined;
    return late === undefined ? { job, created: true } : { job, created: true, placedOnPeer: late };
  }

  private async insert(req: JobRequest, newJob: Parameters<Dispatcher['submit']>[1]) {
    try {
      return await this.dispatcher.submit(req, newJob);
    } catch (err) {
      this.log.error({ err: String(err) }, 'job insert failed');
      throw new PaprikaError('database_unavailable', null, undefined, 2);
    }
  }

  private async assignInline(job: JobRow, signal?: AbortSignal): Promise<JobRow> {
    const until = this.clock.now() + this.config.assignWaitS * 1000;
    for (;;) {
      let outcome;
      try {
        outcome = await this.dispatcher.assign(job, 'inline');
      } catch (err) {
        // The job is inserted; redrive will take it. The client still gets its id.
        this.log.warn({ job_id: job.id, err: String(err) }, 'inline assignment failed');
        break;
      }
      if (outcome.kind === 'assigned') return outcome.job;
      if (outcome.kind === 'taken' || outcome.kind === 'failed') return outcome.job ?? job;
      if (outcome.kind === 'send_failed') continue; // claim undone; pick again at once
      const left = until - this.clock.now();
      if (left <= 0 || signal?.aborted || this._stopping) break;
      await this.lanes.waitForLane(left, signal);
    }
    // Released: the POST no longer holds it, so redrive need not wait out the age gate.
    return (await this.ledger.markReleased(job.id)) ?? job;
  }

  /** Cancels a queued or running job; tells the worker when this hub holds it. */
  cancel(id: string): Promise<{ job: JobRow; sentToWorker: boolean } | undefined> {
    return this.ledger.cancel(id);
  }
}
