// The worker table, virtualised: only the rows in view are in the DOM, so 2,000 workers
// scroll as smoothly as 20. Columns are a CSS grid shared by header and rows.
import { useVirtualizer } from '@tanstack/react-virtual';
import { memo, useRef } from 'react';
import { useStore } from 'zustand';
import type { AdminConfig, Worker } from '../api/types.ts';
import type { SortKey } from '../model/worker-table.ts';
import { fleetStore } from '../stores/fleet.ts';
import { useNow } from './use-now.ts';
import { WorkerRow } from './WorkerRow.tsx';

export const ROW_HEIGHT = 30;

const COLUMNS: Array<{ key: SortKey | null; label: string; title?: string }> = [
  { key: 'worker_id', label: 'Worker' },
  { key: 'hub_id', label: 'Hub' },
  { key: 'status', label: 'Status' },
  { key: null, label: 'Set status' },
  { key: 'alive', label: 'Link' },
  { key: 'load', label: 'In flight', title: 'in_flight / max_concurrent' },
  { key: 'disk_pct', label: 'Disk' },
  { key: 'cpu_pct', label: 'CPU' },
  { key: 'mem_pct', label: 'Mem' },
  { key: 'last_seen', label: 'Heartbeat', title: 'time since the last heartbeat' },
  { key: 'version', label: 'Version' },
  { key: 'platform', label: 'Platform · kinds', title: 'platform, and the work its lanes run' },
  { key: null, label: 'Lanes', title: 'live views; filled = busy' },
];

export interface WorkerTableProps {
  rows: Worker[];
  config: AdminConfig | null;
  onSetStatus(id: string, status: string): void;
  onOpen(id: string): void;
}

export const WorkerTable = memo(function WorkerTable({ rows, config, onSetStatus, onOpen }: WorkerTableProps) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const sort = useStore(fleetStore, (s) => s.sort);
  const pending = useStore(fleetStore, (s) => s.pending);
  const now = useNow();
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
    getItemKey: (i) => rows[i].worker_id,
  });

  return (
    <div className="wtable" role="table" aria-rowcount={rows.length}>
      <div className="wrow whead" role="row">
        {COLUMNS.map((c) => (
          <div
            key={c.label}
            role="columnheader"
            title={c.title}
            className={c.key ? 'sortable' : undefined}
            aria-sort={c.key && sort.key === c.key ? (sort.dir === 'asc' ? 'ascending' : 'descending') : undefined}
            onClick={c.key ? () => fleetStore.getState().sortBy(c.key!) : undefined}
          >
            {c.label}
            {c.key && sort.key === c.key && <span className="sort-arrow">{sort.dir === 'asc' ? '▲' : '▼'}</span>}
          </div>
        ))}
      </div>
      <div className="wbody" ref={scrollRef}>
        {rows.length === 0 && <div className="empty">No workers match.</div>}
        <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
          {virtualizer.getVirtualItems().map((item) => {
            const w = rows[item.index];
            return (
              <WorkerRow
                key={item.key}
                worker={w}
                config={config}
                now={now}
                pending={pending[w.worker_id]}
                top={item.start}
                odd={item.index % 2 === 1}
                onSetStatus={onSetStatus}
                onOpen={onOpen}
              />
            );
          })}
        </div>
      </div>
    </div>
  );
});
