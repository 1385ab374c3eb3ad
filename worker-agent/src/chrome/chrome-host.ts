// One Chrome's lifetime, for the lanes that use it: one lane (the default, a Chrome per lane) or
// every lane of the worker (`--shared-chrome`). It launches the browser, tells each of its lanes
// when it dies so their running work fails as a crash, relaunches it once for all of them, and
// recycles it between jobs after PAPRIKA_LANE_RECYCLE_JOBS jobs per lane or past
// PAPRIKA_LANE_MAX_RSS_MB per lane (both scaled by the lanes sharing it). A recycle never
// happens under running work: a due recycle holds new jobs back until the running ones finish
// ("draining"), except while a session is open (a session may last minutes, and holding every
// other lane's jobs back for it would idle the worker): then it waits for the session to close.
import type { LaneRecycles } from 'paprika/wire';
import { endChrome, killChromeNow, launchChrome, type RunningChrome } from './chrome-process.ts';
import { processTreeMemoryBytes } from './process-tree-memory.ts';
import { messageOf } from './lane-errors.ts';

export interface HostLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** What a host needs from a lane that uses it. */
export interface HostUser {
  readonly index: number;
  /** The browser died under the lane (not a recycle): its running work fails with `reason`. */
  browserGone(reason: string): void;
}

export interface ChromeHostOptions {
  chromePath: string;
  /** The proxy the whole browser runs behind (`--proxy-server`); its port is read at each launch. */
  proxyPort: () => number | undefined;
  /** Lanes sharing this browser: the recycle thresholds are per lane, multiplied by this. */
  lanes: number;
  hangTimeoutMs: number;
  recycleJobs: number;
  maxRssMb: number;
  log: HostLog;
}

/** How often a browser's memory is read at most (PAPRIKA_LANE_MAX_RSS_MB is checked this often). */
const MEASURE_EVERY_MS = 5000;

export class ChromeHost {
  private chrome: RunningChrome | undefined;
  private starting: Promise<RunningChrome> | undefined;
  private readonly users = new Set<HostUser>();
  /** Lanes started and not stopped: the browser ends when the last one stops. */
  private readonly active = new Set<HostUser>();
  /** Lanes holding the browser right now (a job or an open session). */
  private readonly holders = new Map<HostUser, 'job' | 'session'>();
  /** Browsers let go of on purpose (recycled, stopped): their exit is no crash. */
  private readonly retired = new WeakSet<RunningChrome>();
  private workOnChrome = 0;
  /** Set by a background memory reading: the Chrome it read is recycled at the next step between jobs. */
  private rssDue: { chrome: RunningChrome; mb: number } | undefined;
  private measured: { chrome: RunningChrome; at: number } | undefined;
  private readonly recycleCounts: LaneRecycles = { jobs: 0, rss: 0, crash: 0 };
  /** Open while no recycle is under way; a due recycle closes it (new work waits) until it is done. */
  private gate: Promise<void> = Promise.resolve();
  private openGate: (() => void) | undefined;
  private recycling = false;
  private readonly recycleJobs: number;
  private readonly maxRssBytes: number;

  constructor(private readonly o: ChromeHostOptions) {
    this.recycleJobs = o.recycleJobs * o.lanes;
    this.maxRssBytes = o.maxRssMb * o.lanes * 1024 * 1024;
  }

  get current(): RunningChrome | undefined {
    return this.chrome;
  }

  get pid(): number | undefined {
    return this.chrome?.pid;
  }

  get recycles(): LaneRecycles {
    return { ...this.recycleCounts };
  }

  /** A recycle is due or under way: new work waits for it. */
  get draining(): boolean {
    return this.openGate !== undefined;
  }

  /** Lanes holding the browser now (tests). */
  get holding(): number {
    return this.holders.size;
  }

  get stopped(): boolean {
    return this.active.size === 0;
  }

  /** The gate's current state: resolves once no recycle is pending (tests, bench, the lane's spare). */
  settled(): Promise<void> {
    return this.gate;
  }

  async start(user: HostUser): Promise<void> {
    this.users.add(user);
    this.active.add(user);
    await this.launched();
  }

  /** The lane is done with the browser; the last lane to stop ends it. */
  async stop(user: HostUser): Promise<void> {
    this.active.delete(user);
    this.holders.delete(user);
    if (this.active.size > 0) return void this.maybeRecycle();
    this.releaseGate();
    const chrome = this.chrome;
    this.chrome = undefined;
    if (chrome) this.retired.add(chrome);
    await this.starting?.catch(() => {}); // a launch in progress ends its own browser once it sees `stopped`
    if (chrome) await endChrome(chrome);
  }

  // ---- holding the browser: a job or a session --------------------------------------------

  /** Waits for a pending recycle, then counts the lane as using the browser until `release`. */
  async hold(user: HostUser, kind: 'job' | 'session'): Promise<void> {
    await this.gate;
    this.holders.set(user, kind);
  }

  /**
   * The lane's job or session is over. `used`: it used the browser (counts towards recycling;
   * a sleep job does not). Then recycle if due, else read the memory in the background.
   */
  release(user: HostUser, used: boolean): void {
    if (!this.holders.delete(user)) return;
    if (used) this.workOnChrome++;
    this.maybeRecycle();
    const chrome = this.chrome;
    if (used && chrome && !this.recycling) void this.measure(chrome);
  }

  private dueReason(chrome: RunningChrome): 'jobs' | 'rss' | undefined {
    return this.workOnChrome >= this.recycleJobs ? 'jobs' : this.rssDue?.chrome === chrome ? 'rss' : undefined;
  }

  private maybeRecycle(): void {
    const chrome = this.chrome;
    if (!chrome || this.recycling || this.stopped) return;
    const reason = this.dueReason(chrome);
    if (!reason) return;
    if ([...this.holders.values()].includes('session')) return; // after the session closes
    if (!this.openGate) this.gate = new Promise<void>((resolve) => (this.openGate = resolve)); // drain: new work waits
    if (this.holders.size > 0) return; // the last running job's release recycles
    this.recycling = true;
    void this.recycle(chrome, reason)
      .catch((err: unknown) => this.o.log.warn({ err: messageOf(err) }, 'recycling chrome failed'))
      .finally(() => {
        this.recycling = false;
        this.releaseGate();
      });
  }

  private releaseGate(): void {
    const open = this.openGate;
    this.openGate = undefined;
    open?.();
  }

  private async recycle(chrome: RunningChrome, reason: 'jobs' | 'rss'): Promise<void> {
    this.recycleCounts[reason]++;
    this.o.log.info({ lanes: this.lanesLabel(), pid: chrome.pid, reason, jobs: this.workOnChrome, rss_mb: this.rssDue?.mb }, 'recycling chrome');
    this.rssDue = undefined;
    this.retired.add(chrome);
    this.chrome = undefined;
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
    const bytes = await processTreeMemoryBytes(chrome.pid).catch(() => undefined);
    if (bytes === undefined || bytes <= this.maxRssBytes || this.chrome !== chrome) return;
    this.rssDue = { chrome, mb: Math.round(bytes / 2 ** 20) };
    this.maybeRecycle(); // idle: recycle now rather than at the end of the next job
  }

  // ---- the browser's lifetime ---------------------------------------------------------------

  launched(): Promise<RunningChrome> {
    if (this.stopped) return Promise.reject(new Error(`${this.lanesLabel()} stopped`));
    if (this.chrome) return Promise.resolve(this.chrome);
    this.starting ??= this.launch().finally(() => (this.starting = undefined));
    return this.starting;
  }

  private async launch(): Promise<RunningChrome> {
    let chrome: RunningChrome;
    try {
      chrome = await launchChrome(this.o.chromePath, { proxyPort: this.o.proxyPort() || undefined });
    } catch (err) {
      throw new Error(`chrome failed to start: ${messageOf(err)}`);
    }
    if (this.stopped) {
      await endChrome(chrome);
      throw new Error(`${this.lanesLabel()} stopped`);
    }
    this.chrome = chrome;
    this.workOnChrome = 0;
    void chrome.gone.then((reason) => this.onChromeGone(chrome, reason));
    this.o.log.info({ lanes: this.lanesLabel(), pid: chrome.pid }, 'chrome started');
    return chrome;
  }

  private onChromeGone(chrome: RunningChrome, reason: string): void {
    if (this.retired.has(chrome)) return; // recycled between jobs or stopped: nothing was running on it
    for (const user of this.users) user.browserGone(reason);
    if (this.chrome !== chrome) return;
    this.chrome = undefined;
    void endChrome(chrome, 1000); // reap its helpers and remove its profile
    // A recycle that was due belonged to the dead browser: the relaunched one starts afresh.
    if (!this.recycling) this.releaseGate();
    if (this.stopped) return;
    this.recycleCounts.crash++;
    this.o.log.warn({ lanes: this.lanesLabel(), pid: chrome.pid, reason }, 'chrome went away; relaunching');
    // Relaunch now, once for every lane on it, so the lanes are ready when work arrives.
    void this.launched().catch((err: unknown) => this.o.log.error({ lanes: this.lanesLabel(), err: messageOf(err) }, 'chrome relaunch failed; the next job retries'));
  }

  /** The running browser, after proving it still answers; a hung one is killed and replaced first. */
  async healthy(): Promise<RunningChrome> {
    const chrome = await this.launched();
    if (await answersInTime(chrome.browser.version(), this.o.hangTimeoutMs)) return chrome;
    this.killHung(chrome);
    await chrome.gone;
    return this.launched();
  }

  killHung(chrome: RunningChrome): void {
    if (this.chrome !== chrome) return;
    this.o.log.warn({ lanes: this.lanesLabel(), pid: chrome.pid }, 'chrome hung; killing it');
    killChromeNow(chrome, `hung (no answer to a CDP call within ${this.o.hangTimeoutMs / 1000} s), killed and relaunched`);
  }

  private lanesLabel(): string {
    const lanes = [...this.users].map((u) => u.index);
    return lanes.length === 1 ? `lane ${lanes[0]}` : `lanes ${lanes.join(',')}`;
  }
}

/** false only when the call neither answered nor failed in time: a failure is not a hang. */
export function answersInTime(call: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    call.then(
      () => true,
      () => true,
    ),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
  ]).finally(() => clearTimeout(timer));
}
