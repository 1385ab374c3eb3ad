// A lane backed by one Chrome. It runs one job or one session at a time, each in a browser
// context of its own that is closed at its end (nothing of one job is visible to the next), and
// is the seed's first safety layer: a Chrome that dies, disconnects or hangs fails only the work
// in hand, with the reason, and is relaunched so the lane's next job runs on a healthy browser.
import type { GoToOptions, Page } from 'puppeteer-core';
import type { RunnableJob, SessionCommand } from 'paprika/wire';
import type { JobContext, JobOutcome, Lane, LanePool } from '../lanes/lane.ts';
import type { ViewableLane } from '../live-view/viewable-lane.ts';
import { followLaneScreen, THUMB_SCREENCAST, type FrameSink } from '../live-view/screencast.ts';
import { runFetch } from '../runners/fetch-runner.ts';
import { runMacro } from '../runners/macro-runner.ts';
import { StepFailed } from '../runners/macro-steps.ts';
import { pngAsset, type PageWork, type RunnerOutput } from '../runners/page-job.ts';
import { runSessionCommand } from '../runners/session-command.ts';
import { runSleep } from '../runners/sleep-runner.ts';
import { EgressGuard } from '../egress/egress-guard.ts';
import { ChromeHost } from './chrome-host.ts';
import { ChromeLaneCore, silentLog, type ChromeLaneOptions, type WorkContext } from './chrome-lane-core.ts';
import type { RunningChrome } from './chrome-process.ts';
import { ChromeCrashed, messageOf, UrlDenied, WorkAborted } from './lane-errors.ts';

/** Session commands have no deadline of their own; the agent's signal (120 s) bounds them too. */
const SESSION_COMMAND_MS = 120_000;
const SESSION_OPEN_MS = 60_000;
/** A failure screenshot is best effort: a crashed or wedged page must not hold the result back. */
const FAILURE_SHOT_MS = 3000;

export class ChromeLane extends ChromeLaneCore implements Lane, ViewableLane {
  private busy: 'job' | 'session' | undefined;
  private jobWork: WorkContext | undefined;
  private sessionWork: WorkContext | undefined;
  private sessionId: string | undefined;

  constructor(o: ChromeLaneOptions) {
    super(o);
  }

  async runJob(job: RunnableJob, ctx: JobContext): Promise<JobOutcome> {
    if (this.busy) return { status: 'failed', error: `lane ${this.index} is busy with a ${this.busy}` };
    if (ctx.signal.aborted) return abortedOutcome(new WorkAborted(ctx.signal.reason));
    this.busy = 'job';
    await this.holdBrowser('job');
    let step: number | undefined;
    try {
      const out = await this.guarded(ctx.signal, async (chrome, watchPage) => {
        if (job.kind === 'sleep') return runSleep(job.spec, ctx.signal, this.index);
        const work = await this.workOn(chrome, watchPage, (w) => (this.jobWork = w));
        const pageWork = { ...this.pageWork(work.page, ctx.deadline), onStep: (n: number) => (step = n), maxResultBytes: ctx.maxResultBytes };
        return job.kind === 'fetch' ? runFetch(pageWork, job.spec) : runMacro(pageWork, job.spec);
      });
      return { status: 'succeeded', result: out.result, ...(out.assets.length ? { assets: out.assets } : {}) };
    } catch (err) {
      if (err instanceof WorkAborted) return abortedOutcome(err);
      if (Date.now() >= ctx.deadline) return { status: 'failed', error: 'timeout' };
      const failedStep = err instanceof StepFailed ? err.step : job.kind === 'macro' ? step : undefined;
      const shot = await this.failureShot();
      return { status: 'failed', error: messageOf(err), ...(failedStep !== undefined ? { result: { failed_step: failedStep } } : {}), ...(shot ? { assets: [shot] } : {}) };
    } finally {
      const work = this.jobWork;
      this.jobWork = undefined;
      this.showPage(null);
      if (work) await this.closeWorkContext(work);
      this.busy = undefined;
      this.releaseBrowser(work !== undefined);
    }
  }

  /** A fresh context for a job or session: its page prepared, watched and shown in the live view. */
  private async workOn(chrome: RunningChrome, watchPage: (p: Page) => void, keep: (w: WorkContext) => void): Promise<WorkContext> {
    const work = await this.newWorkContext(chrome);
    keep(work);
    preparePage(work.page);
    watchPage(work.page);
    this.showPage(work.page);
    return work;
  }

  /** What runners drive: the page, the deadline, and a goto that checks the egress policy first. */
  private pageWork(page: Page, deadline: number): PageWork {
    return { page, deadline, goto: (url, options) => guardedGoto(this.egress, page, url, options) };
  }

  /** The failed job's page as `failure.png`, if it can still be photographed quickly. */
  private async failureShot() {
    const page = this.jobWork?.page;
    if (!page || !this.isUsable(page)) return undefined;
    let timer: NodeJS.Timeout | undefined;
    const shot = page.screenshot({ type: 'png' }).then((bytes) => pngAsset('failure.png', bytes), () => undefined);
    const out = await Promise.race([shot, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), FAILURE_SHOT_MS)))]);
    clearTimeout(timer);
    return out;
  }

  async openSession(sessionId: string): Promise<void> {
    if (this.busy) throw new Error(`lane ${this.index} is busy with a ${this.busy}`);
    this.busy = 'session';
    this.sessionId = sessionId;
    await this.holdBrowser('session');
    try {
      await this.sessionPageReady(AbortSignal.timeout(SESSION_OPEN_MS));
    } catch (err) {
      this.busy = undefined;
      this.sessionId = undefined;
      this.releaseBrowser(false);
      throw new Error(`could not open a page for the session: ${messageOf(err)}`);
    }
  }

  /** The session keeps one context and page; after a Chrome crash the next command gets new, blank ones. */
  private sessionPageReady(signal: AbortSignal): Promise<Page> {
    return this.guarded(signal, async (chrome, watchPage) => {
      if (this.sessionWork && this.isUsable(this.sessionWork.page, chrome)) return this.sessionWork.page;
      return (await this.workOn(chrome, watchPage, (w) => (this.sessionWork = w))).page;
    });
  }

  async sessionCommand(command: SessionCommand, signal: AbortSignal): Promise<unknown> {
    if (this.busy !== 'session') throw new Error(`lane ${this.index} has no open session`);
    if (command.op === 'ping') return { pong: true, lane: this.index, session_id: this.sessionId };
    try {
      const page = await this.sessionPageReady(signal);
      return await this.guarded(signal, (_chrome, watchPage) => {
        watchPage(page);
        return runSessionCommand(this.pageWork(page, Date.now() + SESSION_COMMAND_MS), command);
      });
    } catch (err) {
      if (err instanceof WorkAborted || err instanceof ChromeCrashed || err instanceof UrlDenied) throw err;
      throw new Error(`${command.op}: ${messageOf(err)}`);
    }
  }

  async closeSession(): Promise<void> {
    const work = this.sessionWork;
    this.sessionWork = undefined;
    this.sessionId = undefined;
    this.showPage(null);
    if (work) await this.closeWorkContext(work);
    if (this.busy === 'session') this.busy = undefined;
    this.releaseBrowser(true); // a session counts like a job towards recycling, used or not
  }

  /** The wall's thumbnail: a small screencast of whatever page the lane shows (idle between jobs). */
  followThumbs(sink: FrameSink): () => void {
    return followLaneScreen(this, sink, THUMB_SCREENCAST);
  }

  override async stop(): Promise<void> {
    this.showPage(null);
    this.sessionWork = undefined;
    this.jobWork = undefined;
    await super.stop();
  }
}

/** Checks the URL (and what its name resolves to) before the browser makes any connection. */
async function guardedGoto(egress: EgressGuard, page: Page, url: string, options: GoToOptions) {
  const verdict = await egress.checkUrl(url);
  if (!verdict.allowed) throw new UrlDenied(url, verdict.rule);
  return page.goto(url, options);
}

function abortedOutcome(err: WorkAborted): JobOutcome {
  return err.isTimeout ? { status: 'failed', error: 'timeout' } : { status: 'canceled', error: err.message };
}

/** An unattended page must never wait on a person: dismiss alert/confirm/prompt at once. */
function preparePage(page: Page): void {
  page.on('dialog', (dialog) => void dialog.dismiss().catch(() => {}));
  // Popups a job opens die with the job's page; without this they would pile up in the lane.
  page.on('popup', (popup) => {
    if (!popup) return;
    page.once('close', () => void popup.close().catch(() => {}));
  });
}

export interface ChromePoolOptions {
  lanes: number;
  chromePath: string;
  /** One portable Chrome (Windows): one lane, reported as `novnc_url`, max_concurrent 1. */
  singleChrome: boolean;
  /** Base URL of the agent's live-view server: lane i is viewed at `${viewBase}/lanes/${i}/view`. */
  viewBase?: string;
  /**
   * An operator's noVNC server (`--novnc-base`), when they prefer watching the real screen: it
   * replaces the screencast page, and lane i is advertised as `${novncBase}/lanes/${i}`.
   */
  novncBase?: string;
  hangTimeoutMs?: number;
  log?: ChromeLaneOptions['log'];
  /** Shared by every lane of the worker (the hub's rules arrive in `welcome`). */
  egress?: EgressGuard;
  recycleJobs?: number;
  maxRssMb?: number;
  /**
   * `--shared-chrome`: the lanes share one Chrome, each job still in a fresh context of its own
   * (behind its lane's proxy). Recycle limits apply to it per lane: after lanes × recycleJobs
   * jobs, or past lanes × maxRssMb.
   */
  sharedChrome?: boolean;
}

export function laneViewUrl(index: number, o: Pick<ChromePoolOptions, 'viewBase' | 'novncBase'>): string | null {
  if (o.novncBase) return `${o.novncBase.replace(/\/+$/, '')}/lanes/${index}`;
  if (o.viewBase) return `${o.viewBase.replace(/\/+$/, '')}/lanes/${index}/view`;
  return null;
}

export interface ChromePool extends LanePool {
  readonly lanes: readonly ChromeLane[];
  readonly egress: EgressGuard;
}

export function chromePool(o: ChromePoolOptions): ChromePool {
  const count = o.singleChrome ? 1 : o.lanes;
  const egress = o.egress ?? new EgressGuard();
  let lanes: ChromeLane[] = [];
  // The browser-wide `--proxy-server` names the proxy of a lane already started (a lane starts
  // its proxy before the browser); each job's context names its own lane's proxy anyway.
  const sharedHost = o.sharedChrome && count > 1 ? new ChromeHost({ chromePath: o.chromePath, proxyPort: () => lanes.find((l) => l.proxy.port)?.proxy.port, lanes: count, hangTimeoutMs: o.hangTimeoutMs ?? 15_000, recycleJobs: o.recycleJobs ?? 100, maxRssMb: o.maxRssMb ?? 1024, log: o.log ?? silentLog }) : undefined;
  lanes = Array.from({ length: count }, (_, index) => new ChromeLane({ index, chromePath: o.chromePath, viewUrl: laneViewUrl(index, o), hangTimeoutMs: o.hangTimeoutMs, log: o.log, egress, recycleJobs: o.recycleJobs, maxRssMb: o.maxRssMb, sharedHost }));
  const hosts = [...new Set(lanes.map((l) => l.browserHost))];
  return {
    lanes,
    singleChrome: o.singleChrome,
    // `cdp`: each lane starts a fresh browser for a CDP client (cdp/cdp-tunnel.ts).
    kinds: ['fetch', 'macro', 'sleep', 'session', 'cdp'],
    egress,
    recycles() {
      const sum = { jobs: 0, rss: 0, crash: 0 };
      for (const h of hosts) for (const [k, v] of Object.entries(h.recycles)) sum[k as keyof typeof sum] += v;
      return sum;
    },
    async start() {
      // Lanes start together; if one cannot, none are left running.
      const started = await Promise.allSettled(lanes.map((l) => l.start()));
      const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
      if (failed) {
        await Promise.all(lanes.map((l) => l.stop()));
        throw new Error(`Chrome did not start (${o.chromePath}): ${messageOf(failed.reason)}`);
      }
    },
    async stop() {
      await Promise.all(lanes.map((l) => l.stop()));
    },
  };
}
