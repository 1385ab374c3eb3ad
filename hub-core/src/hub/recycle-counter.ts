// paprika_lane_recycles_total from the cumulative `lane_recycles` each worker reports in its
// heartbeat: this hub counts the growth it sees per worker. A fresh agent process starts from
// zero; a worker this hub first meets mid-life (a re-link from another hub) sets a baseline, so
// its earlier recycles are not counted here again.
import type { LaneRecycles } from '../wire/protocol.ts';
import type { HubMetrics } from './metrics.ts';

const REASONS = ['jobs', 'rss', 'crash'] as const;

export class RecycleCounter {
  private readonly seen = new Map<string, LaneRecycles>();

  constructor(private readonly metrics: HubMetrics) {}

  hello(workerId: string, fresh: boolean): void {
    if (fresh) this.seen.set(workerId, { jobs: 0, rss: 0, crash: 0 });
  }

  report(workerId: string, now: LaneRecycles | undefined): void {
    if (!now) return;
    const before = this.seen.get(workerId);
    this.seen.set(workerId, now);
    if (!before) return;
    for (const reason of REASONS) {
      // A smaller figure means the agent restarted without this hub seeing its hello: count it all.
      const delta = now[reason] >= before[reason] ? now[reason] - before[reason] : now[reason];
      if (delta > 0) this.metrics.laneRecycles.inc({ reason }, delta);
    }
  }
}
