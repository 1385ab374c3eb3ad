// The JSON the HTTP API answers with (jobs, sessions, workers, hubs, stats, the console's live
// feed), as its callers see it (dates as ISO strings): one definition for the hub's http/json.ts,
// the client SDK and the console. The hub's own row types, with Dates and the columns the API
// does not show, are JobRow (ports/job-store.ts) and WorkerSnapshot/HubRow (ports/registry.ts).
import type { JobStatus } from './job-spec.ts';

export type { JobStatus };

export interface JobJson {
  id: string;
  kind: string;
  spec: Record<string, unknown>;
  status: JobStatus;
  worker_id: string | null;
  lane: number | null;
  hub_id: string | null;
  /** Always null for jobs: the run's assignment id stays inside the hub (README § HTTP API). */
  session_id: null;
  novnc_url: string | null;
  error: string | null;
  result: unknown;
  attempts: number;
  created_at: string;
  assigned_at: string | null;
  finished_at: string | null;
  /** Names of the screenshots and HTML the job produced (GET /jobs/:id only). */
  assets?: string[];
}

/** A job in a list (GET /jobs) or the console's live feed: no spec, no result, no assets. */
export type JobSummaryJson = Omit<JobJson, 'spec' | 'result' | 'assets'> & { deadline_at?: string | null };

/** One page of GET /jobs; pass `next_cursor` as `before` for the next (null: no more). */
export interface JobPageJson {
  jobs: JobSummaryJson[];
  next_cursor: string | null;
}

export interface SessionJson {
  session_id: string;
  worker_id: string;
  hub_id: string;
  novnc_url: string | null;
}

/** One lane of a worker as /admin/workers and the live feed show it. */
export interface LaneJson {
  index: number;
  /** The bare view URL: it opens nothing without a token (POST …/lanes/:index/view grants one). */
  view_url: string | null;
  busy: boolean;
  job_id: string | null;
  /** What holds the lane: a job, an interactive session, a CDP client (GET /cdp); null when idle. */
  holder?: 'job' | 'session' | 'cdp' | null;
  /** The CDP client holding it, and since when (ISO). */
  cdp_id?: string | null;
  since?: string | null;
}

/** POST /admin/workers/:id/lanes/:index/view: the view URL with a token, usable until expires_at. */
export interface LaneViewGrantJson {
  url: string;
  expires_at: string;
}

/**
 * A worker in GET /admin/workers and the console's snapshot. Worker status names are plain
 * strings on purpose: the list of valid ones comes from GET /admin/config. The numbers a worker
 * has not reported (yet) may be null.
 */
export interface WorkerJson {
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
  lan_ip: string;
  hostname: string;
  lanes: LaneJson[];
  /** The work its lanes run (hello's `kinds`); null: not declared, taken as any; absent from an older hub. */
  kinds?: string[] | null;
}

/** GET /admin/workers: the fleet-wide view, and whether it is the last good one (Redis slow). */
export interface WorkersPageJson {
  workers: WorkerJson[];
  as_of: string;
  stale: boolean;
}

/** A hub in GET /admin/hubs and the console's snapshot; `local`: the hub that answered. */
export interface HubJson {
  hub_id: string;
  url: string | null;
  alive: boolean;
  last_seen: string;
  started_at: string | null;
  workers: number;
  free_lanes: number;
  local: boolean;
}

export type JobCountsJson = Record<string, number>;

/** The hub's count of lanes that take work, and why the other workers do not (its scheduler's own filters). */
export interface CapacityJson {
  capacity: number;
  in_flight: number;
  accepting: number;
  excluded: Partial<Record<string, number>>;
  queued: number;
}

/** GET /admin/stats. */
export interface StatsJson {
  counts: JobCountsJson;
  throughput: Array<{ minute: string; succeeded: number; failed: number }>;
  series: Array<{ t: string; queued: number; in_flight: number; capacity: number }>;
  capacity?: CapacityJson | null;
  as_of: string;
}

/** GET /admin/config. */
export interface AdminConfigJson {
  hub_id: string;
  disk_max_pct: number;
  worker_ttl_s: number;
  heartbeat_s: number;
  statuses: readonly string[];
  /** What each worker status means, as the hub words it (the console's tooltips). */
  status_help?: Readonly<Record<string, string>>;
  job_statuses: readonly string[];
  version: string;
}

/** What /admin/events sends the console: a fleet snapshot, a job that changed, or why a snapshot failed. */
export type AdminEventJson =
  | { type: 'snapshot'; workers: WorkerJson[]; hubs: HubJson[]; counts: JobCountsJson; capacity?: CapacityJson | null; as_of: string; stale: boolean }
  | { type: 'job'; job: JobSummaryJson }
  | { type: 'error'; error: string; details?: unknown };

/** One worker's verdict from the hub's scheduler filter (domain/placement-verdict.ts); excluded_by null: it takes work now. */
export interface PlacementVerdictJson {
  worker_id: string;
  hub_id: string | null;
  excluded_by: string | null;
  reason: string;
  free_lanes: number;
}

/** GET /admin/stats/history: one range, bucketed by the hub in Postgres. Null: no sample in that bucket. */
export interface StatsHistoryJson {
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

/** GET /admin/queue: what waits, and why (the verdicts are the hub's, not the console's). */
export interface QueueJson {
  queued: number;
  by_kind: Array<{ kind: string; queued: number; oldest_age_s: number }>;
  oldest: { id: string; kind: string; created_at: string; age_s: number } | null;
  verdicts: PlacementVerdictJson[];
  candidates: number;
  as_of: string;
  stale: boolean;
}

/** GET /admin/workers/:id/detail: the worker drawer. */
export interface WorkerDetailJson {
  worker_id: string;
  worker: WorkerJson | null;
  verdict: PlacementVerdictJson | null;
  vitals: Array<{ t: string; disk_pct: number | null; cpu_pct: number | null; mem_pct: number | null }>;
  jobs: JobSummaryJson[];
  kinds_run: string[];
  audit: Array<{ at: string; actor: string; action: string; details: unknown }>;
  as_of: string;
}
