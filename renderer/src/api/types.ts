// The hub's admin API as it travels on the wire (SPEC.md § HTTP API). Worker status names are plain
// strings on purpose: the list of valid ones comes from GET /admin/config, not from here.
import type { JobJson, JobPageJson, JobSummaryJson } from 'paprika/wire';

/** A job as the API sends it: one definition with the client SDK. */
export type Job = JobJson;
/** A job as the list and the live feed carry it: no spec, no result (the detail fetches them). */
export type JobSummary = JobSummaryJson;
export type JobPage = JobPageJson;

export interface AdminConfig {
  hub_id: string;
  disk_max_pct: number;
  worker_ttl_s: number;
  heartbeat_s: number;
  statuses: string[];
  /** What each status means, as the hub words it (tooltips). */
  status_help?: Record<string, string>;
  job_statuses: string[];
  version: string;
}

export interface Lane {
  index: number;
  /** The bare view URL: it opens nothing without a token (client.laneView asks the hub for one). */
  view_url: string | null;
  busy: boolean;
  job_id: string | null;
}

/** POST /admin/workers/:id/lanes/:index/view: the view URL with a token, usable until expires_at. */
export interface LaneViewGrant {
  url: string;
  expires_at: string;
}

export interface Worker {
  worker_id: string;
  hub_id: string | null;
  status: string;
  alive: boolean;
  in_flight: number;
  max_concurrent: number;
  disk_pct: number | null;
  cpu_pct: number | null;
  mem_pct: number | null;
  last_seen: string;
  version: string | null;
  platform: string | null;
  lanes: Lane[];
}

export interface WorkersResponse {
  workers: Worker[];
  as_of: string;
  stale: boolean;
}

export interface HubInfo {
  hub_id: string;
  url: string | null;
  alive: boolean;
  last_seen: string;
  started_at: string | null;
  workers: number;
  local: boolean;
}

export type JobCounts = Record<string, number>;

/** The hub's count of lanes that take work, and why the other workers do not (its scheduler's own filters). */
export interface Capacity {
  capacity: number;
  in_flight: number;
  accepting: number;
  excluded: Partial<Record<string, number>>;
  queued: number;
}

export interface StatsResponse {
  counts: JobCounts;
  throughput: Array<{ minute: string; succeeded: number; failed: number }>;
  series: Array<{ t: string; queued: number; in_flight: number; capacity: number }>;
  capacity?: Capacity | null;
  as_of: string;
}

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

export type AdminEvent =
  | { type: 'snapshot'; workers: Worker[]; hubs: HubInfo[]; counts: JobCounts; capacity?: Capacity | null; as_of: string; stale: boolean }
  | { type: 'job'; job: JobSummary }
  | { type: 'error'; error: string; details?: unknown };
