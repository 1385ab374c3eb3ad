/** Time, injected: loops and deciders never read Date.now() or setTimeout directly. */
export interface Clock {
  now(): number;
  /** Resolves after ms, or early (without throwing) when the signal aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep(ms, signal) {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    });
  },
};

/** A clock tests move by hand. sleep() resolves when advance() passes its deadline. */
export class ManualClock implements Clock {
  private waiters: Array<{ at: number; resolve: () => void }> = [];
  constructor(private t = 0) {}
  now(): number {
    return this.t;
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const w = { at: this.t + ms, resolve };
      this.waiters.push(w);
      signal?.addEventListener('abort', () => resolve(), { once: true });
    });
  }
  advance(ms: number): void {
    this.t += ms;
    const due = this.waiters.filter((w) => w.at <= this.t);
    this.waiters = this.waiters.filter((w) => w.at > this.t);
    for (const w of due) w.resolve();
  }
}
