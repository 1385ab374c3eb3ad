// The seed's pick_worker(): filter the live, active workers that have a free lane, a view
// URL and disk to spare, and (sixth filter) that run the kind of work asked for; prefer the
// least loaded, then the largest; break ties at random.
import type { Random } from '../wire/random.ts';

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
  /**
   * The work its lanes run, from its hello (WORK_KINDS); null or absent: not declared (an
   * older agent), taken as any.
   */
  readonly kinds?: readonly string[] | null;
  /** Set when it said goodbye (a graceful stop): not alive from then on. */
  readonly left_at_ms?: number | null;
}

export interface PickConfig {
  readonly diskMaxPct: number;
  readonly workerTtlMs: number;
  readonly nowMs: number;
  /** The work to place: workers whose lanes do not run it are not candidates. Unset: any (capacity). */
  readonly kind?: string;
}

/**
 * Why a worker is not a candidate now: the first filter it fails, in the scheduler's order, or
 * undefined when it is one. The scheduler, the capacity figures and the console's "why is it
 * waiting" answer all come from this one function, so they cannot disagree.
 */
export type Exclusion = 'not_alive' | 'drain' | 'standby' | 'inactive' | 'full' | 'no_view_url' | 'not_ready' | 'disk_full' | 'kind_not_supported';

export function excludedBy(w: SchedulableWorker, cfg: PickConfig): Exclusion | undefined {
  if (cfg.nowMs - w.last_seen_ms > cfg.workerTtlMs || w.left_at_ms != null) return 'not_alive'; // heartbeat within TTL, no goodbye
  if (w.status !== 'active') return w.status === 'drain' || w.status === 'standby' ? w.status : 'inactive'; // set by an operator
  if (w.in_flight >= w.max_concurrent) return 'full'; // no free lane
  // Workers without a lane URL made jobs fail "no free lane" three times in a row (seed 71ec64da63c5).
  if (!((w.lane_novnc_urls != null && w.lane_novnc_urls.length > 0) || Boolean(w.novnc_url))) return 'no_view_url';
  if (w.ready === false) return 'not_ready';
  // Refuse here, before the worker would answer "disk full" after the round trip.
  if (w.disk_pct >= cfg.diskMaxPct) return 'disk_full';
  // A fetch job sent to a simulated lane failed "simulated lanes run sleep jobs only" (issue 18).
  if (cfg.kind !== undefined && !runsKind(w, cfg.kind)) return 'kind_not_supported';
  return undefined;
}

export function runsKind(w: Pick<SchedulableWorker, 'kinds'>, kind: string): boolean {
  return w.kinds == null || w.kinds.includes(kind);
}

export function isCandidate(w: SchedulableWorker, cfg: PickConfig): boolean {
  return excludedBy(w, cfg) === undefined;
}

/** A worker whose lanes take work when free: everything but being full may exclude it. */
export function takesWork(w: SchedulableWorker, cfg: PickConfig): boolean {
  const why = excludedBy(w, cfg);
  return why === undefined || why === 'full';
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

export interface CapacitySummary {
  /** Lanes of workers that take work (alive, active, reporting, disk below the limit). */
  capacity: number;
  in_flight: number;
  /** Workers that take work. */
  accepting: number;
  /** Workers that do not, by the filter that rules each out. */
  excluded: Partial<Record<Exclusion, number>>;
}

/** The fleet's usable capacity, and when it is zero, why: for the header, /admin/stats and the metrics. */
export function summariseCapacity(workers: readonly SchedulableWorker[], cfg: PickConfig): CapacitySummary {
  const out: CapacitySummary = { capacity: 0, in_flight: 0, accepting: 0, excluded: {} };
  for (const w of workers) {
    const why = excludedBy(w, cfg);
    if (why === undefined || why === 'full') {
      out.accepting++;
      out.capacity += w.max_concurrent;
      out.in_flight += w.in_flight;
    } else {
      out.excluded[why] = (out.excluded[why] ?? 0) + 1;
    }
  }
  return out;
}

/** Free lanes over the candidates: what a hub advertises to its peers for forwarding. */
export function freeLanes(workers: readonly SchedulableWorker[], cfg: PickConfig): number {
  let free = 0;
  for (const w of workers) if (isCandidate(w, cfg)) free += w.max_concurrent - w.in_flight;
  return free;
}
