// Worker drawer store: which worker is open and the hub's latest detail of it.
import { createStore } from 'zustand/vanilla';
import type { WorkerDetail } from '../api/types.ts';

export interface WorkerDetailState {
  openId: string | null;
  detail: WorkerDetail | null;
  error: string | null;
  open(id: string | null): void;
  setDetail(detail: WorkerDetail): void;
  setError(error: string | null): void;
}

export const workerDetailStore = createStore<WorkerDetailState>()((set) => ({
  openId: null,
  detail: null,
  error: null,
  open: (openId) => set((s) => (s.openId === openId ? s : { openId, detail: null, error: null })),
  setDetail: (detail) => set((s) => (detail.worker_id === s.openId ? { detail, error: null } : s)),
  setError: (error) => set({ error }),
}));
