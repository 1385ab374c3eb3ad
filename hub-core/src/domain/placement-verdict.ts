// "Why is it waiting?": for each worker, the scheduler's own verdict (excludedBy, the filter
// pickWorker applies), judged with liveness as the fleet view saw it. The console shows these
// verdicts and their reasons as the hub words them; it applies no rule of its own.
import type { PlacementVerdictJson } from '../wire/json.ts';
import { excludedBy, type Exclusion, type PickConfig, type SchedulableWorker } from './pick-worker.ts';

/** What each exclusion means, for an operator. */
export const EXCLUSION_REASONS: Readonly<Record<Exclusion, string>> = Object.freeze({
  not_alive: 'no heartbeat within the worker TTL',
  drain: 'drained by an operator: finishes its jobs, takes no new ones',
  standby: 'on standby: linked and healthy, kept out of scheduling by an operator',
  inactive: 'status is not active',
  full: 'every lane is busy',
  no_view_url: 'reports no lane view URL',
  not_ready: 'link not ready (disk not reported yet, or a newer link is saying hello)',
  disk_full: 'disk use at or above the limit',
  kind_not_supported: 'does not run this kind of job',
});

export interface VerdictWorker extends Omit<SchedulableWorker, 'last_seen_ms'> {
  alive: boolean;
  hub_id?: string | null;
}

/** The wire shape, with the exclusion typed. excluded_by null: the scheduler would place a job there now. */
export interface PlacementVerdict extends PlacementVerdictJson {
  excluded_by: Exclusion | null;
}

export function placementVerdict(w: VerdictWorker, cfg: PickConfig): PlacementVerdict {
  const why = excludedBy({ ...w, last_seen_ms: w.alive ? cfg.nowMs : -Infinity }, cfg);
  return {
    worker_id: w.worker_id,
    hub_id: w.hub_id ?? null,
    excluded_by: why ?? null,
    reason: why ? EXCLUSION_REASONS[why] : 'takes work now',
    free_lanes: Math.max(0, w.max_concurrent - w.in_flight),
  };
}

/** Candidates first, then by exclusion, then by id: the answer reads top-down. */
export function placementVerdicts(workers: readonly VerdictWorker[], cfg: PickConfig): PlacementVerdict[] {
  return workers
    .map((w) => placementVerdict(w, cfg))
    .sort((a, b) => Number(a.excluded_by !== null) - Number(b.excluded_by !== null) || (a.excluded_by ?? '').localeCompare(b.excluded_by ?? '') || a.worker_id.localeCompare(b.worker_id));
}
