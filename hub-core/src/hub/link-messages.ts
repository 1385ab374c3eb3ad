// The frames of a linked worker after its hello: heartbeats, job reports, session replies;
// and what its link's end changes (sessions gone, owner key released).
import type { WorkerMessage } from '../wire/protocol.ts';
import { JobReports } from './job-reports.ts';
import type { LinkDeps } from './link-deps.ts';
import type { WorkerLink } from './worker-link.ts';

export class LinkMessages {
  private readonly reports: JobReports;

  constructor(private readonly d: LinkDeps) {
    this.reports = new JobReports(d);
  }

  /** Every result write started so far has settled. */
  settled(): Promise<void> {
    return this.reports.settled();
  }

  async onMessage(link: WorkerLink, msg: WorkerMessage): Promise<void> {
    link.seen(this.d.clock.now());
    switch (msg.type) {
      case 'hello':
        throw new Error('hello sent twice');
      case 'heartbeat': {
        const diskOk = () => link.ready && link.disk_pct < this.d.config.diskMaxPct;
        const before = diskOk();
        link.report(msg);
        this.d.sessions.onHeartbeat(link, msg.lanes);
        this.d.recycles.report(link.worker_id, msg.lane_recycles);
        // Heard on the worker's current link: this hub is its owner now (a stale link's queued heartbeat is not).
        this.d.publisher.mark(link, this.d.localLinks.get(link.worker_id) === link);
        this.d.events.workersChanged();
        // Its first disk figure (or one back under the limit) makes its free lanes pickable:
        // wake inline POSTs waiting for a lane, and redrive.
        if (!before && diskOk()) this.d.lanes.offer(link.freeLaneCount);
        return;
      }
      case 'job_started':
        return this.reports.started(link, msg);
      case 'job_result':
        return this.reports.result(link, msg);
      case 'job_rejected':
        return this.reports.rejected(link, msg);
      case 'session_reply':
        this.d.sessions.onReply(msg.request_id, msg, link);
        return;
      case 'session_closed':
        this.d.sessions.onClosed(link, msg.session_id, msg.reason);
        return;
      case 'cdp_closed':
        this.d.cdp.onClosed(link, msg.cdp_id, msg.reason);
        return;
      case 'thumb':
        this.d.wall.onLinkThumb(link, msg);
        return;
      case 'error':
        this.d.log.warn({ worker_id: link.worker_id, message: msg.message }, 'worker reported an error');
        return;
      case 'goodbye':
        // Written through at once: other hubs read the registry, and must not count it alive until WORKER_TTL.
        link.leave(this.d.clock.now());
        this.d.publisher.mark(link);
        await this.d.publisher.flush();
        this.d.log.info({ worker_id: link.worker_id, reason: msg.reason }, 'worker said goodbye');
        this.d.events.workersChanged();
        return;
    }
  }

  async onClose(link: WorkerLink): Promise<void> {
    const { localLinks, registry, config, log } = this.d;
    this.d.sessions.onLinkClosed(link);
    this.d.cdp.onLinkClosed(link);
    if (!localLinks.remove(link)) return; // replaced by a newer link of the same worker
    this.d.metrics.localWorkers.set(localLinks.size);
    // Its running jobs stay running: the reconciler fails them only after ORPHAN_GRACE, so a
    // worker that re-links in time keeps them.
    await this.d.publisher.flush();
    await registry.releaseOwnerIfMine(link.worker_id, config.hubId).catch((err: unknown) => log.warn({ err: String(err) }, 'owner release failed'));
    log.info({ worker_id: link.worker_id, in_flight: link.in_flight }, 'worker unlinked');
    this.d.events.workersChanged();
  }
}
