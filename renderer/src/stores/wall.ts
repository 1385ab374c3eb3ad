// Lane wall store: the running jobs (for each busy lane's kind, elapsed time and deadline) and the wall's filter.
import { createStore } from 'zustand/vanilla';
import type { JobSummary } from '../api/types.ts';
import { emptyWallFilter, type WallFilter } from '../model/lane-wall.ts';

export interface WallState {
  running: JobSummary[];
  error: string | null;
  filter: WallFilter;
  setRunning(running: JobSummary[]): void;
  setError(error: string | null): void;
  setFilter(patch: Partial<WallFilter>): void;
}

export const wallStore = createStore<WallState>()((set) => ({
  running: [],
  error: null,
  filter: emptyWallFilter,
  setRunning: (running) => set({ running, error: null }),
  setError: (error) => set({ error }),
  setFilter: (patch) => set((s) => ({ filter: { ...s.filter, ...patch } })),
}));
