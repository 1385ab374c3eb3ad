// Fleet store: the worker rows as last received, plus the table's sort/filter and the
// status changes the operator has asked for but the hub has not confirmed yet.
import { createStore } from 'zustand/vanilla';
import type { Capacity, Worker } from '../api/types.ts';
import { defaultSort, emptyFilter, toggleSort, type SortKey, type SortSpec, type WorkerFilter } from '../model/worker-table.ts';

export interface FleetState {
  workers: Worker[];
  asOf: string | null;
  stale: boolean;
  /** From the hub: lanes that take work, and why the other workers do not. Null until it says. */
  capacity: Capacity | null;
  filter: WorkerFilter;
  sort: SortSpec;
  /** worker id → status requested; cleared when a row arrives carrying it, or on failure. */
  pending: Record<string, string>;
  actionError: string | null;
  setWorkers(workers: Worker[], asOf: string, stale: boolean): void;
  setCapacity(capacity: Capacity | null): void;
  patchWorker(row: Partial<Worker> & { worker_id: string }): void;
  removeWorker(id: string): void;
  setFilter(patch: Partial<WorkerFilter>): void;
  sortBy(key: SortKey): void;
  setPending(id: string, status: string | null): void;
  setActionError(msg: string | null): void;
}

export const fleetStore = createStore<FleetState>()((set) => ({
  workers: [],
  asOf: null,
  stale: false,
  capacity: null,
  filter: emptyFilter,
  sort: defaultSort,
  pending: {},
  actionError: null,
  setWorkers: (workers, asOf, stale) =>
    set((s) => {
      const pending = { ...s.pending };
      for (const w of workers) if (pending[w.worker_id] === w.status) delete pending[w.worker_id];
      return { workers, asOf, stale, pending };
    }),
  setCapacity: (capacity) => set({ capacity }),
  patchWorker: (row) =>
    set((s) => ({ workers: s.workers.map((w) => (w.worker_id === row.worker_id ? { ...w, ...row, lanes: row.lanes ?? w.lanes } : w)) })),
  removeWorker: (id) => set((s) => ({ workers: s.workers.filter((w) => w.worker_id !== id) })),
  setFilter: (patch) => set((s) => ({ filter: { ...s.filter, ...patch } })),
  sortBy: (key) => set((s) => ({ sort: toggleSort(s.sort, key) })),
  setPending: (id, status) =>
    set((s) => {
      const pending = { ...s.pending };
      if (status === null) delete pending[id];
      else pending[id] = status;
      return { pending };
    }),
  setActionError: (actionError) => set({ actionError }),
}));
