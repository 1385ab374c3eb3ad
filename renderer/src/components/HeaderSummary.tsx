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
  const hubCapacity = useStore(fleetStore, (s) => s.capacity);
  const sum = useMemo(() => summarise(workers, config), [workers, config]);
  // Lanes as the hub counts them (only workers that take work); before its first answer, the rows' sum.
  const inFlight = hubCapacity?.in_flight ?? sum.inFlight;
  const capacity = hubCapacity?.capacity ?? sum.capacity;
  const util = capacity > 0 ? Math.round((100 * inFlight) / capacity) : 0;
  return (
    <div className="summary">
      <span className="kv">
        <b>{sum.alive}</b>/{sum.total} workers alive
      </span>
      <span className="kv">
        <b>{inFlight}</b>/{capacity} lanes busy ({util}%)
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
