// The lane book on a manual clock: a reserve holds a lane in the same step as the pick, a
// release wakes the oldest waiter by itself (one waiter per lane, the rest is 'spare' for
// redrive), and a wait ends at its deadline or abort without leaving a timer behind.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../hub-core/src/config.ts';
import { LaneBook } from '../../../hub-core/src/hub/lane-book.ts';
import { LocalLinks } from '../../../hub-core/src/hub/local-links.ts';
import { WorkerLink, type LinkSocket } from '../../../hub-core/src/hub/worker-link.ts';
import { ManualClock } from '../../../hub-core/src/ports/clock.ts';

const openSocket: LinkSocket = { send: async () => {}, close: () => {}, terminate: () => {}, open: true };

function setup(lanes = 2) {
  const clock = new ManualClock(1_000_000);
  const config = loadConfig({ PAPRIKA_HUB_ID: 'hub-a' });
  const fleet = new LocalLinks(config, clock, { next: () => 0 });
  const book = new LaneBook(fleet, clock);
  const link = new WorkerLink('w1', openSocket, { max_concurrent: lanes, lane_novnc_urls: Array.from({ length: lanes }, (_, i) => `sim://w1/${i}`), novnc_url: null, version: 't', platform: 'test' }, { lanIp: '10.0.0.1', hostname: 'w1', hubId: 'hub-a' }, 'active', clock.now());
  link.report({ disk_pct: 10 });
  fleet.add(link);
  const spare: number[] = [];
  book.on('spare', () => spare.push(clock.now()));
  return { clock, fleet, book, link, spare };
}

const job = (id: string) => ({ kind: 'job' as const, id, assignmentId: `a-${id}` });

describe('LaneBook', () => {
  it('reserves one lane per call until every lane is held, and the pick sees the hold at once', () => {
    const { book, link } = setup(2);
    expect(book.reserve(job('j1'))).toEqual({ link, lane: 0 });
    expect(link.in_flight).toBe(1);
    expect(book.reserve(job('j2'))).toEqual({ link, lane: 1 });
    expect(book.reserve(job('j3'))).toBeUndefined();
    expect(link.schedulable().in_flight).toBe(2);
  });

  it('two holds for one job on one worker (an inline claim and redrive): the loser frees its own lane, the winner\'s result frees the other', () => {
    const { book, link } = setup(2);
    const inline = book.reserve({ kind: 'job', id: 'j1', assignmentId: 'a-inline' })!;
    const redrive = book.reserve({ kind: 'job', id: 'j1', assignmentId: 'a-redrive' })!;
    expect([inline.lane, redrive.lane]).toEqual([0, 1]);
    // The inline claim won; redrive lost and releases its reservation (the later lane).
    expect(book.release(link, 'j1', 'a-redrive')).toBe(true);
    expect(link.holding('j1')?.assignmentId).toBe('a-inline');
    // The winner's result (its assignment) frees the winner's lane: nothing is left held.
    expect(book.release(link, 'j1', 'a-inline')).toBe(true);
    expect(link.in_flight).toBe(0);
    expect(book.release(link, 'j1', 'a-inline')).toBe(false);
  });

  it('skips the workers a caller already tried', () => {
    const { book } = setup(2);
    expect(book.reserve(job('j1'), new Set(['w1']))).toBeUndefined();
  });

  // (state, event) → (consequences)
  const table: Array<{ name: string; waiters: number; event: (b: LaneBook, l: WorkerLink) => boolean | void; woken: number; spare: number; returns?: boolean }> = [
    { name: 'release of a held lane, one waiter', waiters: 1, event: (b, l) => b.release(l, 'j1'), woken: 1, spare: 0, returns: true },
    { name: 'release of a held lane, nobody waits', waiters: 0, event: (b, l) => b.release(l, 'j1'), woken: 0, spare: 1, returns: true },
    { name: 'release of a lane not held', waiters: 1, event: (b, l) => b.release(l, 'nope'), woken: 0, spare: 0, returns: false },
    { name: 'offer of two lanes, three waiters: the two oldest', waiters: 3, event: (b) => b.offer(2), woken: 2, spare: 0 },
    { name: 'offer of two lanes, one waiter: the rest is spare', waiters: 1, event: (b) => b.offer(2), woken: 1, spare: 1 },
    { name: 'wakeAll', waiters: 3, event: (b) => b.wakeAll(), woken: 3, spare: 0 },
  ];
  it.each(table)('$name', async ({ waiters, event, woken, spare: spareCount, returns }) => {
    const { book, link, spare, clock } = setup(2);
    book.reserve(job('j1'));
    const order: number[] = [];
    const waits = Array.from({ length: waiters }, (_, i) => book.waitForLane(5000).then((w) => (w ? order.push(i) : undefined)));
    const out = event(book, link);
    if (returns !== undefined) expect(out).toBe(returns);
    expect(book.waiting).toBe(waiters - woken);
    expect(spare).toHaveLength(spareCount);
    clock.advance(5000); // the rest time out
    await Promise.all(waits);
    expect(order).toEqual(Array.from({ length: woken }, (_, i) => i)); // oldest first
    expect(clock.pending).toBe(0);
  });

  it('ends a wait at its deadline (false), and on abort (false), leaving no timer', async () => {
    const { book, clock } = setup(1);
    const timed = book.waitForLane(3000);
    clock.advance(2999);
    expect(book.waiting).toBe(1);
    clock.advance(1);
    expect(await timed).toBe(false);
    const ac = new AbortController();
    const aborted = book.waitForLane(3000, ac.signal);
    ac.abort();
    expect(await aborted).toBe(false);
    expect(await book.waitForLane(3000, ac.signal)).toBe(false); // already aborted: no wait at all
    expect(book.waiting).toBe(0);
    expect(clock.pending).toBe(0);
  });

  it('adopts a lane the worker already runs, once', () => {
    const { book, link } = setup(2);
    expect(book.adopt(link, 1, job('held'))).toBe(true);
    expect(book.adopt(link, 1, job('other'))).toBe(false);
    expect(book.adopt(link, 5, job('other'))).toBe(false);
    expect(book.reserve(job('j1'))?.lane).toBe(0);
  });
});
