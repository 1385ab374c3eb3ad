// A lane backed by one Chrome. It runs one job or one session at a time on a fresh page, and
// is the seed's first safety layer: a Chrome that dies, disconnects or hangs fails only the work
// in hand, with the reason, and is relaunched so the lane's next job runs on a healthy browser.
import type { Browser, Page } from 'puppeteer-core';
import type { RunnableJob, SessionCommand } from '../../../hub-core/src/domain/job-spec.ts';
import type { JobContext, JobOutcome, Lane, LanePool } from '../lanes/lane.ts';
import type { ViewableLane } from '../live-view/viewable-lane.ts';
import { runFetch } from '../runners/fetch-runner.ts';
import { runMacro } from '../runners/macro-runner.ts';
import type { RunnerOutput } from '../runners/page-job.ts';
import { runSessionCommand } from '../runners/session-command.ts';
import { runSleep } from '../runners/sleep-runner.ts';
import { ChromeLaneCore, type ChromeLaneOptions } from './chrome-lane-core.ts';
import { ChromeCrashed, messageOf, WorkAborted } from './lane-errors.ts';

/** Session commands have no deadline of their own; the agent's signal (120 s) bounds them too. */
const SESSION_COMMAND_MS = 120_000;
const SESSION_OPEN_MS = 60_000;

export class ChromeLane extends ChromeLaneCore implements Lane, ViewableLane {
  private busy: 'job' | 'session' | undefined;
  private jobPage: Page | undefined;
  private sessionPage: Page | undefined;
  private sessionId: string | undefined;

  constructor(o: ChromeLaneOptions) {
    super(o);
  }

  async runJob(job: RunnableJob, ctx: JobContext): Promise<JobOutcome> {
    if (this.busy) return { status: 'failed', error: `lane ${this.index} is busy with a ${this.busy}` };
    if (ctx.signal.aborted) return abortedOutcome(new WorkAborted(ctx.signal.reason));
    this.busy = 'job';
    try {
      const out = await this.guarded(ctx.signal, (chrome, watchPage) => {
        if (job.kind === 'sleep') return runSleep(job.spec, ctx.signal, this.index);
        return this.onFreshPage(chrome.browser, watchPage, async (page) => {
          const work = { page, deadline: ctx.deadline };
          return job.kind === 'fetch' ? runFetch(work, job.spec) : runMacro(work, job.spec);
        });
      });
      return { status: 'succeeded', result: out.result, ...(out.assets.length ? { assets: out.assets } : {}) };
    } catch (err) {
      if (err instanceof WorkAborted) return abortedOutcome(err);
      if (Date.now() >= ctx.deadline) return { status: 'failed', error: 'timeout' };
      return { status: 'failed', error: messageOf(err) };
    } finally {
      await this.closeJobPage();
      this.busy = undefined;
    }
  }

  /** Opens the job's page, shows it in the live view, and closes popups it spawned. */
  private async onFreshPage(browser: Browser, watchPage: (p: Page) => void, run: (page: Page) => Promise<RunnerOutput>): Promise<RunnerOutput> {
    const page = await browser.newPage();
    this.jobPage = page;
    preparePage(page);
    watchPage(page);
    this.showPage(page);
    return run(page);
  }

  private async closeJobPage(): Promise<void> {
    const page = this.jobPage;
    this.jobPage = undefined;
    this.showPage(null);
    if (page) await this.closePage(page);
  }

  async openSession(sessionId: string): Promise<void> {
    if (this.busy) throw new Error(`lane ${this.index} is busy with a ${this.busy}`);
    this.busy = 'session';
    this.sessionId = sessionId;
    try {
      await this.sessionPageReady(AbortSignal.timeout(SESSION_OPEN_MS));
    } catch (err) {
      this.busy = undefined;
      this.sessionId = undefined;
      throw new Error(`could not open a page for the session: ${messageOf(err)}`);
    }
  }

  /** The session keeps one page; after a Chrome crash the next command gets a new, blank one. */
  private sessionPageReady(signal: AbortSignal): Promise<Page> {
    return this.guarded(signal, async (chrome, watchPage) => {
      if (this.sessionPage && this.isUsable(this.sessionPage, chrome)) return this.sessionPage;
      const page = await chrome.browser.newPage();
      preparePage(page);
      watchPage(page);
      this.sessionPage = page;
      this.showPage(page);
      return page;
    });
  }

  async sessionCommand(command: SessionCommand, signal: AbortSignal): Promise<unknown> {
    if (this.busy !== 'session') throw new Error(`lane ${this.index} has no open session`);
    if (command.op === 'ping') return { pong: true, lane: this.index, session_id: this.sessionId };
    try {
      const page = await this.sessionPageReady(signal);
      return await this.guarded(signal, (_chrome, watchPage) => {
        watchPage(page);
        return runSessionCommand({ page, deadline: Date.now() + SESSION_COMMAND_MS }, command);
      });
    } catch (err) {
      if (err instanceof WorkAborted || err instanceof ChromeCrashed) throw err;
      throw new Error(`${command.op}: ${messageOf(err)}`);
    }
  }

  async closeSession(): Promise<void> {
    const page = this.sessionPage;
    this.sessionPage = undefined;
    this.sessionId = undefined;
    this.showPage(null);
    if (page) await this.closePage(page);
    if (this.busy === 'session') this.busy = undefined;
  }

  override async stop(): Promise<void> {
    this.showPage(null);
    this.sessionPage = undefined;
    this.jobPage = undefined;
    await super.stop();
  }
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
}

export function laneViewUrl(index: number, o: Pick<ChromePoolOptions, 'viewBase' | 'novncBase'>): string | null {
  if (o.novncBase) return `${o.novncBase.replace(/\/+$/, '')}/lanes/${index}`;
  if (o.viewBase) return `${o.viewBase.replace(/\/+$/, '')}/lanes/${index}/view`;
  return null;
}

export interface ChromeLanePool extends LanePool {
  readonly lanes: readonly ChromeLane[];
}

export function chromePool(o: ChromePoolOptions): ChromeLanePool {
  const count = o.singleChrome ? 1 : o.lanes;
  const lanes = Array.from({ length: count }, (_, index) => new ChromeLane({ index, chromePath: o.chromePath, viewUrl: laneViewUrl(index, o), hangTimeoutMs: o.hangTimeoutMs, log: o.log }));
  return {
    lanes,
    singleChrome: o.singleChrome,
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
