// The console's wording of the hub's capacity answer: the banner appears only when jobs wait
// and no worker accepts work, and names every reason the hub gave.
import { describe, expect, it } from 'vitest';
import { exclusionText, noCapacityWarning } from '../../../renderer/src/model/capacity.ts';

const cap = (accepting: number, excluded: Record<string, number>) => ({ capacity: accepting * 2, in_flight: 0, accepting, excluded, queued: 0 });

describe('noCapacityWarning', () => {
  it.each([
    ['jobs queued, every worker drained', cap(0, { drain: 3 }), 5, '5 jobs queued and no worker accepts work: 3 drained.'],
    ['one job, mixed reasons, most first', cap(0, { not_alive: 1, disk_full: 2, drain: 1 }), 1, '1 job queued and no worker accepts work: 2 with full disks, 1 drained, 1 not alive.'],
    ['no worker at all', cap(0, {}), 2, '2 jobs queued and no worker is linked to the fleet.'],
    ['a worker accepts work', cap(1, { drain: 4 }), 9, null],
    ['nothing queued', cap(0, { drain: 2 }), 0, null],
    ['the hub has not said yet', null, 3, null],
  ])('%s', (_name, capacity, queued, text) => {
    expect(noCapacityWarning(capacity, queued)).toBe(text);
  });

  it('words a reason it does not know by its code', () => {
    expect(exclusionText({ kind_unsupported: 2, standby: 1 })).toBe('2 kind_unsupported, 1 on standby');
  });
});
