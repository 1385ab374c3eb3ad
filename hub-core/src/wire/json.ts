// The JSON the HTTP API answers with for jobs and sessions, as its callers see it (dates as
// ISO strings): one definition for the client SDK and the console. The hub's own row type,
// with Dates and the columns the API does not show, is JobRow in ports/job-store.ts.
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
