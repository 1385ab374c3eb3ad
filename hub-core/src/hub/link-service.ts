// The hub's end of a worker link: challenge → hello (with the proof of the worker's id) →
// welcome, heartbeats, results, rejections and session replies. Every frame is parsed at this edge; a malformed one gets an error reply
// and a log line, never an exception that could take the hub down.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { WebSocket } from 'ws';
import type { Config } from '../config.ts';
import { encode, parseWorkerMessage, type WorkerMessage } from '../wire/protocol.ts';
import type { AssetStore } from '../ports/asset-store.ts';
import type { Clock } from '../ports/clock.ts';
import type { JobStore } from '../ports/job-store.ts';
import type { Registry } from '../ports/registry.ts';
import type { HubEvents } from './hub-events.ts';
import { JobReports } from './job-reports.ts';
import type { LocalFleet } from './local-fleet.ts';
import type { HubMetrics } from './metrics.ts';
import type { RegistryPublisher } from './registry-publisher.ts';
import type { RecycleCounter } from './recycle-counter.ts';
import type { SessionService } from './sessions.ts';
import type { WorkerEnrollment } from './worker-enrollment.ts';
import type { UrlGuard } from './url-guard.ts';
import { WorkerLink, type LinkSocket } from './worker-link.ts';

const HELLO_TIMEOUT_MS = 10_000;
/** Close code of a link whose hello did not prove its worker id (the HTTP 401 of links). */
export const LINK_UNAUTHORIZED = 4401;

export interface LinkDeps {
  config: Config;
  store: JobStore;
  registry: Registry;
  assets: AssetStore;
  fleet: LocalFleet;
  sessions: SessionService;
  publisher: RegistryPublisher;
  enrollment: WorkerEnrollment;
  clock: Clock;
  log: Logger;
  events: HubEvents;
  metrics: HubMetrics;
  urls: UrlGuard;
  recycles: RecycleCounter;
}

function socketOf(ws: WebSocket): LinkSocket {
  return {
    send: (text) =>
      new Promise((resolve, reject) => {
        if (ws.readyState !== ws.OPEN) return reject(new Error('link is not open'));
        ws.send(text, (err) => (err ? reject(err) : resolve()));
      }),
    close: (code, reason) => ws.close(code, reason),
    get open() {
      return ws.readyState === ws.OPEN;
    },
  };
}

export class LinkService {
  private readonly reports: JobReports;
  constructor(private readonly d: LinkDeps) {
    this.reports = new JobReports(d);
  }

  /**
   * Takes over an upgraded socket for `workerId`. The worker token (checked by the HTTP layer)
   * only let it in: the hello must prove the id for this link's nonce before anything of that
   * worker — its current link, jobs or status — is touched.
   */
  accept(ws: WebSocket, workerId: string, remote?: string): void {
    const socket = socketOf(ws);
    let link: WorkerLink | undefined;
    let refused = false;
    let queue = Promise.resolve();
    const nonce = randomBytes(32).toString('hex');
    const helloTimer = setTimeout(() => {
      if (!link) ws.close(4000, 'no hello');
    }, HELLO_TIMEOUT_MS);
    socket.send(encode({ type: 'challenge', nonce })).catch(() => {});

    ws.on('message', (data, isBinary) => {
      const parsed = parseWorkerMessage(isBinary ? data : data.toString());
      if (!parsed.ok) {
        this.d.log.warn({ worker_id: workerId, error: parsed.error, details: parsed.details }, 'bad message from worker');
        socket.send(encode({ type: 'error', message: parsed.error, details: parsed.details })).catch(() => {});
        return;
      }
      // One message at a time per link, in order: a result never overtakes its job_started.
      queue = queue
        .then(async () => {
          const msg = parsed.value;
          if (refused) return;
          if (!link) {
            if (msg.type !== 'hello') throw new Error(`expected hello first, got ${msg.type}`);
            if (msg.worker_id !== workerId) throw new Error(`hello for ${msg.worker_id} on the link of ${workerId}`);
            clearTimeout(helloTimer);
            // The link is known before any await, so a socket that closes mid-hello is still cleaned up.
            try {
              const verdict = await this.d.enrollment.verifyLink(workerId, nonce, msg.proof);
              if (!verdict.ok) {
                refused = true;
                this.d.log.warn({ worker_id: workerId, code: verdict.code, remote }, 'link refused: the hello did not prove the worker id');
                await socket.send(encode({ type: 'error', message: verdict.message, details: { code: verdict.code } })).catch(() => {});
                socket.close(LINK_UNAUTHORIZED, verdict.code);
                return;
              }
              await this.onHello(socket, msg, (l) => (link = l));
            } catch (err) {
              // Without a welcome the worker would wait forever: close, and it links again with backoff.
              this.d.log.warn({ worker_id: workerId, err: String(err) }, 'hello failed; closing the link');
              socket.close(1011, 'hello failed');
              // An old link this hello superseded is dead (the worker holds one link at a time):
              // close it too rather than keep it, unpickable, until the worker's next hello.
              const old = this.d.fleet.get(workerId);
              if (old?.superseded) old.socket.close(4001, 'replaced by a new link');
            }
            return;
          }
          await this.onMessage(link, msg);
        })
        .catch((err: unknown) => {
          this.d.log.warn({ worker_id: workerId, err: String(err) }, 'worker message failed');
          socket.send(encode({ type: 'error', message: String(err instanceof Error ? err.message : err) })).catch(() => {});
        });
    });
    ws.on('error', (err) => this.d.log.debug({ worker_id: workerId, err: String(err) }, 'link error'));
    ws.on('close', () => {
      clearTimeout(helloTimer);
      void queue.then(() => (link ? this.onClose(link) : undefined));
    });
  }

  private async onHello(socket: LinkSocket, msg: Extract<WorkerMessage, { type: 'hello' }>, created: (link: WorkerLink) => void): Promise<WorkerLink> {
    const { config, store, registry, fleet, clock } = this.d;
    const helloAt = new Date(clock.now());
    // The worker holds one link at a time: from now on a job sent over the old one would be
    // lost until the next hello, so the old one takes no more work.
    const old = fleet.get(msg.worker_id);
    if (old && old.socket !== socket) old.superseded = true;
    const status = (await store.getWorkerStatus(msg.worker_id)) ?? 'active';
    const link = new WorkerLink(msg.worker_id, socket, msg.capabilities, { lanIp: msg.lan_ip ?? '', hostname: msg.hostname ?? '', hubId: config.hubId }, status, clock.now());
    link.report(msg);
    created(link);
    // Work the worker still holds from before a reconnect stays with it (the seed's 300 s
    // grace exists for exactly this), unless the job ended meanwhile: then it is cancelled.
    for (const held of msg.jobs ?? []) {
      const row = await store.getJob(held.job_id);
      if (row?.status === 'running' && row.session_id === held.assignment_id && row.worker_id === msg.worker_id) {
        link.adopt(held.lane, { kind: 'job', id: held.job_id, assignmentId: held.assignment_id });
      } else {
        await socket.send(encode({ type: 'cancel', job_id: held.job_id, reason: 'job is no longer running on this worker' }));
      }
    }
    await this.settleJobsNoLongerHeld(link, msg, helloAt);
    // A link that closed during its hello must not replace (and close) a newer, working one.
    if (!socket.open) throw new Error('link closed during hello');
    const previous = fleet.add(link);
    if (previous && previous !== link) previous.socket.close(4001, 'replaced by a new link');
    await registry.setOwner(msg.worker_id, config.hubId);
    this.d.publisher.mark(link);
    this.d.recycles.hello(msg.worker_id, msg.fresh !== false);
    await socket.send(encode({ type: 'welcome', worker_id: msg.worker_id, hub_id: config.hubId, heartbeat_s: config.heartbeatS, status, view_key: link.view_key, url_policy: this.d.urls.lists() }));
    this.d.metrics.localWorkers.set(fleet.size);
    this.d.log.info({ worker_id: msg.worker_id, lanes: msg.capabilities.max_concurrent, status, adopted: link.in_flight }, 'worker linked');
    this.d.events.workersChanged();
    return link;
  }

  /**
   * A job the database says this worker runs, assigned before this hello, that the worker
   * neither holds nor has a result for, will never report. From a fresh agent process it may
   * have been running when the old process died: fail it (a rerun is the client's call). From
   * a re-link of the same process it was never started (the old link closed before this hello,
   * and anything started is held or has its result pending): queue it again. Jobs assigned
   * after the hello (another hub may still hold a stale link) are left to the next hello.
   */
  private async settleJobsNoLongerHeld(link: WorkerLink, msg: Extract<WorkerMessage, { type: 'hello' }>, helloAt: Date): Promise<void> {
    const { store, clock, log, events, metrics } = this.d;
    const known = new Set([...(msg.jobs ?? []).map((j) => j.assignment_id), ...(msg.results ?? []).map((r) => r.assignment_id)]);
    const fresh = msg.fresh !== false;
    for (const row of await store.listRunningOfWorker(link.worker_id, helloAt)) {
      if (!row.session_id || known.has(row.session_id)) continue;
      const now = new Date(clock.now());
      if (fresh) {
        const failed = await store.failJobIf(row.id, { status: 'running', assignmentId: row.session_id }, `worker ${link.worker_id} restarted while holding this job`, now);
        if (!failed) continue;
        metrics.relinkOrphans.inc({ outcome: 'failed' });
        log.warn({ job_id: row.id, worker_id: link.worker_id }, 'job failed: its worker restarted without it');
        events.jobChanged(failed);
      } else if (await store.unclaimJob(row.id, row.session_id, now, link.worker_id)) {
        metrics.relinkOrphans.inc({ outcome: 'requeued' });
        log.info({ job_id: row.id, worker_id: link.worker_id }, 'job queued again: its assignment was lost with the old link');
        const queued = await store.getJob(row.id);
        if (queued) events.jobChanged(queued);
      }
    }
  }

  private async onMessage(link: WorkerLink, msg: WorkerMessage): Promise<void> {
    const now = this.d.clock.now();
    link.last_seen_ms = now;
    switch (msg.type) {
      case 'hello':
        throw new Error('hello sent twice');
      case 'heartbeat': {
        const diskOk = () => link.ready && link.disk_pct < this.d.config.diskMaxPct;
        const before = diskOk();
        link.report(msg);
        link.reported_in_flight = msg.in_flight;
        link.reportedLanes = msg.lanes;
        this.d.recycles.report(link.worker_id, msg.lane_recycles);
        this.d.publisher.mark(link);
        this.d.events.workersChanged();
        // Its first disk figure (or one back under the limit) makes its free lanes pickable:
        // wake inline POSTs waiting for a lane, and redrive.
        if (!before && diskOk()) this.d.fleet.laneFreed(link.max_concurrent - link.in_flight);
        return;
      }
      case 'job_started':
        return this.reports.started(link, msg);
      case 'job_result':
        return this.reports.result(link, msg);
      case 'job_rejected':
        return this.reports.rejected(link, msg);
      case 'session_reply':
        this.d.sessions.onReply(msg.request_id, msg);
        return;
      case 'session_closed':
        this.d.sessions.onClosed(link, msg.session_id, msg.reason);
        return;
      case 'error':
        this.d.log.warn({ worker_id: link.worker_id, message: msg.message }, 'worker reported an error');
        return;
    }
  }

  private async onClose(link: WorkerLink): Promise<void> {
    const { fleet, registry, config, log } = this.d;
    this.d.sessions.onLinkClosed(link);
    if (!fleet.remove(link)) return; // replaced by a newer link of the same worker
    this.d.metrics.localWorkers.set(fleet.size);
    // Its running jobs stay running: the reconciler fails them only after ORPHAN_GRACE, so a
    // worker that re-links in time keeps them.
    await this.d.publisher.flush();
    await registry.releaseOwnerIfMine(link.worker_id, config.hubId).catch((err: unknown) => log.warn({ err: String(err) }, 'owner release failed'));
    log.info({ worker_id: link.worker_id, in_flight: link.in_flight }, 'worker unlinked');
    this.d.events.workersChanged();
  }

  /** Ask every linked worker to apply a status change (drain keeps running jobs). */
  async pushStatus(workerId: string, status: 'active' | 'drain' | 'standby'): Promise<boolean> {
    const link = this.d.fleet.get(workerId);
    if (!link) return false;
    link.status = status;
    this.d.publisher.mark(link);
    await link.socket.send(encode({ type: 'status', status })).catch(() => {});
    if (status === 'active') this.d.fleet.laneFreed(link.max_concurrent - link.in_flight);
    this.d.events.workersChanged();
    return true;
  }
}
