// The hub's admin API as it travels on the wire (SPEC.md § HTTP API), under the console's names:
// the shapes themselves are paprika/wire's (hub-core/src/wire/json.ts), the hub's own definition.
import type { AdminConfigJson, AdminEventJson, CapacityJson, HubJson, JobCountsJson, JobJson, JobPageJson, JobSummaryJson, LaneJson, LaneViewGrantJson, StatsJson, WorkerJson, WorkersPageJson } from 'paprika/wire';

/** A job as the API sends it: one definition with the client SDK. */
export type Job = JobJson;
/** A job as the list and the live feed carry it: no spec, no result (the detail fetches them). */
export type JobSummary = JobSummaryJson;
export type JobPage = JobPageJson;
export type AdminConfig = AdminConfigJson;
export type Lane = LaneJson;
/** POST /admin/workers/:id/lanes/:index/view: the view URL with a token, usable until expires_at. */
export type LaneViewGrant = LaneViewGrantJson;
export type Worker = WorkerJson;
export type WorkersResponse = WorkersPageJson;
export type HubInfo = HubJson;
export type JobCounts = JobCountsJson;
/** The hub's count of lanes that take work, and why the other workers do not (its scheduler's own filters). */
export type Capacity = CapacityJson;
export type StatsResponse = StatsJson;
export type AdminEvent = AdminEventJson;

// The console's own routes (not yet in paprika/wire's json.ts).
/** GET /admin/stats/history: one range, bucketed by the hub in Postgres. Null: no sample in that bucket. */
export interface StatsHistory {
  range: string;
  bucket_s: number;
  from: string;
  to: string;
  buckets: Array<{
    t: string;
    succeeded: number;
    failed: number;
    queued: number | null;
    oldest_queued_s: number | null;
    in_flight: number | null;
    capacity: number | null;
  }>;
}

/** One worker's verdict from the hub's scheduler filter; excluded_by null: it takes work now. */
export interface PlacementVerdict {
  worker_id: string;
  hub_id: string | null;
  excluded_by: string | null;
  reason: string;
  free_lanes: number;
}

/** GET /admin/queue: what waits, and why (the verdicts are the hub's, not the console's). */
export interface QueueResponse {
  queued: number;
  by_kind: Array<{ kind: string; queued: number; oldest_age_s: number }>;
  oldest: { id: string; kind: string; created_at: string; age_s: number } | null;
  verdicts: PlacementVerdict[];
  candidates: number;
  as_of: string;
  stale: boolean;
}

/** GET /admin/workers/:id/detail: the worker drawer. */
export interface WorkerDetail {
  worker_id: string;
  worker: Worker | null;
  verdict: PlacementVerdict | null;
  vitals: Array<{ t: string; disk_pct: number | null; cpu_pct: number | null; mem_pct: number | null }>;
  jobs: JobSummary[];
  kinds_run: string[];
  audit: Array<{ at: string; actor: string; action: string; details: unknown }>;
  as_of: string;
}

