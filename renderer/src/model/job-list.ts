// Job list rules: deltas from /admin/events merged into the fetched list, newest first.
import type { Job, JobSummary } from '../api/types.ts';

/** One page of the list; "Load more" adds pages. */
export const JOB_LIST_LIMIT = 200;
/** Live deltas never grow the list past this (the oldest rows drop off). */
export const JOB_LIST_MAX = 5000;

/** A live delta merged in: the list keeps the pages loaded, up to JOB_LIST_MAX rows. */
export function upsertJob<J extends JobSummary>(list: J[], job: J, limit = Math.min(JOB_LIST_MAX, Math.max(JOB_LIST_LIMIT, list.length + 1))): J[] {
  const i = list.findIndex((j) => j.id === job.id);
  const next = i >= 0 ? list.map((j, k) => (k === i ? { ...j, ...job } : j)) : [job, ...list];
  next.sort((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at));
  return next.slice(0, limit);
}

export function filterJobs<J extends JobSummary>(list: J[], status: string, search: string): J[] {
  const q = search.trim().toLowerCase();
  return list.filter((j) => (!status || j.status === status) && (!q || `${j.id} ${j.kind} ${j.worker_id ?? ''} ${j.hub_id ?? ''} ${j.error ?? ''}`.toLowerCase().includes(q)));
}

export interface TimelineStep {
  label: string;
  at: string | null;
}

export function timeline(j: Job | JobSummary): TimelineStep[] {
  return [
    { label: 'created', at: j.created_at },
    { label: 'assigned', at: j.assigned_at },
    { label: j.finished_at ? j.status : 'finished', at: j.finished_at },
  ];
}

export function isImageAsset(name: string): boolean {
  return /\.(png|jpe?g|webp|gif)$/i.test(name);
}
