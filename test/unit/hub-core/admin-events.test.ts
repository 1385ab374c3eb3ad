// The console's live feed (admin-events.ts) on a manual clock: a row of a worker on another hub
// that changes sends a snapshot within the remote check's period (not only the 5 s snapshot);
// one that did not change sends none; and a client leaving while a check's read is in flight,
// then another coming, leaves one check chain running, not two. The socket is a fake (what is
// tested is the timer and read logic); the fleet reader is a stub handing back row objects.
import { EventEmitter } from 'node:events';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { AdminEventStream } from '../../../hub-core/src/http/admin-events.ts';
import { ManualClock } from '../../../hub-core/src/ports/clock.ts';

const row = (worker_id: string, in_flight: number) => ({ worker_id, hub_id: 'other', in_flight, max_concurrent: 2, local: false, alive: true, lanes: [], last_seen_ms: 1_000, status: 'active' });

function setup() {
  const clock = new ManualClock(1_000);
  let rows = [row('w1', 0)];
  let reads = 0;
  let hold: Promise<void> | undefined;
  const fleetView = {
    read: async () => {
      reads++;
      if (hold) await hold;
      return { workers: rows as never[], as_of: clock.now(), stale: false, partial: false };
    },
  };
  const stream = new AdminEventStream({
    config: { hubId: 'here', heartbeatS: 15 },
    clock,
    log: pino({ level: 'silent' }),
    events: new EventEmitter() as never,
    fleetView: fleetView as never,
    registry: { listHubs: async () => [] } as never,
    reads: { countByStatus: async () => ({}) } as never,
    stats: { latest: undefined } as never,
  });
  const client = () => {
    const ws = Object.assign(new EventEmitter(), { OPEN: 1, readyState: 1, sent: [] as string[], send(t: string) { this.sent.push(t); }, terminate() {}, close() {} });
    stream.accept(ws as never);
    return ws;
  };
  const settle = () => new Promise((r) => setImmediate(r));
  return { clock, stream, client, settle, setRows: (r: ReturnType<typeof row>[]) => (rows = r), reads: () => reads, holdReads: () => { let release!: () => void; hold = new Promise<void>((r) => (release = r)); return () => { hold = undefined; release(); }; } };
}

describe('AdminEventStream', () => {
  it("sends a snapshot within a second when a remote worker's row changes, and none while nothing changed", async () => {
    const t = setup();
    const ws = t.client();
    await t.settle();
    const snapshots = () => ws.sent.filter((f) => JSON.parse(f).type === 'snapshot').length;
    t.clock.advance(1000); // first check: the rows seen for the first time
    await t.settle();
    t.clock.advance(250);
    await t.settle();
    const before = snapshots();
    t.clock.advance(1000); // nothing changed
    await t.settle();
    t.clock.advance(250);
    await t.settle();
    expect(snapshots()).toBe(before);
    t.setRows([row('w1', 1)]); // a new row object: the worker changed
    t.clock.advance(1000);
    await t.settle();
    t.clock.advance(250);
    await t.settle();
    expect(snapshots()).toBe(before + 1);
    expect(JSON.parse(ws.sent.at(-1)!).workers[0].in_flight).toBe(1);
    t.stream.stop();
  });

  it('a read in flight when the last client leaves and another comes does not start a second check chain', async () => {
    const t = setup();
    const first = t.client();
    await t.settle();
    const release = t.holdReads();
    t.clock.advance(1000); // the check's read starts and waits
    first.emit('close');
    t.client(); // a new subscription: its own chain
    release();
    await t.settle();
    await t.settle();
    const readsAt = t.reads();
    t.clock.advance(999);
    await t.settle();
    // One chain: one read per period (plus none from the old chain).
    t.clock.advance(1);
    await t.settle();
    await t.settle();
    expect(t.reads() - readsAt).toBe(1);
    t.stream.stop();
  });
});
