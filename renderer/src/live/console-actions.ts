// What the operator can do from the console. Components call these; these call the API
// client and write the results into the stores.
import { ApiError, type ApiClient } from '../api/client.ts';
import { tokenKey, tokenToSend, type TokenScope } from '../model/hub-tokens.ts';
import { isImageAsset } from '../model/job-list.ts';
import { needsConfirm } from '../model/worker-table.ts';
import { connectionStore } from '../stores/connection.ts';
import { fleetStore } from '../stores/fleet.ts';
import { jobsStore } from '../stores/jobs.ts';
import { chartsStore } from '../stores/charts.ts';
import { queueStore } from '../stores/queue.ts';
import { workerDetailStore } from '../stores/worker-detail.ts';
import { wallStore } from '../stores/wall.ts';
import type { ChartRange } from '../model/chart-data.ts';
import { jobsRouteFrom, jobsRouteHash, parseRoute } from '../model/view-route.ts';
import { desktopBridge } from './desktop-bridge.ts';
import type { LiveFeed } from './live-feed.ts';
import { WallThumbs } from './wall-thumbs.ts';

const QUEUE_MS = 2000;
const WORKER_DETAIL_MS = 3000;
const WALL_MS = 2000;

export interface PendingConfirm {
  workerId: string;
  status: string;
  inFlight: number;
}

export class ConsoleActions {
  private workerTimer: ReturnType<typeof setInterval> | undefined;
  constructor(
    private readonly client: ApiClient,
    private readonly feed: LiveFeed,
    /** The page's origin, for the wall's same-origin socket. */
    private readonly origin: string = globalThis.location?.origin ?? '',
  ) {
    // A live delta is a summary: an open job that ends is fetched whole (result, assets).
    feed.onOpenJobEnded = (id) => void this.openJob(id);
  }

  /** While a queue panel is shown: ask the hub every QUEUE_MS. Returns the stop function. */
  watchQueue(): () => void {
    let stopped = false;
    const once = async () => {
      try {
        const q = await this.client.queue();
        if (!stopped) queueStore.getState().setQueue(q);
      } catch (err) {
        if (!stopped) queueStore.getState().setError(err instanceof Error ? err.message : String(err));
      }
    };
    void once();
    const timer = setInterval(() => void once(), QUEUE_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }

  /** The worker drawer: fetched now and every WORKER_DETAIL_MS while it stays open. */
  openWorker(id: string | null): void {
    workerDetailStore.getState().open(id);
    clearInterval(this.workerTimer);
    this.workerTimer = undefined;
    if (!id) return;
    const once = async () => {
      try {
        const d = await this.client.workerDetail(id);
        workerDetailStore.getState().setDetail(d);
      } catch (err) {
        if (workerDetailStore.getState().openId === id) workerDetailStore.getState().setError(err instanceof Error ? err.message : String(err));
      }
    };
    void once();
    this.workerTimer = setInterval(() => void once(), WORKER_DETAIL_MS);
  }

  /** While the lane wall is shown: the running jobs every WALL_MS (kind, elapsed, deadline of each busy lane). */
  watchRunning(): () => void {
    let stopped = false;
    const once = async () => {
      try {
        const page = await this.client.jobs({ status: 'running', limit: 1000 });
        if (!stopped) wallStore.getState().setRunning(page.jobs);
      } catch (err) {
        this.noteRefused(err);
        if (!stopped) wallStore.getState().setError(err instanceof Error ? err.message : String(err));
      }
    };
    void once();
    const timer = setInterval(() => void once(), WALL_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }

  /** While the lane wall is shown: its thumbnail socket, started. The caller stops it. */
  openWallThumbs(): WallThumbs {
    const thumbs = new WallThumbs({
      url: this.client.wallUrl(this.origin),
      protocols: this.client.eventsProtocols(),
      onError: (code, message) => console.warn(`lane wall: ${code}: ${message}`),
    });
    thumbs.start();
    return thumbs;
  }

  setChartRange(range: ChartRange): void {
    chartsStore.getState().setRange(range);
    void this.feed.pollHistory();
  }

  loadMoreJobs(): Promise<void> {
    return this.feed.loadMoreJobs();
  }

  /** Returns what must be confirmed first, or null when the change was sent. */
  requestStatus(workerId: string, status: string): PendingConfirm | null {
    const w = fleetStore.getState().workers.find((x) => x.worker_id === workerId);
    if (w && needsConfirm(w, status)) return { workerId, status, inFlight: w.in_flight };
    void this.setWorkerStatus(workerId, status);
    return null;
  }

  async setWorkerStatus(workerId: string, status: string): Promise<void> {
    const fleet = fleetStore.getState();
    fleet.setPending(workerId, status);
    fleet.setActionError(null);
    try {
      const row = await this.client.setWorkerStatus(workerId, status);
      fleetStore.getState().patchWorker({ ...row, worker_id: workerId, status: row.status ?? status });
    } catch (err) {
      fleetStore.getState().setActionError(`${workerId} → ${status}: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      fleetStore.getState().setPending(workerId, null);
    }
  }

  /** After the operator confirmed: the id may enroll again (its live link, if any, stays up). */
  async resetCredentials(workerId: string): Promise<void> {
    const fleet = fleetStore.getState();
    fleet.setActionError(null);
    try {
      const out = await this.client.resetWorkerCredentials(workerId);
      if (!out.had_credential) fleetStore.getState().setActionError(`${workerId} had no credential to reset`);
    } catch (err) {
      fleetStore.getState().setActionError(`${workerId} → reset credentials: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** A pasted or shared address: the Jobs view takes its filter and open job from it. */
  applyRoute(hash: string): void {
    const { view, params } = parseRoute(hash);
    if (view !== 'jobs') return;
    const r = jobsRouteFrom(params, null);
    const s = jobsStore.getState();
    if (r.statusFilter !== s.statusFilter || r.search !== s.search) this.setJobFilter({ statusFilter: r.statusFilter, search: r.search });
    if (r.jobId && r.jobId !== s.selectedId) void this.openJob(r.jobId);
    else if (!r.jobId && s.selectedId) this.closeJob();
  }

  /** The address follows the Jobs view's filter and open job (replaced, not pushed: no history spam). */
  private syncJobsUrl(): void {
    if (parseRoute(location.hash).view !== 'jobs') return;
    const s = jobsStore.getState();
    const hash = jobsRouteHash({ statusFilter: s.statusFilter, search: s.search, jobId: s.selectedId });
    if (hash !== location.hash) history.replaceState(null, '', hash);
  }

  /** An offline worker leaves the table now (the hub refuses a live one with 409). */
  async forgetWorker(workerId: string): Promise<void> {
    fleetStore.getState().setActionError(null);
    try {
      await this.client.forgetWorker(workerId);
      fleetStore.getState().removeWorker(workerId);
    } catch (err) {
      fleetStore.getState().setActionError(`${workerId} → forget: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  async openJob(id: string): Promise<void> {
    jobsStore.getState().select(id);
    this.syncJobsUrl();
    try {
      const job = await this.client.job(id);
      if (jobsStore.getState().selectedId !== id) return;
      jobsStore.getState().setDetail(job);
      await this.loadAssets(id, job.assets ?? []);
    } catch (err) {
      this.noteRefused(err);
      if (jobsStore.getState().selectedId === id) jobsStore.getState().setDetail(null, err instanceof Error ? err.message : String(err));
    }
  }

  private async loadAssets(id: string, names: string[]): Promise<void> {
    const views = await Promise.all(
      names.map(async (name) => {
        if (!isImageAsset(name)) return { name, url: null };
        try {
          return { name, url: URL.createObjectURL(await this.client.assetBlob(id, name)) };
        } catch (err) {
          this.noteRefused(err);
          return { name, url: null, error: err instanceof Error ? err.message : String(err) };
        }
      }),
    );
    if (jobsStore.getState().selectedId === id) jobsStore.getState().setAssets(views);
    else for (const v of views) if (v.url) URL.revokeObjectURL(v.url);
  }

  closeJob(): void {
    jobsStore.getState().select(null);
    this.syncJobsUrl();
  }

  async cancelJob(id: string): Promise<void> {
    try {
      jobsStore.getState().applyJob(await this.client.cancelJob(id));
    } catch (err) {
      this.noteRefused(err);
      jobsStore.getState().setDetail(jobsStore.getState().detail, err instanceof ApiError ? err.message : String(err));
    }
  }

  /** After one confirmation: cancel these jobs, a few at a time; says how many the hub canceled. */
  async cancelJobs(ids: string[]): Promise<void> {
    let canceled = 0;
    const failures: string[] = [];
    const queue = [...ids];
    const worker = async () => {
      for (let id = queue.shift(); id; id = queue.shift()) {
        try {
          const job = await this.client.cancelJob(id);
          jobsStore.getState().applyJob(job);
          if (job.status === 'canceled') canceled++;
        } catch (err) {
          this.noteRefused(err);
          failures.push(`${id.slice(0, 8)}: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    jobsStore.getState().setBulkNote(`Canceled ${canceled} of ${ids.length} queued job${ids.length === 1 ? '' : 's'}${failures.length ? ` — not canceled: ${failures.slice(0, 3).join('; ')}${failures.length > 3 ? '…' : ''}` : ''}.`);
  }

  /** Runs the job's kind and spec again as a new job, and opens it. */
  async rerunJob(id: string): Promise<void> {
    try {
      const job = await this.client.rerunJob(id);
      jobsStore.getState().applyJob(job);
      await this.openJob(job.id);
    } catch (err) {
      this.noteRefused(err);
      jobsStore.getState().setDetail(jobsStore.getState().detail, `Rerun refused: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** The operator asked for a job and /jobs refused the token: ask for the API token. */
  private noteRefused(err: unknown): void {
    if (err instanceof ApiError && err.unauthorized) connectionStore.getState().apiRefused(err.message, true);
  }

  setJobFilter(patch: { statusFilter?: string; search?: string }): void {
    const before = jobsStore.getState().statusFilter;
    jobsStore.getState().setFilter(patch);
    this.syncJobsUrl();
    if (patch.statusFilter !== undefined && patch.statusFilter !== before) void this.feed.pollJobs();
  }

  saveToken(token: string, scope: TokenScope = 'admin'): void {
    if (token) localStorage.setItem(tokenKey(scope, desktopHub), token);
    else localStorage.removeItem(tokenKey(scope, desktopHub));
    // The question is answered; the calls below ask again if the hub still refuses.
    if (connectionStore.getState().apiAuth === 'asking') connectionStore.getState().setApiAuth('ok');
    this.feed.restart();
    const open = jobsStore.getState().selectedId;
    if (open) void this.openJob(open);
  }

  /** Put the API token question off: the admin views work without it; the Jobs view offers it again. */
  dismissApiToken(): void {
    connectionStore.getState().setApiAuth('dismissed');
  }

  askApiToken(): void {
    connectionStore.getState().setApiAuth('asking');
  }

  /**
   * Asks the hub for a tokened view URL, then opens it. In a browser the tab is opened at the
   * click (a tab opened after an await is a blocked popup) and sent to the URL once it arrives.
   */
  async openLaneView(workerId: string, lane: number): Promise<void> {
    const bridge = desktopBridge();
    const tab = bridge ? null : window.open('about:blank', '_blank');
    // The view page must not reach back into the console.
    if (tab) tab.opener = null;
    fleetStore.getState().setActionError(null);
    try {
      const { url } = await this.client.laneView(workerId, lane);
      if (bridge) void bridge.openExternal(url);
      else if (tab) tab.location.href = url;
      else window.open(url, '_blank', 'noopener,noreferrer');
    } catch (err) {
      tab?.close();
      fleetStore.getState().setActionError(`${workerId} lane ${lane} live view: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  openExternal(url: string): void {
    const bridge = desktopBridge();
    // In the desktop app new windows are refused; the main process opens http(s) links outside.
    if (bridge) void bridge.openExternal(url);
    else window.open(url, '_blank', 'noopener,noreferrer');
  }
}

/** The hub the desktop app is pointed at ('' in a browser): typed tokens are kept per hub there. */
let desktopHub = '';
export function setDesktopHub(url: string): void {
  desktopHub = url;
}

function kept(scope: TokenScope): string | null {
  try {
    return localStorage.getItem(tokenKey(scope, desktopHub));
  } catch {
    return null;
  }
}

export function storedToken(scope: TokenScope): string | null {
  return tokenToSend(scope, { admin: kept('admin'), api: kept('api') });
}
