// Job list rules: deltas from /admin/events merged into the fetched list, newest first.
import type { Job } from '../api/types.ts';

export const JOB_LIST_LIMIT = 200;

export function upsertJob(list: Job[], job: Job, limit = JOB_LIST_LIMIT): Job[] {
  const i = list.findIndex((j) => j.id === job.id);
  const next = i >= 0 ? list.map((j, k) => (k === i ? { ...j, ...job } : j)) : [job, ...list];
  next.sort((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at));
  return next.slice(0, limit);
}

export function filterJobs(list: Job[], status: string, search: string): Job[] {
  const q = search.trim().toLowerCase();
  return list.filter((j) => (!status || j.status === status) && (!q || `${j.id} ${j.kind} ${j.worker_id ?? ''} ${j.hub_id ?? ''} ${j.error ?? ''}`.toLowerCase().includes(q)));
}

export interface TimelineStep {
  label: string;
  at: string | null;
}

export function timeline(j: Job): TimelineStep[] {
  return [
    { label: 'created', at: j.created_at },
    { label: 'assigned', at: j.assigned_at },
    { label: j.finished_at ? j.status : 'finished', at: j.finished_at },
  ];
}

export function isImageAsset(name: string): boolean {
  return /\.(png|jpe?g|webp|gif)$/i.test(name);
}
