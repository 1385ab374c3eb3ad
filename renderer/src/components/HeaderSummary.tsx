// The fleet and queue at a glance, always visible.
import { useMemo } from 'react';
import { useStore } from 'zustand';
import { summarise } from '../model/worker-table.ts';
import { connectionStore } from '../stores/connection.ts';
import { fleetStore } from '../stores/fleet.ts';
import { jobsStore } from '../stores/jobs.ts';

export function HeaderSummary() {
  const workers = useStore(fleetStore, (s) => s.workers);
  const config = useStore(connectionStore, (s) => s.config);
  const counts = useStore(jobsStore, (s) => s.counts);
  const sum = useMemo(() => summarise(workers, config), [workers, config]);
  const util = sum.capacity > 0 ? Math.round((100 * sum.inFlight) / sum.capacity) : 0;
  return (
    <div className="summary">
      <span className="kv">
        <b>{sum.alive}</b>/{sum.total} workers alive
      </span>
      <span className="kv">
        <b>{sum.inFlight}</b>/{sum.capacity} lanes busy ({util}%)
      </span>
      <span className="kv">
        <b>{counts.queued ?? 0}</b> queued
      </span>
      <span className="kv">
        <b>{counts.running ?? 0}</b> running
      </span>
      {sum.diskWarn > 0 && <span className="kv warn">{sum.diskWarn} disk-full</span>}
    </div>
  );
}
