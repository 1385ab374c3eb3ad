// Clocks for tests beside hub-core's ManualClock: one whose sleeps cost no time, one that runs
// on real time and tells when a loop goes back to sleep (a pass of that loop has ended).
import type { Clock } from '../../hub-core/src/ports/clock.ts';
import { systemClock } from '../../hub-core/src/ports/clock.ts';
import { waitFor } from './wait.ts';

/**
 * A clock whose sleeps take no real time: each sleep moves its time forward by the amount
 * asked and resolves at once, and is recorded. For code that only waits between tries (a
 * client's backoff), where a ManualClock would need a test to advance it after every try.
 */
export class SteppingClock {
  readonly slept: number[] = [];
  constructor(private t = 0) {}
  now(): number {
    return this.t;
  }
  async sleep(ms: number): Promise<void> {
    this.slept.push(ms);
    this.t += Math.max(0, ms);
  }
}

/**
 * The system clock, counting the sleeps it is asked for by length. A hub's periodic loops
 * sleep their period after every pass, so with a period no other loop uses, "n more sleeps of
 * 100 ms" means "n more passes of the loop whose period is 100 ms have ended".
 */
export class ObservedClock implements Clock {
  private readonly sleeps = new Map<number, number[]>();
  now(): number {
    return systemClock.now();
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    const at = this.sleeps.get(ms) ?? [];
    at.push(this.now());
    this.sleeps.set(ms, at);
    return systemClock.sleep(ms, signal);
  }
  setTimer(ms: number, fn: () => void): () => void {
    return systemClock.setTimer(ms, fn);
  }
  /** When each sleep of `ms` began (a pass of that loop ended), oldest first. */
  sleepsOf(ms: number): readonly number[] {
    return this.sleeps.get(ms) ?? [];
  }
  /** Waits until `n` more sleeps of `ms` have begun than when it was called. */
  async passes(ms: number, n: number, what: string, timeoutMs = 15_000): Promise<void> {
    const target = this.sleepsOf(ms).length + n;
    await waitFor(what, async () => this.sleepsOf(ms).length >= target, timeoutMs, 5);
  }
  /** The end of the `n`-th pass (1-based) of the loop with period `ms` that ended at or after `t`; waits for it. */
  async passEndAfter(ms: number, t: number, n: number, what: string, timeoutMs = 15_000): Promise<number> {
    return waitFor(what, async () => this.sleepsOf(ms).filter((at) => at >= t)[n - 1], timeoutMs, 5);
  }
}
