// Fleet-wide thresholds (agent restarts, self-update) are offset by a random 0..JITTER_MAX
// so that a whole fleet never exits at the same second (seed, heartbeat design).
import type { Random } from './random.ts';

export function jitteredMs(baseMs: number, jitterMaxS: number, rng: Random): number {
  return baseMs + Math.floor(rng.next() * jitterMaxS * 1000);
}

/** Reconnect backoff: exponential up to capMs, the upper half jittered (never a hot retry loop). */
export function backoffMs(attempt: number, baseMs: number, capMs: number, rng: Random): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.min(attempt, 20));
  return Math.floor(ceiling / 2 + rng.next() * (ceiling / 2));
}
