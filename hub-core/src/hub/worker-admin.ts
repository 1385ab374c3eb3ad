// An operator's actions on one worker, wherever its link is: a status change (durable first,
// then pushed to the link here or forwarded once to the hub holding it), a cancel passed on
// to a worker linked here on behalf of the hub where the job was canceled, and forgetting an
// offline worker fleet-wide.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Registry } from '../ports/registry.ts';
import { PaprikaError } from '../wire/errors.ts';
import type { HubEvents } from './hub-events.ts';
import type { LocalLinks } from './local-links.ts';
import type { WorkerStatus } from '../ports/job-store.ts';
import type { JobLedger } from './job-ledger.ts';
import type { FleetViewReader, FleetWorker } from './fleet-view.ts';
import type { Forwarder } from './forwarder.ts';
import type { LinkService } from './link-service.ts';
import type { Hop, PeerRouting } from './peer-routing.ts';
import type { RegistryPublisher } from './registry-publisher.ts';

export interface WorkerAdminDeps {
  config: Pick<Config, 'hubId'>;
  ledger: Pick<JobLedger, 'recordWorkerStatus' | 'recordWorkerForgotten' | 'cancelOnWorker'>;
  links: Pick<LinkService, 'pushStatus'>;
  peers: Pick<PeerRouting, 'workerOwnerUrl'>;
  forwarder: Pick<Forwarder, 'forward'>;
  publisher: Pick<RegistryPublisher, 'flush'>;
  fleetView: Pick<FleetViewReader, 'read'>;
  localLinks: Pick<LocalLinks, 'get'>;
  registry: Pick<Registry, 'forgetWorker'>;
  events: Pick<HubEvents, 'workersChanged'>;
  log: Logger;
}

export type StatusChange =
  /** The owning hub applied it; its answer is passed through. */
  | { kind: 'forwarded'; body: unknown }
  /** Applied here (`appliedBy` this hub) or only stored (`nobody`: the worker is offline, or its hub did not answer 200). */
  | { kind: 'stored'; appliedBy: string; row: FleetWorker | undefined };

export class WorkerAdmin {
  constructor(private readonly d: WorkerAdminDeps) {}

  async setStatus(workerId: string, status: WorkerStatus, actor: string, hop: Hop): Promise<StatusChange> {
    // Durable first: the status outlives the link and this hub (re-read at every hello).
    await this.d.ledger.recordWorkerStatus(workerId, status, actor);
    let appliedBy = this.d.config.hubId;
    if (!(await this.d.links.pushStatus(workerId, status)) && !hop.forwarded) {
      const url = await this.d.peers.workerOwnerUrl(workerId);
      if (url) {
        const res = await this.d.forwarder.forward('admin.workers', url, 'PATCH', `/admin/workers/${workerId}`, { status }, hop.auth).catch((err: unknown) => {
          // Stored, but the worker was not told: not a 200 "applied by nobody" (that means offline).
          if (err instanceof PaprikaError) throw new PaprikaError(err.code, { ...(err.details as object), worker_id: workerId, status, stored: true, applied_by: 'nobody' }, `${err.message}. The status is stored; the worker, linked to that hub, applies it at its next link`, err.retryAfterS);
          throw err;
        });
        if (res.status === 200) return { kind: 'forwarded', body: res.body };
      }
      appliedBy = 'nobody'; // offline: the stored status applies when it links
    }
    await this.d.publisher.flush();
    const view = await this.d.fleetView.read();
    return { kind: 'stored', appliedBy, row: view.workers.find((w) => w.worker_id === workerId) };
  }

  /**
   * DELETE /admin/workers/:id: an offline worker leaves the fleet now instead of after
   * PAPRIKA_WORKER_FORGET_S. A live one is refused: forgetting it would only hide it until its
   * next heartbeat wrote it back, and its jobs would look orphaned meanwhile.
   */
  async forget(workerId: string, actor: string): Promise<{ worker_id: string; forgotten: true }> {
    const view = await this.d.fleetView.read();
    const row = view.workers.find((w) => w.worker_id === workerId);
    // Linked here and not leaving: alive whatever its heartbeat says.
    const linkedHere = this.d.localLinks.get(workerId);
    if (row?.alive || (linkedHere && linkedHere.left_at_ms === null)) {
      throw new PaprikaError('worker_alive', { worker_id: workerId, hub_id: row?.hub_id ?? linkedHere?.meta.hubId ?? null, last_seen: row ? new Date(row.last_seen_ms).toISOString() : null });
    }
    if (!row) throw new PaprikaError('not_found', { worker_id: workerId }, 'No such worker');
    await this.d.registry.forgetWorker(workerId);
    const details = { hub_id: row.hub_id, lan_ip: row.lan_ip, hostname: row.hostname, last_seen: new Date(row.last_seen_ms).toISOString(), left: row.left_at_ms != null };
    await this.d.ledger.recordWorkerForgotten(workerId, actor, details);
    this.d.log.warn({ worker_id: workerId, actor, ...details }, 'offline worker forgotten');
    this.d.events.workersChanged();
    return { worker_id: workerId, forgotten: true };
  }

  /** Sends a cancel to the worker running this job over its link here; false when it is not linked here. */
  cancelOnWorker(jobId: string): Promise<boolean> {
    return this.d.ledger.cancelOnWorker(jobId);
  }
}
