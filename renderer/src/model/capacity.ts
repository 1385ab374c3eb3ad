// What the header says about capacity, and the warning when jobs wait and nothing takes them.
// The numbers and the reasons come from the hub (its scheduler's filters); this only words them.
import type { Capacity } from '../api/types.ts';

const REASON_TEXT: Record<string, [string, string]> = {
  drain: ['drained', 'drained'],
  standby: ['on standby', 'on standby'],
  disk_full: ['with a full disk', 'with full disks'],
  not_alive: ['not alive', 'not alive'],
  not_ready: ['not reporting yet', 'not reporting yet'],
  no_view_url: ['without lanes', 'without lanes'],
  inactive: ['inactive', 'inactive'],
};

/** "3 drained, 1 with a full disk": the excluded workers by reason, most first. */
export function exclusionText(excluded: Capacity['excluded']): string {
  return Object.entries(excluded)
    .filter((e): e is [string, number] => typeof e[1] === 'number' && e[1] > 0)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([why, n]) => `${n} ${(REASON_TEXT[why] ?? [why, why])[n === 1 ? 0 : 1]}`)
    .join(', ');
}

/** The banner's text when jobs are queued and no worker accepts work; null otherwise. */
export function noCapacityWarning(capacity: Capacity | null, queued: number): string | null {
  if (!capacity || capacity.accepting > 0 || queued <= 0) return null;
  const jobs = `${queued} job${queued === 1 ? '' : 's'} queued`;
  const why = exclusionText(capacity.excluded);
  return why ? `${jobs} and no worker accepts work: ${why}.` : `${jobs} and no worker is linked to the fleet.`;
}
