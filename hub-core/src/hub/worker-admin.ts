// An operator's actions on one worker, wherever its link is: a status change (durable first,
// then pushed to the link here or forwarded once to the hub holding it) and a cancel passed on
// to a worker linked here on behalf of the hub where the job was canceled.
import type { Config } from '../config.ts';
import type { WorkerStatus } from '../ports/job-store.ts';
import type { JobLedger } from './job-ledger.ts';
import type { FleetViewReader, FleetWorker } from './fleet-view.ts';
import type { Forwarder } from './forwarder.ts';
import type { LinkService } from './link-service.ts';
import type { Hop, PeerRouting } from './peer-routing.ts';
import type { RegistryPublisher } from './registry-publisher.ts';

export interface WorkerAdminDeps {
  config: Pick<Config, 'hubId'>;
  ledger: Pick<JobLedger, 'recordWorkerStatus' | 'cancelOnWorker'>;
  links: Pick<LinkService, 'pushStatus'>;
  peers: Pick<PeerRouting, 'workerOwnerUrl'>;
  forwarder: Pick<Forwarder, 'forward'>;
  publisher: Pick<RegistryPublisher, 'flush'>;
  fleetView: Pick<FleetViewReader, 'read'>;
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
        const res = await this.d.forwarder.forward('admin.workers', url, 'PATCH', `/admin/workers/${workerId}`, { status }, hop.auth);
        if (res.status === 200) return { kind: 'forwarded', body: res.body };
      }
      appliedBy = 'nobody'; // offline: the stored status applies when it links
    }
    await this.d.publisher.flush();
    const view = await this.d.fleetView.read();
    return { kind: 'stored', appliedBy, row: view.workers.find((w) => w.worker_id === workerId) };
  }

  /** Sends a cancel to the worker running this job over its link here; false when it is not linked here. */
  cancelOnWorker(jobId: string): Promise<boolean> {
    return this.d.ledger.cancelOnWorker(jobId);
  }
}
