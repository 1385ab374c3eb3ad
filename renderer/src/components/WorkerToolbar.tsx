// Search and filters for the worker table; options come from the hub's config and rows.
import { useMemo } from 'react';
import { useStore } from 'zustand';
import { connectionStore } from '../stores/connection.ts';
import { fleetStore } from '../stores/fleet.ts';

// A stable empty list: a fresh [] per call would make the store selector loop.
const NONE: string[] = [];

export function WorkerToolbar({ shown, total }: { shown: number; total: number }) {
  const filter = useStore(fleetStore, (s) => s.filter);
  const workers = useStore(fleetStore, (s) => s.workers);
  const statuses = useStore(connectionStore, (s) => s.config?.statuses ?? NONE);
  const setFilter = fleetStore.getState().setFilter;
  const hubs = useMemo(() => [...new Set(workers.map((w) => w.hub_id).filter((h): h is string => !!h))].sort(), [workers]);

  return (
    <div className="toolbar">
      <input
        className="search"
        type="search"
        placeholder="Search id, hub, platform, version…"
        value={filter.search}
        onChange={(e) => setFilter({ search: e.target.value })}
        data-testid="worker-search"
      />
      <label>
        Status
        <select value={filter.status} onChange={(e) => setFilter({ status: e.target.value })} data-testid="filter-status">
          <option value="">all</option>
          {statuses.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
          {statuses.includes('drain') && <option value="drained">drained</option>}
        </select>
      </label>
      <label>
        Liveness
        <select value={filter.liveness} onChange={(e) => setFilter({ liveness: e.target.value as typeof filter.liveness })}>
          <option value="all">all</option>
          <option value="alive">alive</option>
          <option value="offline">offline</option>
        </select>
      </label>
      <label>
        Hub
        <select value={filter.hub} onChange={(e) => setFilter({ hub: e.target.value })}>
          <option value="">all</option>
          {hubs.map((h) => (
            <option key={h} value={h}>
              {h}
            </option>
          ))}
        </select>
      </label>
      <label className="check">
        <input type="checkbox" checked={filter.diskWarnOnly} onChange={(e) => setFilter({ diskWarnOnly: e.target.checked })} />
        disk full only
      </label>
      <span className="muted count" data-testid="worker-count">
        {shown === total ? `${total} workers` : `${shown} of ${total} workers`}
      </span>
    </div>
  );
}
