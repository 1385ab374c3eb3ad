// The browser half of a Chrome lane: run a piece of work on a healthy Chrome (its ChromeHost
// keeps it running, relaunches it and recycles it), raced against the job's signal and the
// browser's death, with a watchdog for a hung browser. Every piece of work gets a browser
// context of its own (cookies, storage, cache, service workers, permissions go with it). The
// Chrome is the lane's own by default, or shared by all lanes of the worker (`--shared-chrome`):
// then each context sends its traffic through its lane's egress proxy (`proxyServer`).
import type { BrowserContext, HTTPRequest, HTTPResponse, Page } from 'puppeteer-core';
import { type LaneRecycles, ownAddressRules } from 'paprika/wire';
import { EgressGuard } from '../egress/egress-guard.ts';
import { DENIED_HEADER, EgressProxy } from '../egress/egress-proxy.ts';
import { answersInTime, ChromeHost, type HostUser } from './chrome-host.ts';
import type { RunningChrome } from './chrome-process.ts';
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
  /**
   * A Chrome shared with other lanes (`--shared-chrome`); its recycle limits were set when it was
   * made. Without one the lane makes its own, behind its own proxy.
   */
  sharedHost?: ChromeHost;
}

/** A piece of work's own browser context and its first page. */
export interface WorkContext {
  readonly chrome: RunningChrome;
  readonly context: BrowserContext;
  readonly page: Page;
}

/** How long a puppeteer "target closed" error waits for the disconnect that explains it. */
const CRASH_SETTLE_MS = 500;
export const silentLog: LaneLog = { info() {}, warn() {}, error() {} };
/** A context that will not close in this long means a hung browser. */
const CONTEXT_CLOSE_MS = 5000;

type Work<T> = (chrome: RunningChrome, watchPage: (page: Page) => void) => Promise<T>;

export abstract class ChromeLaneCore implements HostUser {
  readonly index: number;
  readonly viewUrl: string | null;
  protected readonly log: LaneLog;
  private readonly hangTimeoutMs: number;
  private readonly watchdogIntervalMs: number;
  private readonly host: ChromeHost;
  /** Shared browser: this lane's contexts name its proxy themselves (the browser's flag names another lane's). */
  private readonly proxyPerContext: boolean;
  private stopped = false;
  private readonly crashListeners = new Set<(reason: string) => void>();
  private readonly crashedPages = new WeakSet<Page>();
  private shown: Page | null = null;
  private readonly pageListeners = new Set<(page: Page | null) => void>();
  readonly egress: EgressGuard;
  readonly proxy: EgressProxy;
  /** The between-work step (wait for a recycle, prepare the next context). */
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
    this.proxyPerContext = o.sharedHost !== undefined;
    this.host =
      o.sharedHost ??
      new ChromeHost({ chromePath: o.chromePath, proxyPort: () => this.proxy.port, lanes: 1, hangTimeoutMs: this.hangTimeoutMs, recycleJobs: o.recycleJobs ?? 100, maxRssMb: o.maxRssMb ?? 1024, log: this.log });
  }

  /** A CDP client's browser: the same Chrome binary, behind this lane's egress proxy. */
  cdpBrowser(): { chromePath: string; proxyPort?: number } {
    return { chromePath: this.o.chromePath, proxyPort: this.proxy.port || undefined };
  }

  /** Restarts of this lane's Chrome by reason, since it was made (a shared Chrome's: every lane reports the same). */
  get recycles(): LaneRecycles {
    return this.host.recycles;
  }

  /** The browser this lane runs on (undefined while it is being relaunched). Tests kill it. */
  get browserHost(): ChromeHost {
    return this.host;
  }

  /** The current browser process (undefined while it is being relaunched). Tests kill it. */
  get pid(): number | undefined {
    return this.host.pid;
  }

  async start(): Promise<void> {
    this.stopped = false;
    if (this.proxy.port === 0) {
      // A page must not reach the proxy itself (it would loop through it).
      this.egress.addOwn(ownAddressRules('127.0.0.1', await this.proxy.start()));
    }
    await this.host.start(this);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.showPage(null);
    await this.between.catch(() => {});
    // A context still being made ahead of time would race the browser's shutdown: let it settle first.
    const spare = this.spare;
    this.spare = undefined;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([spare, new Promise((r) => (timer = setTimeout(r, 2000)))]);
    clearTimeout(timer);
    await this.host.stop(this);
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

  // ---- the browser's lifetime (the host's) -------------------------------------------------

  /** The host's browser died under this lane (not a recycle): running work fails as a crash. */
  browserGone(reason: string): void {
    for (const listener of this.crashListeners) listener(reason);
    if (this.stopped) return;
    this.showPage(null);
    this.spare = undefined;
  }

  private killHung(chrome: RunningChrome): void {
    this.host.killHung(chrome);
  }

  /** Wait for a due recycle, then hold the browser for a job or a session (until releaseBrowser). */
  protected holdBrowser(kind: 'job' | 'session'): Promise<void> {
    return this.host.hold(this, kind);
  }

  /** While work runs, ask Chrome every few seconds whether it still answers. */
  private watchdog(chrome: RunningChrome): () => void {
    let asking = false;
    const timer = setInterval(() => {
      if (asking) return;
      asking = true;
      void answersInTime(chrome.browser.version(), this.hangTimeoutMs).then((ok) => {
        asking = false;
        if (!ok) this.killHung(chrome);
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
    const chrome = await this.host.healthy();
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
    // The next one is made after this work ends (releaseBrowser), not now: made alongside a running
    // job, its renderer start slowed the job on two cores (bench: 511 ms vs 101 ms p50).
    return fresh ?? this.makeContext(chrome);
  }

  /** Resolves once the lane has finished its between-jobs step and its next context is made (bench, tests). */
  async idle(): Promise<void> {
    await this.between;
    await this.host.settled();
    await this.spare;
  }

  private prepareSpare(chrome: RunningChrome): void {
    if (this.spare || this.stopped) return;
    const spare = this.makeContext(chrome).catch(() => undefined);
    this.spare = spare;
  }

  private async makeContext(chrome: RunningChrome): Promise<WorkContext> {
    // `<-loopback>`: loopback goes through the proxy too (Chrome bypasses it for loopback by default).
    const context = await chrome.browser.createBrowserContext(this.proxyPerContext ? { proxyServer: `http://127.0.0.1:${this.proxy.port}`, proxyBypassList: ['<-loopback>'] } : {});
    try {
      return { chrome, context, page: await context.newPage() };
    } catch (err) {
      void context.close().catch(() => {});
      throw err;
    }
  }

  /** Close a context and everything in it; one that will not close in time means a hung browser. */
  protected async closeWorkContext(ctx: WorkContext): Promise<void> {
    if (!ctx.chrome.browser.connected || ctx.chrome !== this.host.current) return;
    const closed = ctx.context.close().catch(() => {});
    if (!(await answersInTime(closed, CONTEXT_CLOSE_MS))) this.killHung(ctx.chrome);
  }

  /**
   * The job or session is over (`used`: it used the browser, which counts towards recycling).
   * The host recycles the browser now if it is due; then the lane makes its next context ahead
   * of time, while it is idle.
   */
  protected releaseBrowser(used: boolean): void {
    this.host.release(this, used);
    this.between = this.between
      .then(() => this.host.settled())
      .then(() => {
        const chrome = this.host.current;
        if (chrome && !this.stopped) this.prepareSpare(chrome);
      })
      .catch((err: unknown) => this.log.warn({ lane: this.index, err: messageOf(err) }, 'between-jobs step failed'));
  }

  /** Close a page; one that will not close in time means a hung browser, which is killed. */
  protected async closePage(page: Page): Promise<void> {
    const chrome = this.host.current;
    if (page.isClosed() || !chrome || page.browser() !== chrome.browser) return;
    if (!(await answersInTime(page.close(), this.hangTimeoutMs))) this.killHung(chrome);
  }
}
