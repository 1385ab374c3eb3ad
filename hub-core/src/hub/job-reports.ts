// What a linked worker reports about its jobs — started, result, rejected — accepted only
// for runs that are its own: held on this link, or running in the database under this
// worker's id and the assignment it presents. Anything else gets an error reply and changes
// nothing (with the worker token alone, a client once finished other workers' jobs).
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { encode, type WorkerMessage } from '../protocol.ts';
import type { AssetStore } from '../ports/asset-store.ts';
import type { Clock } from '../ports/clock.ts';
import type { JobStore } from '../ports/job-store.ts';
import type { HubEvents } from './hub-events.ts';
import type { LocalFleet } from './local-fleet.ts';
import type { HubMetrics } from './metrics.ts';
import type { RegistryPublisher } from './registry-publisher.ts';
import type { WorkerLink } from './worker-link.ts';

/** The parts of the link service's dependencies reports use (declared here: link-service.ts imports this file). */
export interface JobReportDeps {
  config: Config;
  store: JobStore;
  assets: AssetStore;
  fleet: LocalFleet;
  publisher: RegistryPublisher;
  clock: Clock;
  log: Logger;
  events: HubEvents;
  metrics: HubMetrics;
}

export class JobReports {
  constructor(private readonly d: JobReportDeps) {}

  async started(link: WorkerLink, msg: Extract<WorkerMessage, { type: 'job_started' }>): Promise<void> {
    if ((await this.runOf(link, msg.job_id, msg.assignment_id)) === 'not_yours') await this.refuse(link, msg.type, msg.job_id);
  }

  async result(link: WorkerLink, msg: Extract<WorkerMessage, { type: 'job_result' }>): Promise<void> {
    const { store, assets, clock, log } = this.d;
    // The lane is free the moment the worker says so, whatever the database does next.
    const hold = link.holding(msg.job_id);
    if (hold?.assignmentId === msg.assignment_id && link.release(msg.job_id) !== undefined) this.d.fleet.laneFreed();
    // A worker may only report on its own jobs: assets for someone else's job are not stored.
    const row = hold?.assignmentId === msg.assignment_id ? undefined : await store.getJob(msg.job_id);
    const mine = hold?.assignmentId === msg.assignment_id || (row?.worker_id === link.worker_id && row.session_id === msg.assignment_id);
    if (!mine) {
      await this.refuse(link, msg.type, msg.job_id, row?.worker_id ?? null);
      if (row?.worker_id !== link.worker_id) return;
      // Its own job, but from an earlier run: ack so the worker stops resending it.
      await link.socket.send(encode({ type: 'result_ack', job_id: msg.job_id })).catch(() => {});
      return;
    }
    // Assets only for a run still open: a repeated result of a finished run stores nothing.
    if (hold?.assignmentId === msg.assignment_id || row?.status === 'running') for (const a of msg.assets ?? []) await assets.put(msg.job_id, a.name, a.content_type, Buffer.from(a.data_base64, 'base64'));
    const finished = await store.finishJob(msg.job_id, {
      assignmentId: msg.assignment_id,
      workerId: link.worker_id,
      status: msg.status,
      result: msg.result ?? null,
      error: msg.error ?? null,
      now: new Date(clock.now()),
    });
    // Ack after the write: an unacked result is sent again after a reconnect, and a repeat
    // changes nothing (the UPDATE only matches a running row with this assignment).
    await link.socket.send(encode({ type: 'result_ack', job_id: msg.job_id })).catch(() => {});
    if (finished) {
      this.d.metrics.results.inc({ status: msg.status });
      this.d.events.jobChanged(finished);
    } else {
      log.info({ job_id: msg.job_id, worker_id: link.worker_id }, 'stale or repeated result ignored');
    }
    this.d.publisher.mark(link);
    this.d.events.workersChanged();
  }

  async rejected(link: WorkerLink, msg: Extract<WorkerMessage, { type: 'job_rejected' }>): Promise<void> {
    const { store, clock, log, config } = this.d;
    if ((await this.runOf(link, msg.job_id, msg.assignment_id)) === 'not_yours') return this.refuse(link, msg.type, msg.job_id);
    // Put the job back first, then free the lane: the wake-up must find it queued.
    const back = await store.unclaimJob(msg.job_id, msg.assignment_id, new Date(clock.now()), link.worker_id);
    this.d.metrics.rejections.inc({ reason: msg.reason });
    // A worker that says its disk is full is skipped until its next heartbeat says otherwise.
    if (msg.reason === 'disk_full') link.disk_pct = Math.max(link.disk_pct, config.diskMaxPct);
    // A worker that is shutting down takes no more work on this link: pick others meanwhile.
    if (msg.reason === 'shutting_down' && link.status === 'active') {
      link.status = 'drain';
      this.d.publisher.mark(link);
    }
    log.info({ job_id: msg.job_id, worker_id: link.worker_id, reason: msg.reason, requeued: back }, 'worker rejected job');
    if (link.release(msg.job_id) !== undefined) this.d.fleet.laneFreed();
    const row = await store.getJob(msg.job_id);
    if (row) this.d.events.jobChanged(row);
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
    await link.socket.send(encode({ type: 'error', message: `job ${jobId} is not yours`, details: { job_id: jobId, refused: type } })).catch(() => {});
  }
}
