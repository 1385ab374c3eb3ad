// The hub's admin API as it travels on the wire (SPEC.md § HTTP API), under the console's names:
// the shapes themselves are paprika/wire's (hub-core/src/wire/json.ts), the hub's own definition.
import type { AdminConfigJson, AdminEventJson, CapacityJson, HubJson, JobCountsJson, JobJson, JobPageJson, JobSummaryJson, LaneJson, LaneViewGrantJson, PlacementVerdictJson, QueueJson, StatsHistoryJson, StatsJson, WallErrorJson, WallThumbJson, WallTile, WorkerDetailJson, WorkerJson, WorkersPageJson } from 'paprika/wire';

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

/** GET /admin/stats/history: one range, bucketed by the hub in Postgres. Null: no sample in that bucket. */
export type StatsHistory = StatsHistoryJson;
/** One worker's verdict from the hub's scheduler filter; excluded_by null: it takes work now. */
export type PlacementVerdict = PlacementVerdictJson;
/** GET /admin/queue: what waits, and why (the verdicts are the hub's, not the console's). */
export type QueueResponse = QueueJson;
/** GET /admin/workers/:id/detail: the worker drawer. */
export type WorkerDetail = WorkerDetailJson;

/** GET /admin/wall (WebSocket): a tile the console watches, and the hub's frames for it. */
export type WallTileRef = WallTile;
export type WallThumb = WallThumbJson;
export type WallError = WallErrorJson;
