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
import type { JobRow, NewJob } from '../ports/job-store.ts';
import type { Dispatcher } from './dispatcher.ts';
import type { JobLedger } from './job-ledger.ts';
import type { LaneBook } from './lane-book.ts';
import type { Hop, PeerRouting } from './peer-routing.ts';

/** One item of POST /jobs/batch, validated. */
export interface BatchItem {
  req: JobRequest;
  key: string | null;
}

/** A new job: its row, and the peer's answer when a peer took it (the route sends that). */
export interface Submitted {
  job: JobRow;
  created: boolean;
  placedOnPeer?: unknown;
}

/** How often a POST waiting for a lane here asks whether a peer's lane is free. */
const PEER_RECHECK_MS = 500;

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
    let placed: unknown;
    try {
      // While it waits for a lane here, a peer's lane that frees takes the job too (peers publish
      // a freed lane at once): a hub without free lanes of its own made the POST wait the whole
      // ASSIGN_WAIT while another hub's lane was idle (8.1 s against 0.9 s on the other hub).
      ({ job, placed } = await this.assignInline(submitted.job, signal, () => this.peers.placeOnPeer(submitted.job, hop)));
    } finally {
      this.inlineWaits--;
      if (this.inlineWaits === 0) this.settled?.();
    }
    if (placed !== undefined) return { job, created: true, placedOnPeer: placed };
    // The whole fleet was full: a peer's lane may have freed at the very end of the wait.
    const late = job.status === 'queued' && !this._stopping ? await this.peers.placeOnPeer(job, hop) : undefined;
    return late === undefined ? { job, created: true } : { job, created: true, placedOnPeer: late };
  }

  /**
   * POST /jobs/batch: every new job in one INSERT — those that find a free local lane inserted
   * running on it and sent, the rest queued and released (redrive, woken by the insert, places
   * them).
   * A key repeated with a different request (inside the batch or against an earlier job) is a
   * 422 naming the item, checked before anything is written. Answers in the items' order.
   */
  async submitMany(items: BatchItem[]): Promise<JobRow[]> {
    if (this._stopping) throw new PaprikaError('shutting_down', null, undefined, 1);
    if (this.queuedEstimate + items.length > this.config.maxQueued) {
      throw new PaprikaError('queue_full', { queued: this.queuedEstimate, max_queued: this.config.maxQueued }, undefined, 5);
    }
    const now = this.clock.now();
    const byKey = new Map<string, { index: number; row?: JobRow }>();
    const keys = items.flatMap((it) => (it.key === null ? [] : [it.key]));
    const existing = new Map((await this.guarded(() => this.ledger.jobsByIdempotencyKeys(keys))).map((row) => [row.idempotency_key as string, row]));
    const fresh: NewJob[] = [];
    const out: (JobRow | NewJob)[] = [];
    for (const [index, { req, key }] of items.entries()) {
      const first = key === null ? undefined : byKey.get(key);
      if (first !== undefined) {
        // The same key earlier in this batch: the same request is the same job.
        if (decideRepeat({ kind: items[first.index].req.kind, spec: items[first.index].req.spec, created_at: new Date(now) }, req, now, this.config.idempotencyTtlS) !== 'same_request') {
          throw new PaprikaError('idempotency_key_reused', { index, idempotency_key: key, same_as_index: first.index });
        }
        out.push(out[first.index]);
        continue;
      }
      const held = key === null ? undefined : existing.get(key);
      const verdict = held && decideRepeat(held, req, now, this.config.idempotencyTtlS);
      if (held && verdict === 'different_request') throw new PaprikaError('idempotency_key_reused', { index, idempotency_key: key, job_id: held.id });
      if (held && verdict === 'expired') await this.guarded(() => this.ledger.forgetIdempotencyKey(held.id, new Date(now - this.config.idempotencyTtlS * 1000)));
      if (key !== null) byKey.set(key, { index });
      if (held && verdict === 'same_request') {
        out.push(held);
        continue;
      }
      const job: NewJob = { id: randomUUID(), kind: req.kind, spec: req.spec as Record<string, unknown>, hubId: this.config.hubId, idempotencyKey: key, now: new Date(now) };
      fresh.push(job);
      out.push(job);
    }
    const made = new Map((await this.guarded(() => this.dispatcher.submitBatch(fresh))).map((row) => [row.id, row]));
    this.queuedEstimate += made.size;
    // A key taken by a concurrent request between the check and the insert: its job instead.
    const lost = fresh.filter((j) => !made.has(j.id));
    const raced = new Map((await this.guarded(() => this.ledger.jobsByIdempotencyKeys(lost.map((j) => j.idempotencyKey as string)))).map((r) => [r.idempotency_key as string, r]));
    const rows = out.map((j, index): JobRow => {
      if (!('now' in j)) return j;
      const row = made.get(j.id) ?? raced.get(j.idempotencyKey as string);
      if (!row) throw new PaprikaError('database_unavailable', null, undefined, 2);
      if (!made.has(j.id) && decideRepeat(row, items[index].req, now, this.config.idempotencyTtlS) !== 'same_request') {
        throw new PaprikaError('idempotency_key_reused', { index, idempotency_key: j.idempotencyKey, job_id: row.id });
      }
      return row;
    });
    return rows;
  }

  private async guarded<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      this.log.error({ err: String(err) }, 'batch insert failed');
      throw new PaprikaError('database_unavailable', null, undefined, 2);
    }
  }

  private async insert(req: JobRequest, newJob: Parameters<Dispatcher['submit']>[1]) {
    try {
      return await this.dispatcher.submit(req, newJob);
    } catch (err) {
      this.log.error({ err: String(err) }, 'job insert failed');
      throw new PaprikaError('database_unavailable', null, undefined, 2);
    }
  }

  /**
   * Wait up to ASSIGN_WAIT for a local lane; every PEER_RECHECK_MS of it (and whenever a local
   * lane frees without taking it) `peer` may place the job on another hub instead (`placed`).
   */
  private async assignInline(job: JobRow, signal: AbortSignal | undefined, peer: () => Promise<unknown>): Promise<{ job: JobRow; placed?: unknown }> {
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
      if (outcome.kind === 'assigned') return { job: outcome.job };
      if (outcome.kind === 'taken' || outcome.kind === 'failed') return { job: outcome.job ?? job };
      if (outcome.kind === 'send_failed') continue; // claim undone; pick again at once
      const left = until - this.clock.now();
      if (left <= 0 || signal?.aborted || this._stopping) break;
      // A lane freed here: try it first (this waiter took its wake-up, so nobody else would).
      if (await this.lanes.waitForLane(Math.min(left, PEER_RECHECK_MS), signal)) continue;
      if (signal?.aborted || this._stopping) break;
      // Bounded by the wait left: a frozen peer must not hold the POST (or a stopping hub) past ASSIGN_WAIT.
      const placed = await withDeadline(this.clock, Math.max(1, until - this.clock.now()), 'peer placement', peer()).catch(() => undefined);
      if (placed !== undefined) return { job, placed };
    }
    // Released: the POST no longer holds it, so redrive need not wait out the age gate.
    return { job: (await this.ledger.markReleased(job.id)) ?? job };
  }

  /** Cancels a queued or running job; tells the worker when this hub holds it. */
  cancel(id: string): Promise<{ job: JobRow; sentToWorker: boolean } | undefined> {
    return this.ledger.cancel(id);
  }
}
