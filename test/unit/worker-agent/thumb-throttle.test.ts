// A lane's thumbnails: at most one per interval, the latest frame winning, nothing queued;
// and the thumbnailer follows exactly the lanes asked for, one follower per lane.
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../hub-core/src/ports/clock.ts';
import { ThumbThrottle } from '../../../worker-agent/src/live-view/thumb-throttle.ts';
import { Thumbnailer, type ThumbFrame } from '../../../worker-agent/src/live-view/thumbnailer.ts';
import type { Lane } from '../../../worker-agent/src/lanes/lane.ts';
import type { FrameSink } from '../../../worker-agent/src/live-view/screencast.ts';

describe('ThumbThrottle', () => {
  it('sends the first frame at once, then the latest one per interval; older ones are dropped', () => {
    const clock = new ManualClock(10_000);
    const sent: Array<[number, string]> = [];
    const th = new ThumbThrottle<string>(1000, clock, (x) => sent.push([clock.now(), x]));
    th.offer('a');
    expect(sent).toEqual([[10_000, 'a']]);
    clock.advance(100);
    th.offer('b');
    clock.advance(100);
    th.offer('c'); // replaces b
    expect(sent).toHaveLength(1);
    clock.advance(800);
    expect(sent).toEqual([[10_000, 'a'], [11_000, 'c']]);
    // Quiet for a while: the next frame goes out at once.
    clock.advance(5000);
    th.offer('d');
    expect(sent.at(-1)).toEqual([16_000, 'd']);
  });

  it('a frame every 100 ms for 10 s gives about 10 thumbs, each at least an interval apart', () => {
    const clock = new ManualClock(0);
    const at: number[] = [];
    const th = new ThumbThrottle<number>(1000, clock, () => at.push(clock.now()));
    for (let i = 0; i < 100; i++) {
      th.offer(i);
      clock.advance(100);
    }
    expect(at.length).toBeGreaterThanOrEqual(10);
    expect(at.length).toBeLessThanOrEqual(11);
    for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!).toBeGreaterThanOrEqual(1000);
  });

  it('stop drops the pending frame and leaves no timer', () => {
    const clock = new ManualClock(0);
    const sent: string[] = [];
    const th = new ThumbThrottle<string>(1000, clock, (x) => sent.push(x));
    th.offer('a');
    th.offer('b');
    th.stop();
    expect(clock.pending).toBe(0);
    clock.advance(5000);
    th.offer('c');
    expect(sent).toEqual(['a']);
  });
});

/** A lane whose screen the test drives; counts its followers. */
function fakeLane(index: number) {
  const sinks = new Set<FrameSink>();
  let started = 0;
  const lane = {
    index,
    followThumbs(sink: FrameSink) {
      started++;
      sinks.add(sink);
      return () => sinks.delete(sink);
    },
  } as unknown as Lane;
  return { lane, sinks, started: () => started, frame: (b: Buffer) => [...sinks].forEach((s) => s.frame(b)), idle: () => [...sinks].forEach((s) => s.idle()) };
}

describe('Thumbnailer', () => {
  it('follows exactly the lanes asked, keeps a follower asked again, and stops on []', () => {
    const clock = new ManualClock(1000);
    const lanes = [fakeLane(0), fakeLane(1), fakeLane(2)];
    const sent: ThumbFrame[] = [];
    const th = new Thumbnailer({ lanes: lanes.map((l) => l.lane), send: (f) => sent.push(f), congested: () => false, timers: clock });
    th.set([0, 2, 9], 1000); // 9: no such lane
    expect(th.lanes).toEqual([0, 2]);
    th.set([2, 1], 1000);
    expect(th.lanes).toEqual([1, 2]);
    expect(lanes.map((l) => l.started())).toEqual([1, 1, 1]); // lane 2 kept its one follower
    expect(lanes.map((l) => l.sinks.size)).toEqual([0, 1, 1]);
    lanes[1]!.frame(Buffer.from([0xff, 0xd8, 1]));
    lanes[2]!.idle();
    expect(sent).toEqual([
      { lane: 1, at: 1000, jpeg: Buffer.from([0xff, 0xd8, 1]).toString('base64') },
      { lane: 2, at: 1000, idle: true },
    ]);
    th.stop();
    expect(th.lanes).toEqual([]);
    expect(lanes.map((l) => l.sinks.size)).toEqual([0, 0, 0]);
    expect(clock.pending).toBe(0);
  });

  it('a new interval restarts the lane at that pace', () => {
    const clock = new ManualClock(0);
    const lane = fakeLane(0);
    const th = new Thumbnailer({ lanes: [lane.lane], send: () => {}, congested: () => false, timers: clock });
    th.set([0], 1000);
    th.set([0], 500);
    expect(lane.started()).toBe(2);
    expect(lane.sinks.size).toBe(1);
  });
});
