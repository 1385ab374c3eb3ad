/**
 * Time, injected: loops, services and deciders never read Date.now() or call setTimeout
 * directly. Production uses `systemClock`; tests move a `ManualClock` by hand.
 */
export interface Clock {
  now(): number;
  /** Resolves after ms, or early (without throwing) when the signal aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Calls fn once after ms; the returned function cancels it (harmless after it fired). */
  setTimer(ms: number, fn: () => void): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep(ms, signal) {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const timer = setTimeout(done, Math.max(0, ms));
      function done() {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    });
  },
  setTimer(ms, fn) {
    const timer = setTimeout(fn, Math.max(0, ms));
    timer.unref?.();
    return () => clearTimeout(timer);
  },
};

/** A clock tests move by hand: sleeps and timers fire when advance() passes their deadline, in deadline order. */
export class ManualClock implements Clock {
  private waiters: Array<{ at: number; seq: number; fire: () => void }> = [];
  private seq = 0;
  constructor(private t = 0) {}
  now(): number {
    return this.t;
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const cancel = this.setTimer(ms, resolve);
      signal?.addEventListener('abort', () => (cancel(), resolve()), { once: true });
    });
  }
  setTimer(ms: number, fn: () => void): () => void {
    const w = { at: this.t + Math.max(0, ms), seq: this.seq++, fire: fn };
    this.waiters.push(w);
    return () => {
      this.waiters = this.waiters.filter((x) => x !== w);
    };
  }
  /** Timers not yet fired (for assertions such as "no timer is left behind"). */
  get pending(): number {
    return this.waiters.length;
  }
  /** Moves time forward by ms, firing every timer whose deadline is passed, earliest first. */
  advance(ms: number): void {
    const target = this.t + ms;
    for (;;) {
      const due = this.waiters.filter((w) => w.at <= target).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.waiters = this.waiters.filter((w) => w !== due);
      this.t = Math.max(this.t, due.at);
      due.fire();
    }
    this.t = target;
  }
}

/** Raised by withDeadline when the work did not settle in time. */
export class DeadlineError extends Error {
  constructor(readonly what: string, readonly ms: number) {
    super(`${what}: no answer within ${ms / 1000} s`);
    this.name = 'DeadlineError';
  }
}

/**
 * The one race against time: resolves with the work's value, or rejects with DeadlineError
 * after ms (the work's own promise is left to settle; its rejection is swallowed).
 */
export function withDeadline<T>(clock: Clock, ms: number, what: string, work: Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const cancel = clock.setTimer(ms, () => {
      if (settled) return;
      settled = true;
      reject(new DeadlineError(what, ms));
    });
    work.then(
      (v) => {
        if (settled) return;
        settled = true;
        cancel();
        resolve(v);
      },
      (err) => {
        if (settled) return;
        settled = true;
        cancel();
        reject(err);
      },
    );
  });
}
