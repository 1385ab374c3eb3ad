// Charts store: the range the operator chose and the hub's buckets for it.
import { createStore } from 'zustand/vanilla';
import type { StatsHistory } from '../api/types.ts';
import type { ChartRange } from '../model/chart-data.ts';

export interface ChartsState {
  range: ChartRange;
  history: StatsHistory | null;
  error: string | null;
  setRange(range: ChartRange): void;
  setHistory(history: StatsHistory): void;
  setError(error: string | null): void;
}

export const chartsStore = createStore<ChartsState>()((set) => ({
  range: '1h',
  history: null,
  error: null,
  // The old range's buckets would be drawn on the new range's axis: drop them.
  setRange: (range) => set((s) => (s.range === range ? s : { range, history: null, error: null })),
  setHistory: (history) => set((s) => (history.range === s.range ? { history, error: null } : s)),
  setError: (error) => set({ error }),
}));
