// The seed's pick_worker(): filter the live, active workers that have a free lane, a view
// URL and disk to spare; prefer the least loaded, then the largest; break ties at random.
import type { Random } from '../ports/random.ts';

/** What the scheduler reads of a worker: its heartbeat values and self-declared capabilities. */
export interface SchedulableWorker {
  readonly worker_id: string;
  readonly status: string;
  readonly in_flight: number;
  readonly max_concurrent: number;
  readonly lane_novnc_urls: readonly string[] | null | undefined;
  readonly novnc_url: string | null | undefined;
  readonly disk_pct: number;
  /**
   * False while the link cannot take work though it looks free: its disk is not reported yet,
   * or a newer link of the same worker is saying hello (this one is dead).
   */
  readonly ready?: boolean;
  /** Epoch ms of the last heartbeat. */
  readonly last_seen_ms: number;
}

export interface PickConfig {
  readonly diskMaxPct: number;
  readonly workerTtlMs: number;
  readonly nowMs: number;
}

export function isCandidate(w: SchedulableWorker, cfg: PickConfig): boolean {
  return (
    cfg.nowMs - w.last_seen_ms <= cfg.workerTtlMs && // alive: heartbeat within TTL
    w.status === 'active' && // not drained / standby by an operator
    w.in_flight < w.max_concurrent && // a lane is free
    // Workers without a lane URL made jobs fail "no free lane" three times in a row (seed 71ec64da63c5).
    ((w.lane_novnc_urls != null && w.lane_novnc_urls.length > 0) || Boolean(w.novnc_url)) &&
    // Refuse here, before the worker would answer "disk full" after the round trip.
    w.ready !== false &&
    w.disk_pct < cfg.diskMaxPct
  );
}

/**
 * Order by (in_flight, -max_concurrent); ties uniformly at random so that idle workers share
 * one-at-a-time traffic evenly instead of the first id taking it all (the seed's complaint).
 * Two passes, no allocation, one random draw: O(n) for n workers.
 */
export function pickWorker<W extends SchedulableWorker>(workers: readonly W[], cfg: PickConfig, rng: Random): W | undefined {
  let bestInFlight = Infinity;
  let bestMax = -Infinity;
  let ties = 0;
  for (let i = 0; i < workers.length; i++) {
    const w = workers[i];
    if (!isCandidate(w, cfg)) continue;
    if (w.in_flight < bestInFlight || (w.in_flight === bestInFlight && w.max_concurrent > bestMax)) {
      bestInFlight = w.in_flight;
      bestMax = w.max_concurrent;
      ties = 1;
    } else if (w.in_flight === bestInFlight && w.max_concurrent === bestMax) {
      ties++;
    }
  }
  if (ties === 0) return undefined;
  let target = Math.min(ties - 1, Math.floor(rng.next() * ties));
  for (let i = 0; i < workers.length; i++) {
    const w = workers[i];
    if (w.in_flight !== bestInFlight || w.max_concurrent !== bestMax || !isCandidate(w, cfg)) continue;
    if (target === 0) return w;
    target--;
  }
  return undefined;
}

/** Free lanes over the candidates: what a hub advertises to its peers for forwarding. */
export function freeLanes(workers: readonly SchedulableWorker[], cfg: PickConfig): number {
  let free = 0;
  for (const w of workers) if (isCandidate(w, cfg)) free += w.max_concurrent - w.in_flight;
  return free;
}
