// PeriodicLoop: a pass every period, or at once when woken; a wake during a pass runs the next
// pass right after it; stop() ends an idle wait at once and leaves no timer behind.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { PeriodicLoop } from '../../../hub-core/src/loops/periodic-loop.ts';
import { ManualClock } from '../../../hub-core/src/ports/clock.ts';

const log = pino({ level: 'silent' });

/** A loop whose passes are counted; `gate` (when set) holds a pass until released. */
function counted(clock: ManualClock, periodMs: number) {
  let passes = 0;
  let onPass: (() => void) | undefined;
  let gate: Promise<void> | undefined;
  const loop = new PeriodicLoop(
    'test',
    periodMs,
    async () => {
      passes++;
      onPass?.();
      if (gate) await gate;
    },
    clock,
    log,
  );
  const nextPass = () => new Promise<void>((resolve) => (onPass = resolve));
  return {
    loop,
    get passes() {
      return passes;
    },
    nextPass,
    hold() {
      let release = () => {};
      gate = new Promise<void>((r) => (release = r));
      return () => {
        gate = undefined;
        release();
      };
    },
  };
}

/** A counted loop started on a fresh clock, in its first idle wait. */
async function idling(periodMs: number) {
  const clock = new ManualClock();
  const c = counted(clock, periodMs);
  c.loop.start();
  await new Promise((r) => setImmediate(r));
  return { clock, c };
}

describe('PeriodicLoop', () => {
  it('runs a pass when its period ends, and another at each period after', async () => {
    const clock = new ManualClock();
    const c = counted(clock, 1000);
    c.loop.start();
    await Promise.resolve();
    expect(c.passes).toBe(0);
    let next = c.nextPass();
    clock.advance(1000);
    await next;
    expect(c.passes).toBe(1);
    // Past the pass, its idle wait has begun before the clock moves again.
    await new Promise((r) => setImmediate(r));
    next = c.nextPass();
    clock.advance(1000);
    await next;
    expect(c.passes).toBe(2);
    await c.loop.stop();
    expect(clock.pending).toBe(0);
  });

  it('runs a pass at once when woken, without waiting for the period', async () => {
    const { clock, c } = await idling(60_000);
    const next = c.nextPass();
    c.loop.wake();
    await next;
    expect(c.passes).toBe(1);
    expect(clock.now()).toBe(0);
    await c.loop.stop();
    expect(clock.pending).toBe(0);
  });

  it('a wake during a pass runs the next pass right after it, not a period later', async () => {
    const { clock, c } = await idling(60_000);
    const release = c.hold();
    let next = c.nextPass();
    c.loop.wake();
    await next;
    c.loop.wake(); // while the pass is held
    next = c.nextPass();
    release();
    await next;
    expect(c.passes).toBe(2);
    expect(clock.now()).toBe(0);
    await c.loop.stop();
  });

  it('stop() ends an idle wait at once and leaves no timer', async () => {
    const { clock, c } = await idling(60_000);
    expect(clock.pending).toBe(1);
    await c.loop.stop();
    expect(clock.pending).toBe(0);
    expect(c.passes).toBe(0);
    // A wake after stop does nothing.
    c.loop.wake();
    await new Promise((r) => setImmediate(r));
    expect(c.passes).toBe(0);
  });
});
