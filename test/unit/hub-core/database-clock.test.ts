// DatabaseClock: the host clock plus the offset to the database's, from the round trip with the
// shortest time (its midpoint); a new measurement within 100 ms of the offset in use is jitter;
// an offset of a second or more is logged, naming which way.
import { describe, expect, it } from 'vitest';
import { chooseHubClock, DatabaseClock } from '../../../hub-core/src/app/database-clock.ts';
import { ManualClock } from '../../../hub-core/src/ports/clock.ts';
import { capturedLog } from '../../harness/agents.ts';

/** A database whose clock is `aheadMs` past the host's, answering after `rtts[i]` ms of host time (advanced by hand). */
function database(host: ManualClock, aheadMs: () => number, rtts: number[]) {
  let i = 0;
  return async () => {
    const rtt = rtts[i++ % rtts.length]!;
    host.advance(rtt / 2);
    const at = host.now() + aheadMs();
    host.advance(rtt / 2);
    return at;
  };
}

describe('DatabaseClock', () => {
  it("keeps the database's time, measured by the fastest round trip, and ignores jitter", async () => {
    const host = new ManualClock(1_000_000);
    let ahead = 5000;
    const { log, lines } = capturedLog();
    // The slow round trip's answer was stamped late in it: taken alone it would be 200 ms off.
    const clock = new DatabaseClock(host, database(host, () => ahead, [800, 4, 60]), log);
    await clock.sync();
    expect(clock.now() - host.now()).toBe(5000);
    expect(clock.hostAheadMs).toBe(-5000);
    expect(lines.filter((l) => l.level === 40).map((l) => l.msg)).toEqual([expect.stringMatching(/^this host's clock is 5 s behind Postgres's/)]);

    ahead = 5080;
    await clock.sync();
    expect(clock.now() - host.now()).toBe(5000);
    ahead = -12_000;
    await clock.sync();
    expect(clock.now() - host.now()).toBe(-12_000);
    expect(lines.at(-1)!.msg).toMatch(/^this host's clock is 12 s ahead of Postgres's/);
    // Sleeps and timers are the host's: durations do not move with the offset.
    let fired = false;
    clock.setTimer(1000, () => (fired = true));
    host.advance(1000);
    expect(fired).toBe(true);
  });

  it('is chosen only for a hub on Postgres without a clock of its own; a failed first read keeps the host clock', async () => {
    const { log, lines } = capturedLog();
    const manual = new ManualClock(0);
    expect(await chooseHubClock({ clock: manual, databaseUrl: 'postgres://x', databaseNow: async () => 1, log })).toBe(manual);
    expect(await chooseHubClock({ hostClock: manual, log, databaseNow: async () => 1 })).toBe(manual);
    const failing = await chooseHubClock({ hostClock: manual, databaseUrl: 'postgres://x', databaseNow: () => Promise.reject(new Error('gone')), log });
    expect(failing).toBeInstanceOf(DatabaseClock);
    expect(failing.now()).toBe(0);
    expect(lines.at(-1)!.msg).toMatch(/could not read Postgres's clock/);
  });
});
