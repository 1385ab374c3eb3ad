// What a linked worker reports about its jobs — started, result, rejected — accepted only
// for runs that are its own: held on this link, or running in the database under this
// worker's id and the assignment it presents. Anything else gets an error reply and changes
// nothing (with the worker token alone, a client once finished other workers' jobs).
import type { Config } from '../config.ts';
import { storableCopy } from '../domain/storable-text.ts';
import type { WorkerMessage } from '../wire/protocol.ts';
import type { AssetStore } from '../ports/asset-store.ts';
import type { JobRow, JobStore } from '../ports/job-store.ts';
import type { Logger } from 'pino';
import type { JobLedger } from './job-ledger.ts';
import type { LaneBook } from './lane-book.ts';
import type { RegistryPublisher } from './registry-publisher.ts';
import type { WorkerLink } from './worker-link.ts';

export interface JobReportDeps {
  config: Config;
  store: JobStore;
  assets: AssetStore;
  ledger: JobLedger;
  lanes: LaneBook;
  publisher: RegistryPublisher;
  log: Logger;
}

export class JobReports {
  /** Results of held runs being written: the link reads its next frame meanwhile. */
  private readonly writing = new Set<Promise<void>>();

  constructor(private readonly d: JobReportDeps) {}

  /** Resolves once every result write started so far has settled (a stopping hub waits for them). */
  async settled(): Promise<void> {
    while (this.writing.size > 0) await Promise.allSettled([...this.writing]);
  }

  async started(link: WorkerLink, msg: Extract<WorkerMessage, { type: 'job_started' }>): Promise<void> {
    if ((await this.runOf(link, msg.job_id, msg.assignment_id)) === 'not_yours') await this.refuse(link, msg.type, msg.job_id);
  }

  async result(link: WorkerLink, msg: Extract<WorkerMessage, { type: 'job_result' }>): Promise<void> {
    const { store } = this.d;
    // The lane is free the moment the worker says so, whatever the database does next.
    const held = link.holding(msg.job_id)?.assignmentId === msg.assignment_id;
    if (held) {
      this.d.lanes.release(link, msg.job_id, msg.assignment_id);
      // Its run is this link's own: nothing to check against the database, so the link goes on
      // to its next frame while this result is written. Awaited here, every result of a link
      // waited for the one before it to commit (and its lane freed only then): one write per
      // link in flight, and the writes arriving together could never share a statement.
      const write = this.store(link, msg, true, undefined).catch((err: unknown) => {
        this.d.log.warn({ job_id: msg.job_id, worker_id: link.worker_id, err: String(err) }, 'result not stored; the worker sends it again');
      });
      this.writing.add(write);
      void write.finally(() => this.writing.delete(write));
      return;
    }
    // A worker may only report on its own jobs: assets for someone else's job are not stored.
    const row = await store.getJob(msg.job_id);
    if (row?.worker_id !== link.worker_id || row.session_id !== msg.assignment_id) {
      await this.refuse(link, msg.type, msg.job_id, row?.worker_id ?? null);
      if (row?.worker_id !== link.worker_id) return;
      // Its own job, but from an earlier run: ack so the worker stops resending it.
      await link.ack(msg.job_id);
      return;
    }
    await this.store(link, msg, false, row);
  }

  private async store(link: WorkerLink, msg: Extract<WorkerMessage, { type: 'job_result' }>, held: boolean, row: JobRow | undefined): Promise<void> {
    const { assets } = this.d;
    // Text Postgres cannot store (NUL, lone surrogates) is replaced, so a job that succeeded is
    // stored as succeeded; a write the database refuses for its data is reported, and the worker
    // stops re-sending after a bound. A database that is down is not reported: the result comes again.
    const result = storableCopy(msg.result ?? null, 'result');
    const error = storableCopy(msg.error ?? null, 'error');
    if (result.replaced + error.replaced > 0) this.d.log.warn({ job_id: msg.job_id, worker_id: link.worker_id, replaced: result.replaced + error.replaced, first: result.first ?? error.first }, 'unstorable text in a result replaced with U+FFFD');
    // Assets only for a run still open: a repeated result of a finished run stores nothing.
    if (held || row?.status === 'running') {
      for (const a of msg.assets ?? []) {
        // A lost asset must not lose the result: a put that throws would leave it unacked, sent again forever.
        await assets.put(msg.job_id, a.name, a.content_type, Buffer.from(a.data_base64, 'base64')).catch((err: unknown) => this.d.log.warn({ job_id: msg.job_id, asset: a.name, err: String(err) }, 'asset not stored'));
      }
    }
    try {
      await this.d.ledger.finish(link, msg.job_id, { assignmentId: msg.assignment_id, status: msg.status, result: result.value, error: error.value });
    } catch (err) {
      if (!isDataError(err)) throw err;
      this.d.log.error({ job_id: msg.job_id, worker_id: link.worker_id, err: String(err) }, 'the database refused a result');
      await link.refuseResult(msg.job_id, 'not_stored', `the database refused this result: ${String(err instanceof Error ? err.message : err).slice(0, 500)}`);
      return;
    }
    this.d.publisher.mark(link);
  }

  async rejected(link: WorkerLink, msg: Extract<WorkerMessage, { type: 'job_rejected' }>): Promise<void> {
    if ((await this.runOf(link, msg.job_id, msg.assignment_id)) === 'not_yours') return this.refuse(link, msg.type, msg.job_id);
    // Before the lane frees (in the ledger), so its wake-up does not pick this worker again:
    // a worker that says its disk is full is skipped until its next heartbeat says otherwise,
    if (msg.reason === 'disk_full') link.markDiskFull(this.d.config.diskMaxPct);
    // and a worker that is shutting down takes no more work on this link.
    if (msg.reason === 'shutting_down' && link.status === 'active') {
      link.setStatus('drain');
      this.d.publisher.mark(link);
    }
    await this.d.ledger.reject(link, msg.job_id, msg.assignment_id, msg.reason);
  }

  /** Whose run this is: held on this link, or the database's row for this worker and assignment. */
  private async runOf(link: WorkerLink, jobId: string, assignmentId: string): Promise<'held' | 'running' | 'ended' | 'not_yours'> {
    if (link.holding(jobId)?.assignmentId === assignmentId) return 'held';
    const row = await this.d.store.getJob(jobId);
    if (row?.worker_id !== link.worker_id || row.session_id !== assignmentId) return 'not_yours';
    return row.status === 'running' ? 'running' : 'ended';
  }

  /** A worker may only speak of its own runs: another's job gets an error reply and changes nothing. */
  private async refuse(link: WorkerLink, type: string, jobId: string, owner?: string | null): Promise<void> {
    this.d.log.warn({ job_id: jobId, worker_id: link.worker_id, type, owner }, 'refused a message about a job this worker does not hold');
    await link.error(`job ${jobId} is not yours`, { job_id: jobId, refused: type });
  }
}

/** Postgres class 22 (data exception): the row can never be written as sent, unlike a database that is down. */
function isDataError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code);
}
