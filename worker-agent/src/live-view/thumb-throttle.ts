// At most one thumbnail per interval for one lane, the latest winning: a frame that comes
// sooner than the interval after the last one sent waits in a single slot (a newer frame
// replaces it) and goes out when the interval is up. Nothing queues, so nothing sent is old.
export interface ThumbTimers {
  now(): number;
  /** Calls fn once after ms; the returned function cancels it. */
  setTimer(ms: number, fn: () => void): () => void;
}

export const systemTimers: ThumbTimers = {
  now: () => Date.now(),
  setTimer(ms, fn) {
    const t = setTimeout(fn, Math.max(0, ms));
    return () => clearTimeout(t);
  },
};

export class ThumbThrottle<T> {
  private lastSentAt = -Infinity;
  private pending: T | undefined;
  private cancelTimer: (() => void) | undefined;
  private stopped = false;

  constructor(
    private readonly intervalMs: number,
    private readonly timers: ThumbTimers,
    private readonly emit: (item: T) => void,
  ) {}

  offer(item: T): void {
    if (this.stopped) return;
    const wait = this.lastSentAt + this.intervalMs - this.timers.now();
    if (wait <= 0 && !this.cancelTimer) return this.send(item);
    this.pending = item;
    this.cancelTimer ??= this.timers.setTimer(wait, () => {
      this.cancelTimer = undefined;
      const next = this.pending;
      this.pending = undefined;
      if (next !== undefined && !this.stopped) this.send(next);
    });
  }

  stop(): void {
    this.stopped = true;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.pending = undefined;
  }

  private send(item: T): void {
    this.lastSentAt = this.timers.now();
    this.emit(item);
  }
}
