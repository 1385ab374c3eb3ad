// Jobs store: counts by status, the recent list (fetched, then kept current by job deltas),
// the list's filter, and the job opened in the detail pane with its fetched assets.
import { createStore } from 'zustand/vanilla';
import type { Job, JobCounts, JobSummary, StatsResponse } from '../api/types.ts';
import { upsertJob } from '../model/job-list.ts';

export interface AssetView {
  name: string;
  /** An object URL for images (fetched with the token), null for other files. */
  url: string | null;
  error?: string;
}

export interface JobsState {
  counts: JobCounts;
  list: JobSummary[];
  listLoadedAt: number | null;
  /** Where the next page starts (GET /jobs `next_cursor`); null: everything is loaded. */
  nextCursor: string | null;
  /** Why the last list load failed; the view says so instead of "No jobs." */
  listError: string | null;
  statusFilter: string;
  search: string;
  selectedId: string | null;
  detail: Job | null;
  assets: AssetView[];
  detailError: string | null;
  stats: StatsResponse | null;
  /** The outcome of the last bulk action, until dismissed. */
  bulkNote: string | null;
  setBulkNote(note: string | null): void;
  setCounts(counts: JobCounts): void;
  setList(list: JobSummary[], at: number, nextCursor?: string | null): void;
  appendPage(list: JobSummary[], nextCursor: string | null): void;
  setListError(error: string | null): void;
  applyJob(job: JobSummary): void;
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
  nextCursor: null,
  listError: null,
  statusFilter: '',
  search: '',
  selectedId: null,
  detail: null,
  assets: [],
  detailError: null,
  stats: null,
  bulkNote: null,
  setBulkNote: (bulkNote) => set({ bulkNote }),
  setCounts: (counts) => set({ counts }),
  setList: (list, at, nextCursor = null) => set({ list, listLoadedAt: at, nextCursor, listError: null }),
  appendPage: (page, nextCursor) =>
    set((s) => {
      const seen = new Set(s.list.map((j) => j.id));
      return { list: [...s.list, ...page.filter((j) => !seen.has(j.id))], nextCursor, listError: null };
    }),
  setListError: (listError) => set({ listError }),
  applyJob: (job) =>
    set((s) => ({
      list: upsertJob(s.list, job),
      // A delta is a summary: the detail keeps its spec, result and assets (refetched when it ends).
      detail: s.detail?.id === job.id ? { ...s.detail, ...job } : s.detail,
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
