// GET /admin/events: the console's live feed. Changes are debounced into one snapshot
// (workers, hubs, counts) at most every DEBOUNCE_MS; a full snapshot also goes out every
// SNAPSHOT_MS so a console that missed a frame heals by itself. Job changes go as deltas.
import type { WebSocket } from 'ws';
import type { Hub } from '../hub/hub.ts';
import type { JobRow } from '../ports/job-store.ts';
import { hubJson, jobSummaryJson, workerJson } from './json.ts';
import { HUB_HISTORY_S } from '../ports/registry.ts';

const DEBOUNCE_MS = 250;
const SNAPSHOT_MS = 5000;

export class AdminEventStream {
  private readonly clients = new Set<WebSocket>();
  private debounce: NodeJS.Timeout | undefined;
  private periodic: NodeJS.Timeout | undefined;
  private readonly onChange = () => this.schedule();
  // Summaries: every console gets every change, and a full result may be megabytes.
  private readonly onJob = (job: JobRow) => this.broadcast({ type: 'job', job: jobSummaryJson(job) });

  constructor(private readonly hub: Hub) {}

  accept(ws: WebSocket): void {
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
    this.hub.events.on('workers', this.onChange);
    this.hub.events.on('hubs', this.onChange);
    this.hub.events.on('job', this.onJob);
    this.periodic = setInterval(() => this.schedule(), Math.min(SNAPSHOT_MS, this.hub.config.heartbeatS * 1000));
  }

  private unsubscribe(): void {
    this.hub.events.off('workers', this.onChange);
    this.hub.events.off('hubs', this.onChange);
    this.hub.events.off('job', this.onJob);
    clearInterval(this.periodic);
    clearTimeout(this.debounce);
    this.debounce = undefined;
  }

  private schedule(): void {
    if (this.debounce) return;
    this.debounce = setTimeout(() => {
      this.debounce = undefined;
      void this.snapshot().then((s) => this.broadcast(s));
    }, DEBOUNCE_MS);
  }

  private async snapshot(): Promise<Record<string, unknown>> {
    const hub = this.hub;
    try {
      const [view, hubs, counts] = await Promise.all([hub.fleetView.read(), hub.registry.listHubs(hub.clock.now(), HUB_HISTORY_S), hub.store.countByStatus()]);
      return {
        type: 'snapshot',
        workers: view.workers.map(workerJson),
        hubs: hubs.map((h) => hubJson(h, hub.config.hubId)),
        counts,
        capacity: hub.stats.latest ?? null,
        as_of: new Date(view.as_of).toISOString(),
        stale: view.stale,
      };
    } catch (err) {
      hub.log.warn({ err: String(err) }, 'admin snapshot failed');
      return { type: 'error', error: 'snapshot failed', details: String(err) };
    }
  }

  private broadcast(msg: Record<string, unknown>): void {
    const text = JSON.stringify(msg);
    for (const ws of this.clients) if (ws.readyState === ws.OPEN) ws.send(text);
  }

  stop(): void {
    this.unsubscribe();
    for (const ws of this.clients) ws.terminate();
    this.clients.clear();
  }
}
