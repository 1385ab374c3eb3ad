// The browser half of a Chrome lane: keep one healthy Chrome, notice when it dies or hangs,
// relaunch it, and run a piece of work raced against the job's signal and the browser's death.
// Every piece of work gets a browser context of its own (cookies, storage, cache, service
// workers, permissions go with it), and the Chrome is recycled between pieces of work after
// PAPRIKA_LANE_RECYCLE_JOBS of them or when its memory passes PAPRIKA_LANE_MAX_RSS_MB.
import type { BrowserContext, HTTPRequest, HTTPResponse, Page } from 'puppeteer-core';
import { type LaneRecycles, ownAddressRules } from 'paprika/wire';
import { EgressGuard } from '../egress/egress-guard.ts';
import { DENIED_HEADER, EgressProxy } from '../egress/egress-proxy.ts';
import { endChrome, killChromeNow, launchChrome, type RunningChrome } from './chrome-process.ts';
import { processTreeMemoryBytes } from './process-tree-memory.ts';
import { ChromeCrashed, isConnectionLoss, messageOf, UrlDenied, WorkAborted } from './lane-errors.ts';

export interface LaneLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface ChromeLaneOptions {
  index: number;
  chromePath: string;
  viewUrl: string | null;
  /** A CDP call must answer within this, or Chrome counts as hung and is killed (default 15 s). */
  hangTimeoutMs?: number;
  /** How often a busy lane asks Chrome whether it still answers (default 5 s, or the hang timeout if shorter). */
  watchdogIntervalMs?: number;
  log?: LaneLog;
  /** The worker's egress policy; every lane's Chrome runs behind a proxy enforcing it (default: the built-in deny list). */
  egress?: EgressGuard;
  /** Recycle the Chrome after this many jobs/sessions (default 100) or past this RSS (default 1024 MiB). */
  recycleJobs?: number;
  maxRssMb?: number;
}

/** A piece of work's own browser context and its first page. */
export interface WorkContext {
  readonly chrome: RunningChrome;
  readonly context: BrowserContext;
  readonly page: Page;
}

/** How long a puppeteer "target closed" error waits for the disconnect that explains it. */
const CRASH_SETTLE_MS = 500;
const silentLog: LaneLog = { info() {}, warn() {}, error() {} };
/** How often a lane's browser memory is read at most (PAPRIKA_LANE_MAX_RSS_MB is checked this often). */
const MEASURE_EVERY_MS = 5000;
/** A context that will not close in this long means a hung browser. */
const CONTEXT_CLOSE_MS = 5000;

type Work<T> = (chrome: RunningChrome, watchPage: (page: Page) => void) => Promise<T>;

export abstract class ChromeLaneCore {
  readonly index: number;
  readonly viewUrl: string | null;
  protected readonly log: LaneLog;
  private readonly hangTimeoutMs: number;
  private readonly watchdogIntervalMs: number;
  private chrome: RunningChrome | undefined;
  private starting: Promise<RunningChrome> | undefined;
  private stopped = false;
  private readonly crashListeners = new Set<(reason: string) => void>();
  private readonly crashedPages = new WeakSet<Page>();
  private shown: Page | null = null;
  private readonly pageListeners = new Set<(page: Page | null) => void>();
  readonly egress: EgressGuard;
  readonly proxy: EgressProxy;
  private readonly recycleJobs: number;
  private readonly maxRssBytes: number;
  /** Browsers let go of on purpose (recycled): their exit is no crash. */
  private readonly retired = new WeakSet<RunningChrome>();
  private workOnChrome = 0;
  /** Set by a background memory reading: the Chrome it read is recycled at the next step between jobs. */
  private rssDue: { chrome: RunningChrome; mb: number } | undefined;
  /** The last memory reading: which browser, when. */
  private measured: { chrome: RunningChrome; at: number } | undefined;
  private readonly recycleCounts: LaneRecycles = { jobs: 0, rss: 0, crash: 0 };
  /** The between-work step (recycle, or prepare the next context): the next work waits for it. */
  private between: Promise<void> = Promise.resolve();
  /** A context (with a blank page) made ahead of time on an idle lane, for the next work. */
  private spare: Promise<WorkContext | undefined> | undefined;

  constructor(private readonly o: ChromeLaneOptions) {
    this.index = o.index;
    this.viewUrl = o.viewUrl;
    this.log = o.log ?? silentLog;
    this.hangTimeoutMs = o.hangTimeoutMs ?? 15_000;
    this.watchdogIntervalMs = o.watchdogIntervalMs ?? Math.min(5000, this.hangTimeoutMs);
    this.egress = o.egress ?? new EgressGuard();
    this.proxy = new EgressProxy(this.egress);
    this.recycleJobs = o.recycleJobs ?? 100;
    this.maxRssBytes = (o.maxRssMb ?? 1024) * 1024 * 1024;
  }

  /** A CDP client's browser: the same Chrome binary, behind this lane's egress proxy. */
  cdpBrowser(): { chromePath: string; proxyPort?: number } {
    return { chromePath: this.o.chromePath, proxyPort: this.proxy.port || undefined };
  }

  /** Chrome restarts of this lane by reason, since it was made. */
  get recycles(): LaneRecycles {
    return { ...this.recycleCounts };
  }

  /** The current browser process (undefined while it is being relaunched). Tests kill it. */
  get pid(): number | undefined {
    return this.chrome?.pid;
  }

  async start(): Promise<void> {
    this.stopped = false;
    if (this.proxy.port === 0) {
      // A page must not reach the proxy itself (it would loop through it).
      this.egress.addOwn(ownAddressRules('127.0.0.1', await this.proxy.start()));
    }
    await this.launched();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.showPage(null);
    const chrome = this.chrome;
    this.chrome = undefined;
    await this.starting?.catch(() => {}); // a launch in progress ends its own browser once it sees `stopped`
    await this.between.catch(() => {});
    // A context still being made ahead of time would race the browser's shutdown: let it settle first.
    const spare = this.spare;
    this.spare = undefined;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([spare, new Promise((r) => (timer = setTimeout(r, 2000)))]);
    clearTimeout(timer);
    if (chrome) await endChrome(chrome);
    await this.proxy.stop();
    this.proxy.port = 0;
  }

  // ---- live view: which page the lane shows right now -------------------------------------

  currentPage(): Page | null {
    return this.shown;
  }

  onPageChange(listener: (page: Page | null) => void): () => void {
    this.pageListeners.add(listener);
    return () => this.pageListeners.delete(listener);
  }

  protected showPage(page: Page | null): void {
    if (this.shown === page) return;
    this.shown = page;
    for (const listener of this.pageListeners) listener(page);
  }

  // ---- the browser's lifetime ---------------------------------------------------------------

  private launched(): Promise<RunningChrome> {
    if (this.stopped) return Promise.reject(new Error(`lane ${this.index} is stopped`));
    if (this.chrome) return Promise.resolve(this.chrome);
    this.starting ??= this.launch().finally(() => (this.starting = undefined));
    return this.starting;
  }

  private async launch(): Promise<RunningChrome> {
    let chrome: RunningChrome;
    try {
      chrome = await launchChrome(this.o.chromePath, { proxyPort: this.proxy.port || undefined });
    } catch (err) {
      throw new Error(`chrome failed to start: ${messageOf(err)}`);
    }
    if (this.stopped) {
      await endChrome(chrome);
      throw new Error(`lane ${this.index} is stopped`);
    }
    this.chrome = chrome;
    this.workOnChrome = 0;
    void chrome.gone.then((reason) => this.onChromeGone(chrome, reason));
    this.log.info({ lane: this.index, pid: chrome.pid }, 'chrome started');
    return chrome;
  }

  private onChromeGone(chrome: RunningChrome, reason: string): void {
    if (this.retired.has(chrome)) return; // recycled between jobs: nothing was running on it
    for (const listener of this.crashListeners) listener(reason);
    if (this.chrome !== chrome) return; // stop() let go of it on purpose
    this.chrome = undefined;
    this.showPage(null);
    void endChrome(chrome, 1000); // reap its helpers and remove its profile
    if (this.stopped) return;
    this.spare = undefined;
    this.recycleCounts.crash++;
    this.log.warn({ lane: this.index, pid: chrome.pid, reason }, 'chrome went away; relaunching');
    // Relaunch now, not on the next job, so the lane is ready when work arrives.
    void this.launched().catch((err: unknown) => this.log.error({ lane: this.index, err: messageOf(err) }, 'chrome relaunch failed; the next job retries'));
  }

  /** The running browser, after proving it still answers; a hung one is killed and replaced first. */
  private async healthyChrome(): Promise<RunningChrome> {
    await this.between;
    const chrome = await this.launched();
    if (await this.answersInTime(chrome.browser.version())) return chrome;
    this.killHung(chrome);
    await chrome.gone;
    return this.launched();
  }

  private killHung(chrome: RunningChrome): void {
    this.log.warn({ lane: this.index, pid: chrome.pid }, 'chrome hung; killing it');
    killChromeNow(chrome, `hung (no answer to a CDP call within ${this.hangTimeoutMs / 1000} s), killed and relaunched`);
  }

  /** false only when the call neither answered nor failed in time: a failure is not a hang. */
  private answersInTime(call: Promise<unknown>, ms = this.hangTimeoutMs): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([
      call.then(
        () => true,
        () => true,
      ),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
    ]).finally(() => clearTimeout(timer));
  }

  /** While work runs, ask Chrome every few seconds whether it still answers. */
  private watchdog(chrome: RunningChrome): () => void {
    let asking = false;
    const timer = setInterval(() => {
      if (asking) return;
      asking = true;
      void this.answersInTime(chrome.browser.version()).then((ok) => {
        asking = false;
        if (!ok && this.chrome === chrome) this.killHung(chrome);
      });
    }, this.watchdogIntervalMs);
    return () => clearInterval(timer);
  }

  // ---- running work -------------------------------------------------------------------------

  /**
   * Runs `work` on a healthy Chrome; rejects with WorkAborted when the signal fires and with
   * ChromeCrashed when the browser or a watched page dies first. What `work` leaves pending is
   * the caller's to clean up (close the page).
   */
  protected async guarded<T>(signal: AbortSignal, work: Work<T>): Promise<T> {
    if (signal.aborted) throw new WorkAborted(signal.reason);
    const chrome = await this.healthyChrome();
    if (signal.aborted) throw new WorkAborted(signal.reason); // canceled while Chrome was (re)starting
    const stopWatchdog = this.watchdog(chrome);
    const cleanups: Array<() => void> = [stopWatchdog];
    try {
      return await new Promise<T>((resolve, reject) => {
        const onAbort = () => reject(new WorkAborted(signal.reason));
        signal.addEventListener('abort', onAbort, { once: true });
        cleanups.push(() => signal.removeEventListener('abort', onAbort));
        const onCrash = (reason: string) => reject(new ChromeCrashed(reason));
        this.crashListeners.add(onCrash);
        cleanups.push(() => this.crashListeners.delete(onCrash));
        const watchPage = (page: Page) => {
          const onPageError = () => {
            this.crashedPages.add(page);
            reject(new ChromeCrashed('the page crashed (its renderer process died)'));
          };
          page.once('error', onPageError);
          cleanups.push(() => page.off('error', onPageError));
          // A main-frame navigation the egress proxy refused fails the work, whoever started it
          // (goto, a click, a script); subresources and frames are only blocked.
          const isMainNavigation = (req: HTTPRequest) => req.isNavigationRequest() && req.frame() === page.mainFrame();
          const onResponse = (res: HTTPResponse) => {
            const rule = res.headers()[DENIED_HEADER];
            if (rule && isMainNavigation(res.request())) reject(new UrlDenied(res.url(), rule));
          };
          const onFailed = (req: HTTPRequest) => {
            if (!isMainNavigation(req) || !/ERR_TUNNEL_CONNECTION_FAILED/.test(req.failure()?.errorText ?? '')) return;
            const u = new URL(req.url());
            const denial = this.proxy.denialFor(u.hostname.replace(/^\[|\]$/g, ''), u.port === '' ? (u.protocol === 'https:' || u.protocol === 'wss:' ? 443 : 80) : Number(u.port));
            if (denial) reject(new UrlDenied(req.url(), denial.rule));
          };
          page.on('response', onResponse);
          page.on('requestfailed', onFailed);
          cleanups.push(() => page.off('response', onResponse), () => page.off('requestfailed', onFailed));
        };
        work(chrome, watchPage).then(resolve, (err: unknown) => {
          if (chrome.browser.connected && !isConnectionLoss(err)) return reject(err);
          // puppeteer's "target closed" often lands a moment before the disconnect: let the crash's reason win.
          const settle = new Promise<undefined>((r) => setTimeout(() => r(undefined), CRASH_SETTLE_MS));
          void Promise.race([chrome.gone, settle]).then((reason) => reject(reason === undefined ? err : new ChromeCrashed(reason)));
        });
      });
    } finally {
      for (const cleanup of cleanups) cleanup();
    }
  }

  protected isUsable(page: Page, chrome?: RunningChrome): boolean {
    return !page.isClosed() && !this.crashedPages.has(page) && (chrome === undefined || page.browser() === chrome.browser);
  }

  // ---- contexts: one per job or session -----------------------------------------------------

  /** A fresh context and page on `chrome`: the one made ahead of time if it is still good. */
  protected async newWorkContext(chrome: RunningChrome): Promise<WorkContext> {
    const spare = await this.spare?.catch(() => undefined);
    this.spare = undefined;
    const fresh = spare && spare.chrome === chrome && this.isUsable(spare.page, chrome) ? spare : undefined;
    if (spare && !fresh) void spare.context.close().catch(() => {});
    // The next one is made after this work ends (afterWork), not now: made alongside a running
    // job, its renderer start slowed the job on two cores (bench: 511 ms vs 101 ms p50).
    return fresh ?? makeContext(chrome);
  }

  /** Resolves once the lane has finished its between-jobs step and its next context is made (bench, tests). */
  async idle(): Promise<void> {
    await this.between;
    await this.spare;
  }

  private prepareSpare(chrome: RunningChrome): void {
    if (this.spare || this.stopped) return;
    const spare = makeContext(chrome).catch(() => undefined);
    this.spare = spare;
  }

  private discardSpare(): void {
    const spare = this.spare;
    this.spare = undefined;
    void spare?.then((s) => s?.context.close().catch(() => {}));
  }

  /** Close a context and everything in it; one that will not close in time means a hung browser. */
  protected async closeWorkContext(ctx: WorkContext): Promise<void> {
    if (!ctx.chrome.browser.connected || ctx.chrome !== this.chrome) return;
    const closed = ctx.context.close().catch(() => {});
    if (!(await this.answersInTime(closed, CONTEXT_CLOSE_MS))) this.killHung(ctx.chrome);
  }

  /**
   * After a job or session used the browser: recycle it if it has served its count or grown
   * past the memory limit, else make the next context ahead of time. Runs while the lane is
   * idle; the next work waits for it (healthyChrome), so a recycle never happens mid-job.
   */
  protected afterWork(): void {
    this.workOnChrome++;
    this.between = this.between.then(() => this.recycleOrPrepare()).catch((err: unknown) => this.log.warn({ lane: this.index, err: messageOf(err) }, 'between-jobs step failed'));
  }

  private async recycleOrPrepare(): Promise<void> {
    const chrome = this.chrome;
    if (!chrome || this.stopped) return;
    const reason = this.workOnChrome >= this.recycleJobs ? 'jobs' : this.rssDue?.chrome === chrome ? 'rss' : undefined;
    if (!reason) {
      this.prepareSpare(chrome);
      // Reading /proc takes a while on a busy host: measure in the background, never in the next job's way.
      void this.measure(chrome);
      return;
    }
    this.recycleCounts[reason]++;
    this.log.info({ lane: this.index, pid: chrome.pid, reason, jobs: this.workOnChrome, rss_mb: this.rssDue?.mb }, 'recycling chrome');
    this.rssDue = undefined;
    this.retired.add(chrome);
    this.chrome = undefined;
    this.discardSpare();
    this.showPage(null);
    await endChrome(chrome, 2000);
    if (!this.stopped) await this.launched();
  }

  private async measure(chrome: RunningChrome): Promise<void> {
    if (chrome.pid === undefined) return;
    // A reading walks all of /proc (the host's processes, not only Chrome's): under the real-browser
    // benchmark one after every job was a fifth of the agent's CPU. A browser is read after its
    // first piece of work, then at most every MEASURE_EVERY_MS.
    const now = Date.now();
    if (this.measured?.chrome === chrome && now - this.measured.at < MEASURE_EVERY_MS) return;
    this.measured = { chrome, at: now };
    const rss = await processTreeMemoryBytes(chrome.pid).catch(() => undefined);
    if (rss === undefined || rss <= this.maxRssBytes || this.chrome !== chrome) return;
    this.rssDue = { chrome, mb: Math.round(rss / 2 ** 20) };
    // Still idle: recycle now rather than at the end of the next job.
    if (!this.busyWithWork()) this.between = this.between.then(() => this.recycleOrPrepare()).catch(() => {});
  }

  /** Whether a job or session holds the lane (the subclass knows). */
  protected abstract busyWithWork(): boolean;

  /** Close a page; one that will not close in time means a hung browser, which is killed. */
  protected async closePage(page: Page): Promise<void> {
    const chrome = this.chrome;
    if (page.isClosed() || !chrome || page.browser() !== chrome.browser) return;
    if (!(await this.answersInTime(page.close()))) this.killHung(chrome);
  }
}

async function makeContext(chrome: RunningChrome): Promise<WorkContext> {
  const context = await chrome.browser.createBrowserContext();
  try {
    return { chrome, context, page: await context.newPage() };
  } catch (err) {
    void context.close().catch(() => {});
    throw err;
  }
}
