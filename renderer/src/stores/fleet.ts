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

/** Deep equality of two JSON values (what the wire carries: no dates, maps or cycles). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (!sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  return true;
}

/**
 * Structural sharing: a worker whose row did not change keeps its previous object, and a snapshot
 * that changed nothing keeps the previous array, so memoised rows, tiles and the sorted view skip
 * their work. With 2,000 workers each snapshot otherwise re-sorted and re-rendered everything.
 */
export function shareUnchanged(incoming: Worker[], previous: Worker[]): Worker[] {
  if (previous.length === 0) return incoming;
  const byId = new Map(previous.map((w) => [w.worker_id, w]));
  let same = incoming.length === previous.length;
  const out = incoming.map((w, i) => {
    const p = byId.get(w.worker_id);
    const kept = p !== undefined && sameJson(p, w) ? p : w;
    if (kept !== previous[i]) same = false;
    return kept;
  });
  return same ? previous : out;
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
  setWorkers: (incoming, asOf, stale) =>
    set((s) => {
      const workers = shareUnchanged(incoming, s.workers);
      let pending = s.pending;
      for (const w of workers)
        if (pending[w.worker_id] === w.status) {
          if (pending === s.pending) pending = { ...pending };
          delete pending[w.worker_id];
        }
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
