// Jobs are waiting and no worker takes work: say so, and why, before the operator wonders.
import { useStore } from 'zustand';
import { noCapacityWarning } from '../model/capacity.ts';
import { fleetStore } from '../stores/fleet.ts';
import { jobsStore } from '../stores/jobs.ts';

export function CapacityBanner() {
  const capacity = useStore(fleetStore, (s) => s.capacity);
  const queued = useStore(jobsStore, (s) => s.counts.queued ?? 0);
  const text = noCapacityWarning(capacity, queued);
  if (!text) return null;
  return (
    <div className="banner banner-stale" data-testid="capacity-banner" role="alert">
      <strong>{text}</strong>
    </div>
  );
}
