// Jobs store: counts by status, the recent list (fetched, then kept current by job deltas),
// the list's filter, and the job opened in the detail pane with its fetched assets.
import { createStore } from 'zustand/vanilla';
import type { Job, JobCounts, StatsResponse } from '../api/types.ts';
import { upsertJob } from '../model/job-list.ts';

export interface AssetView {
  name: string;
  /** An object URL for images (fetched with the token), null for other files. */
  url: string | null;
  error?: string;
}

export interface JobsState {
  counts: JobCounts;
  list: Job[];
  listLoadedAt: number | null;
  statusFilter: string;
  search: string;
  selectedId: string | null;
  detail: Job | null;
  assets: AssetView[];
  detailError: string | null;
  stats: StatsResponse | null;
  setCounts(counts: JobCounts): void;
  setList(list: Job[], at: number): void;
  applyJob(job: Job): void;
  setFilter(patch: { statusFilter?: string; search?: string }): void;
  select(id: string | null): void;
  setDetail(job: Job | null, error?: string | null): void;
  setAssets(assets: AssetView[]): void;
  setStats(stats: StatsResponse): void;
}

export const jobsStore = createStore<JobsState>()((set) => ({
  counts: {},
  list: [],
  listLoadedAt: null,
  statusFilter: '',
  search: '',
  selectedId: null,
  detail: null,
  assets: [],
  detailError: null,
  stats: null,
  setCounts: (counts) => set({ counts }),
  setList: (list, at) => set({ list, listLoadedAt: at }),
  applyJob: (job) =>
    set((s) => ({
      list: upsertJob(s.list, job),
      // Keep the detail's assets list: job deltas do not carry it.
      detail: s.detail?.id === job.id ? { ...s.detail, ...job, assets: job.assets ?? s.detail.assets } : s.detail,
    })),
  setFilter: (patch) => set(patch),
  select: (selectedId) =>
    set((s) => {
      for (const a of s.assets) if (a.url) URL.revokeObjectURL(a.url);
      return { selectedId, detail: null, assets: [], detailError: null };
    }),
  setDetail: (detail, detailError = null) => set({ detail, detailError }),
  setAssets: (assets) => set({ assets }),
  setStats: (stats) => set({ stats, counts: stats.counts }),
}));
