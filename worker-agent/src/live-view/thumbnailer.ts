// The wall's thumbnails of this worker's lanes: exactly the lanes the hub's last `thumbs` named,
// one screen-follower per lane (a lane asked again keeps its follower), each throttled to the
// hub's interval. Frames found while the link is behind are dropped before they are encoded.
import { THUMB_MAX_CHARS } from 'paprika/wire';
import type { Lane } from '../lanes/lane.ts';
import { systemTimers, ThumbThrottle, type ThumbTimers } from './thumb-throttle.ts';

export type ThumbFrame = { lane: number; at: number; jpeg?: string; idle?: true };

export interface ThumbnailerOptions {
  lanes: readonly Lane[];
  /** Sends one `thumb` frame to the hub. */
  send(frame: ThumbFrame): void;
  /** True while the link's socket is behind: frames are dropped. */
  congested(): boolean;
  timers?: ThumbTimers;
}

type Follower = { intervalMs: number; stop: () => void };

export class Thumbnailer {
  private readonly following = new Map<number, Follower>();

  constructor(private readonly o: ThumbnailerOptions) {}

  /** Replace-set: follow exactly these lanes (unknown lanes and lanes that cannot be followed are skipped). */
  set(lanes: readonly number[], intervalMs: number): void {
    const wanted = new Set(lanes);
    for (const [index, f] of this.following) {
      if (wanted.has(index) && f.intervalMs === intervalMs) continue;
      f.stop();
      this.following.delete(index);
    }
    for (const index of wanted) {
      if (this.following.has(index)) continue;
      const lane = this.o.lanes.find((l) => l.index === index);
      if (!lane?.followThumbs) continue;
      this.following.set(index, { intervalMs, stop: this.follow(lane, intervalMs) });
    }
  }

  /** Lanes followed now (tests). */
  get lanes(): number[] {
    return [...this.following.keys()].sort((a, b) => a - b);
  }

  stop(): void {
    this.set([], 0);
  }

  private follow(lane: Lane, intervalMs: number): () => void {
    const timers = this.o.timers ?? systemTimers;
    const throttle = new ThumbThrottle<Buffer | 'idle'>(intervalMs, timers, (item) => {
      if (item === 'idle') return this.o.send({ lane: lane.index, at: timers.now(), idle: true });
      const jpeg = item.toString('base64');
      if (jpeg.length <= THUMB_MAX_CHARS) this.o.send({ lane: lane.index, at: timers.now(), jpeg });
    });
    const stopFollowing = lane.followThumbs!(
      {
        frame: (jpeg) => throttle.offer(jpeg),
        idle: () => throttle.offer('idle'),
        congested: () => this.o.congested(),
      },
      intervalMs,
    );
    return () => {
      throttle.stop();
      stopFollowing();
    };
  }
}
