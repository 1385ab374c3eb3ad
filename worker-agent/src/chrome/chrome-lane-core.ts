// The browser half of a Chrome lane: keep one healthy Chrome, notice when it dies or hangs,
// relaunch it, and run a piece of work raced against the job's signal and the browser's death.
import type { Page } from 'puppeteer-core';
import { endChrome, killChromeNow, launchChrome, type RunningChrome } from './chrome-process.ts';
import { ChromeCrashed, isConnectionLoss, messageOf, WorkAborted } from './lane-errors.ts';

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
}

/** How long a puppeteer "target closed" error waits for the disconnect that explains it. */
const CRASH_SETTLE_MS = 500;
const silentLog: LaneLog = { info() {}, warn() {}, error() {} };

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

  constructor(private readonly o: ChromeLaneOptions) {
    this.index = o.index;
    this.viewUrl = o.viewUrl;
    this.log = o.log ?? silentLog;
    this.hangTimeoutMs = o.hangTimeoutMs ?? 15_000;
    this.watchdogIntervalMs = o.watchdogIntervalMs ?? Math.min(5000, this.hangTimeoutMs);
  }

  /** The current browser process (undefined while it is being relaunched). Tests kill it. */
  get pid(): number | undefined {
    return this.chrome?.pid;
  }

  async start(): Promise<void> {
    this.stopped = false;
    await this.launched();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.showPage(null);
    const chrome = this.chrome;
    this.chrome = undefined;
    await this.starting?.catch(() => {}); // a launch in progress ends its own browser once it sees `stopped`
    if (chrome) await endChrome(chrome);
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
      chrome = await launchChrome(this.o.chromePath);
    } catch (err) {
      throw new Error(`chrome failed to start: ${messageOf(err)}`);
    }
    if (this.stopped) {
      await endChrome(chrome);
      throw new Error(`lane ${this.index} is stopped`);
    }
    this.chrome = chrome;
    void chrome.gone.then((reason) => this.onChromeGone(chrome, reason));
    this.log.info({ lane: this.index, pid: chrome.pid }, 'chrome started');
    return chrome;
  }

  private onChromeGone(chrome: RunningChrome, reason: string): void {
    for (const listener of this.crashListeners) listener(reason);
    if (this.chrome !== chrome) return; // stop() let go of it on purpose
    this.chrome = undefined;
    this.showPage(null);
    void endChrome(chrome, 1000); // reap its helpers and remove its profile
    if (this.stopped) return;
    this.log.warn({ lane: this.index, pid: chrome.pid, reason }, 'chrome went away; relaunching');
    // Relaunch now, not on the next job, so the lane is ready when work arrives.
    void this.launched().catch((err: unknown) => this.log.error({ lane: this.index, err: messageOf(err) }, 'chrome relaunch failed; the next job retries'));
  }

  /** The running browser, after proving it still answers; a hung one is killed and replaced first. */
  private async healthyChrome(): Promise<RunningChrome> {
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
  private answersInTime(call: Promise<unknown>): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([
      call.then(
        () => true,
        () => true,
      ),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), this.hangTimeoutMs))),
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

  /** Close a page; one that will not close in time means a hung browser, which is killed. */
  protected async closePage(page: Page): Promise<void> {
    const chrome = this.chrome;
    if (page.isClosed() || !chrome || page.browser() !== chrome.browser) return;
    if (!(await this.answersInTime(page.close()))) this.killHung(chrome);
  }
}
