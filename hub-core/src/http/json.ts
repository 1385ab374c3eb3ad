// How hub rows look on the wire: ISO timestamps, the spec's field names.
import type { FleetWorker } from '../hub/fleet-view.ts';
import type { JobRow, JobSummaryRow } from '../ports/job-store.ts';
import type { HubRow } from '../ports/registry.ts';
import type { HubJson, JobSummaryJson, WorkerJson } from '../wire/json.ts';

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

/** A job as lists and the console's live feed carry it: no spec, no result (GET /jobs/:id has them). */
export function jobSummaryJson(j: JobSummaryRow): JobSummaryJson {
  return {
    id: j.id,
    kind: j.kind,
    status: j.status,
    worker_id: j.worker_id,
    lane: j.lane,
    hub_id: j.hub_id,
    // The column holds the run's assignment id, which is what a worker presents to report on
    // the job: it never leaves the hub. Kept as null so clients that read the key still parse.
    session_id: null,
    novnc_url: j.novnc_url,
    error: j.error,
    attempts: j.attempts,
    created_at: new Date(j.created_at).toISOString(),
    assigned_at: iso(j.assigned_at),
    finished_at: iso(j.finished_at),
    deadline_at: iso(j.deadline_at),
  };
}

/** A job whole: the summary plus its spec and result (and what the caller adds, e.g. assets). */
export function jobJson(j: JobRow, extra: Record<string, unknown> = {}) {
  return { ...jobSummaryJson(j), spec: j.spec, result: j.result, ...extra };
}

export function workerJson(w: FleetWorker): WorkerJson {
  return {
    worker_id: w.worker_id,
    hub_id: w.hub_id,
    status: w.status,
    alive: w.alive,
    in_flight: w.in_flight,
    max_concurrent: w.max_concurrent,
    disk_pct: w.disk_pct,
    cpu_pct: w.cpu_pct,
    mem_pct: w.mem_pct,
    last_seen: new Date(w.last_seen_ms).toISOString(),
    version: w.version,
    platform: w.platform,
    lan_ip: w.lan_ip,
    hostname: w.hostname,
    lanes: w.lanes.map((l) => ({
      index: l.index,
      view_url: l.view_url,
      busy: l.busy,
      job_id: l.job_id,
      holder: l.cdp_id ? 'cdp' : l.session_id ? 'session' : l.job_id ? 'job' : null,
      cdp_id: l.cdp_id ?? null,
      since: l.since_ms ? new Date(l.since_ms).toISOString() : null,
    })),
    kinds: w.kinds ?? null,
  };
}

export function hubJson(h: HubRow, localHubId: string): HubJson {
  return {
    hub_id: h.hub_id,
    url: h.url || null,
    alive: h.alive,
    last_seen: new Date(h.last_seen).toISOString(),
    started_at: h.started_at ? new Date(h.started_at).toISOString() : null,
    workers: h.workers,
    free_lanes: h.free_lanes,
    local: h.hub_id === localHubId,
  };
}
