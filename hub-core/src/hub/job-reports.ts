// What a linked worker reports about its jobs — started, result, rejected — accepted only
// for runs that are its own: held on this link, or running in the database under this
// worker's id and the assignment it presents. Anything else gets an error reply and changes
// nothing (with the worker token alone, a client once finished other workers' jobs).
import type { Config } from '../config.ts';
import type { WorkerMessage } from '../wire/protocol.ts';
import type { AssetStore } from '../ports/asset-store.ts';
import type { JobStore } from '../ports/job-store.ts';
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
  constructor(private readonly d: JobReportDeps) {}

  async started(link: WorkerLink, msg: Extract<WorkerMessage, { type: 'job_started' }>): Promise<void> {
    if ((await this.runOf(link, msg.job_id, msg.assignment_id)) === 'not_yours') await this.refuse(link, msg.type, msg.job_id);
  }

  async result(link: WorkerLink, msg: Extract<WorkerMessage, { type: 'job_result' }>): Promise<void> {
    const { store, assets } = this.d;
    // The lane is free the moment the worker says so, whatever the database does next.
    const held = link.holding(msg.job_id)?.assignmentId === msg.assignment_id;
    if (held) this.d.lanes.release(link, msg.job_id);
    // A worker may only report on its own jobs: assets for someone else's job are not stored.
    const row = held ? undefined : await store.getJob(msg.job_id);
    const mine = held || (row?.worker_id === link.worker_id && row.session_id === msg.assignment_id);
    if (!mine) {
      await this.refuse(link, msg.type, msg.job_id, row?.worker_id ?? null);
      if (row?.worker_id !== link.worker_id) return;
      // Its own job, but from an earlier run: ack so the worker stops resending it.
      await link.ack(msg.job_id);
      return;
    }
    // Assets only for a run still open: a repeated result of a finished run stores nothing.
    if (held || row?.status === 'running') {
      for (const a of msg.assets ?? []) {
        // A lost asset must not lose the result: a put that throws would leave it unacked, sent again forever.
        await assets.put(msg.job_id, a.name, a.content_type, Buffer.from(a.data_base64, 'base64')).catch((err: unknown) => this.d.log.warn({ job_id: msg.job_id, asset: a.name, err: String(err) }, 'asset not stored'));
      }
    }
    await this.d.ledger.finish(link, msg.job_id, { assignmentId: msg.assignment_id, status: msg.status, result: msg.result ?? null, error: msg.error ?? null });
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
