// Keeps the stores current: the /admin/events socket while it is up, polling of
// /admin/workers, /admin/hubs and /admin/stats every POLL_MS while it is down, and the
// socket re-opened with backoff. Owns every timer and socket it creates; stop() ends them.
import { ApiError, parseAdminEvent, type ApiClient } from '../api/client.ts';
import type { AdminEvent } from '../api/types.ts';
import { connectionStore } from '../stores/connection.ts';
import { fleetStore } from '../stores/fleet.ts';
import { hubsStore } from '../stores/hubs.ts';
import { JOB_LIST_LIMIT } from '../model/job-list.ts';
import { jobsStore } from '../stores/jobs.ts';
import { chartsStore } from '../stores/charts.ts';

const POLL_MS = 3000;
/** Throughput and series are not in the socket's snapshots: fetched on their own, slower. */
const STATS_MS = 10_000;
const JOBS_MS = 5000;
const RECONNECT_MIN_MS = 1000;
const RECONNECT_MAX_MS = 15_000;

export interface LiveFeedDeps {
  client: ApiClient;
  /** The page's origin, for a same-origin socket URL. */
  origin: string;
  WebSocketImpl?: typeof WebSocket;
  now?: () => number;
}

const TERMINAL = new Set(['succeeded', 'failed', 'canceled']);

export class LiveFeed {
  private ws: WebSocket | null = null;
  private pollTimer: ReturnType<typeof setInterval> | undefined;
  private statsTimer: ReturnType<typeof setInterval> | undefined;
  private jobsTimer: ReturnType<typeof setInterval> | undefined;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  private backoff = RECONNECT_MIN_MS;
  private stopped = true;
  private readonly now: () => number;
  private readonly WS: typeof WebSocket;

  /** The job open in the detail pane reached its end (the console actions fetch it whole). */
  onOpenJobEnded: ((id: string) => void) | undefined;

  constructor(private readonly deps: LiveFeedDeps) {
    this.now = deps.now ?? Date.now;
    this.WS = deps.WebSocketImpl ?? WebSocket;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    void this.loadConfig();
    this.openSocket();
    void this.pollStats();
    void this.pollHistory();
    void this.pollJobs();
    this.statsTimer = setInterval(() => void (this.pollStats(), this.pollHistory()), STATS_MS);
    this.jobsTimer = setInterval(() => void this.pollJobs(), JOBS_MS);
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.pollTimer);
    clearInterval(this.statsTimer);
    clearInterval(this.jobsTimer);
    clearTimeout(this.reconnectTimer);
    this.pollTimer = this.statsTimer = this.jobsTimer = this.reconnectTimer = undefined;
    const ws = this.ws;
    this.ws = null;
    ws?.close();
  }

  /** After a new token: drop everything and start over with it. */
  restart(): void {
    this.stop();
    this.backoff = RECONNECT_MIN_MS;
    this.start();
  }

  private async loadConfig(): Promise<void> {
    try {
      connectionStore.getState().setConfig(await this.deps.client.config());
    } catch (err) {
      this.fail(err);
      // The config carries the disk limit and status names: keep asking until it comes.
      if (!this.stopped && !(err instanceof ApiError && err.unauthorized)) setTimeout(() => !this.stopped && void this.loadConfig(), POLL_MS);
    }
  }

  private openSocket(): void {
    if (this.stopped) return;
    connectionStore.getState().socket('connecting', this.now());
    let ws: WebSocket;
    try {
      ws = new this.WS(this.deps.client.eventsUrl(this.deps.origin), this.deps.client.eventsProtocols());
    } catch (err) {
      this.socketDown();
      return;
    }
    this.ws = ws;
    ws.onopen = () => {
      if (this.ws !== ws) return;
      this.backoff = RECONNECT_MIN_MS;
      connectionStore.getState().socket('open', this.now());
      this.stopPolling();
    };
    ws.onmessage = (ev: MessageEvent) => {
      if (this.ws !== ws) return;
      const msg = parseAdminEvent(ev.data);
      if (msg) this.apply(msg);
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.socketDown();
    };
    ws.onerror = () => ws.close();
  }

  private socketDown(): void {
    if (this.stopped) return;
    connectionStore.getState().socket('closed', this.now());
    this.startPolling();
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => this.openSocket(), this.backoff);
    this.backoff = Math.min(RECONNECT_MAX_MS, this.backoff * 2);
  }

  private apply(msg: AdminEvent): void {
    const now = this.now();
    if (msg.type === 'snapshot') {
      fleetStore.getState().setWorkers(msg.workers, msg.as_of, msg.stale);
      if (msg.capacity !== undefined) fleetStore.getState().setCapacity(msg.capacity);
      hubsStore.getState().setHubs(msg.hubs);
      jobsStore.getState().setCounts(msg.counts);
      connectionStore.getState().ok(now, msg.stale);
    } else if (msg.type === 'job') {
      const before = jobsStore.getState().detail;
      jobsStore.getState().applyJob(msg.job);
      connectionStore.getState().ok(now);
      // Deltas are summaries: the open job's result arrives with a fetch of the whole job.
      if (before?.id === msg.job.id && before.status !== msg.job.status && TERMINAL.has(msg.job.status)) this.onOpenJobEnded?.(msg.job.id);
    } else {
      connectionStore.getState().failed(now, `hub: ${msg.error}`);
    }
  }

  private startPolling(): void {
    if (this.pollTimer !== undefined) return;
    void this.pollOnce();
    this.pollTimer = setInterval(() => void this.pollOnce(), POLL_MS);
  }

  private stopPolling(): void {
    clearInterval(this.pollTimer);
    this.pollTimer = undefined;
  }

  private async pollOnce(): Promise<void> {
    try {
      const [w, h] = await Promise.all([this.deps.client.workers(), this.deps.client.hubs()]);
      if (this.stopped) return;
      fleetStore.getState().setWorkers(w.workers, w.as_of, w.stale);
      hubsStore.getState().setHubs(h.hubs);
      connectionStore.getState().ok(this.now(), w.stale);
      await this.pollStats();
    } catch (err) {
      this.fail(err);
    }
  }

  private async pollStats(): Promise<void> {
    try {
      const stats = await this.deps.client.stats();
      if (this.stopped) return;
      jobsStore.getState().setStats(stats);
      if (stats.capacity !== undefined) fleetStore.getState().setCapacity(stats.capacity);
    } catch (err) {
      this.fail(err);
    }
  }

  /** The charts' range, bucketed by the hub. */
  async pollHistory(): Promise<void> {
    const range = chartsStore.getState().range;
    try {
      const history = await this.deps.client.statsHistory(range);
      if (!this.stopped) chartsStore.getState().setHistory(history);
    } catch (err) {
      if (!this.stopped) chartsStore.getState().setError(err instanceof Error ? err.message : String(err));
    }
  }

  async pollJobs(): Promise<void> {
    const status = jobsStore.getState().statusFilter;
    try {
      const page = await this.deps.client.jobs({ status: status || undefined, limit: JOB_LIST_LIMIT });
      // Drop an answer for a filter the operator has since changed.
      if (this.stopped) return;
      connectionStore.getState().apiAccepted();
      if (jobsStore.getState().statusFilter === status) jobsStore.getState().setList(page.jobs, this.now(), page.next_cursor);
    } catch (err) {
      this.listFailed(err);
    }
  }

  /** The next page of the list ("Load more"). */
  async loadMoreJobs(): Promise<void> {
    const { statusFilter: status, nextCursor } = jobsStore.getState();
    if (!nextCursor) return;
    try {
      const page = await this.deps.client.jobs({ status: status || undefined, limit: JOB_LIST_LIMIT, before: nextCursor });
      if (this.stopped || jobsStore.getState().statusFilter !== status || jobsStore.getState().nextCursor !== nextCursor) return;
      jobsStore.getState().appendPage(page.jobs, page.next_cursor);
    } catch (err) {
      this.listFailed(err);
    }
  }

  private listFailed(err: unknown): void {
    if (this.stopped) return;
    // /jobs sits behind PAPRIKA_API_TOKEN, not the admin token: ask for it, not a lost link.
    if (err instanceof ApiError && err.unauthorized) return connectionStore.getState().apiRefused(err.message, false);
    jobsStore.getState().setListError(err instanceof Error ? err.message : String(err));
    this.fail(err);
  }


  private fail(err: unknown): void {
    if (this.stopped) return;
    const unauthorized = err instanceof ApiError && err.unauthorized;
    connectionStore.getState().failed(this.now(), err instanceof Error ? err.message : String(err), unauthorized);
  }
}
