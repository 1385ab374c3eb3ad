// GET /admin/events: the console's live feed. Changes are debounced into one snapshot
// (workers, hubs, counts) at most every DEBOUNCE_MS; a full snapshot also goes out every
// SNAPSHOT_MS so a console that missed a frame heals by itself. Job changes go as deltas.
import type { Logger } from 'pino';
import type { WebSocket } from 'ws';
import type { Config } from '../config.ts';
import type { FleetViewReader } from '../hub/fleet-view.ts';
import type { HubEvents } from '../hub/hub-events.ts';
import type { StatsSampler } from '../hub/stats.ts';
import type { Clock } from '../ports/clock.ts';
import type { JobRow, JobStore } from '../ports/job-store.ts';
import { HUB_HISTORY_S, type Registry } from '../ports/registry.ts';
import type { AdminEventJson } from '../wire/json.ts';
import { hubJson, jobSummaryJson, workerJson } from './json.ts';

const DEBOUNCE_MS = 250;
const SNAPSHOT_MS = 5000;
/**
 * Workers linked to other hubs change without an event here: their rows are read this often
 * (the incremental registry read: only rows changed since the last one), and a changed row sends
 * a snapshot. Before, only the 5 s snapshot showed them: a console fed by another hub than the
 * worker's showed its busy lanes idle for seconds.
 */
const REMOTE_CHECK_MS = 1000;

export interface AdminEventDeps {
  config: Pick<Config, 'hubId' | 'heartbeatS'>;
  clock: Clock;
  log: Logger;
  events: Pick<HubEvents, 'on' | 'off'>;
  fleetView: Pick<FleetViewReader, 'read'>;
  registry: Pick<Registry, 'listHubs'>;
  reads: Pick<JobStore, 'countByStatus'>;
  stats: Pick<StatsSampler, 'latest'>;
}

export class AdminEventStream {
  private readonly clients = new Set<WebSocket>();
  private stopped = false;
  /** Cancels the pending debounced snapshot; set while one is scheduled. */
  private debounce: (() => void) | undefined;
  private periodic: (() => void) | undefined;
  private remoteCheck: (() => void) | undefined;
  /** Bumped at every subscribe and unsubscribe: a remote-check chain of an earlier subscription stops. */
  private generation = 0;
  /** The remote rows of the last read: the reader hands back the same row object for a worker that did not change. */
  private lastRemote: readonly object[] = [];
  private readonly onChange = () => this.schedule();
  // Summaries: every console gets every change, and a full result may be megabytes.
  private readonly onJob = (job: JobRow) => this.broadcast({ type: 'job', job: jobSummaryJson(job) });

  constructor(private readonly d: AdminEventDeps) {}

  accept(ws: WebSocket): void {
    if (this.stopped) return void ws.close(1001, 'hub stopping');
    if (this.clients.size === 0) this.subscribe();
    this.clients.add(ws);
    ws.on('close', () => {
      this.clients.delete(ws);
      if (this.clients.size === 0) this.unsubscribe();
    });
    ws.on('error', () => ws.terminate());
    ws.on('message', () => {}); // the stream is one-way; anything sent is ignored
    void this.snapshot().then((s) => ws.readyState === ws.OPEN && ws.send(JSON.stringify(s)));
  }

  private subscribe(): void {
    this.d.events.on('workers', this.onChange);
    this.d.events.on('hubs', this.onChange);
    this.d.events.on('job', this.onJob);
    this.every(Math.min(SNAPSHOT_MS, this.d.config.heartbeatS * 1000));
    this.checkRemote();
  }

  /**
   * Every REMOTE_CHECK_MS while anyone listens: a snapshot when a worker of another hub changed.
   * One chain per subscription: a read still in flight when the last client left (and a new one
   * came) ends its own chain instead of starting a second one.
   */
  private checkRemote(generation = ++this.generation): void {
    this.remoteCheck = this.d.clock.setTimer(REMOTE_CHECK_MS, () => {
      void this.d.fleetView
        .read()
        .then((view) => {
          if (generation !== this.generation) return;
          const remote = view.workers.filter((w) => !w.local);
          const changed = remote.length !== this.lastRemote.length || remote.some((w, i) => w !== this.lastRemote[i]);
          this.lastRemote = remote;
          if (changed) this.schedule();
        })
        .catch(() => {})
        .finally(() => {
          if (generation === this.generation && this.remoteCheck) this.checkRemote(generation);
        });
    });
  }

  /** A full snapshot every ms while anyone listens (one timer, re-armed after each firing). */
  private every(ms: number): void {
    this.periodic = this.d.clock.setTimer(ms, () => {
      this.schedule();
      this.every(ms);
    });
  }

  private unsubscribe(): void {
    this.d.events.off('workers', this.onChange);
    this.d.events.off('hubs', this.onChange);
    this.d.events.off('job', this.onJob);
    this.periodic?.();
    this.periodic = undefined;
    this.remoteCheck?.();
    this.remoteCheck = undefined;
    this.generation++;
    this.lastRemote = [];
    this.debounce?.();
    this.debounce = undefined;
  }

  private schedule(): void {
    if (this.debounce) return;
    this.debounce = this.d.clock.setTimer(DEBOUNCE_MS, () => {
      this.debounce = undefined;
      void this.snapshot().then((s) => this.broadcast(s));
    });
  }

  private async snapshot(): Promise<AdminEventJson> {
    const d = this.d;
    try {
      const [view, hubs, counts] = await Promise.all([d.fleetView.read(), d.registry.listHubs(d.clock.now(), HUB_HISTORY_S), d.reads.countByStatus()]);
      return {
        type: 'snapshot',
        workers: view.workers.map(workerJson),
        hubs: hubs.map((h) => hubJson(h, d.config.hubId)),
        counts,
        capacity: d.stats.latest ?? null,
        as_of: new Date(view.as_of).toISOString(),
        stale: view.stale,
      };
    } catch (err) {
      d.log.warn({ err: String(err) }, 'admin snapshot failed');
      return { type: 'error', error: 'snapshot failed', details: String(err) };
    }
  }

  private broadcast(msg: AdminEventJson): void {
    const text = JSON.stringify(msg);
    for (const ws of this.clients) if (ws.readyState === ws.OPEN) ws.send(text);
  }

  /** A stopping hub: each console is told at once (1001) and reconnects to another hub. */
  stop(): void {
    this.stopped = true;
    this.unsubscribe();
    for (const ws of this.clients) ws.close(1001, 'hub stopping');
    this.clients.clear();
  }
}
