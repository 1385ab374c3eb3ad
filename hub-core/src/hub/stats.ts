// Samples for the console's charts: queue depth and fleet utilisation every few seconds over
// the last hour, kept in memory; throughput per minute comes from the jobs table.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { PeriodicLoop } from '../loops/periodic-loop.ts';
import type { Clock } from '../ports/clock.ts';
import type { JobStore } from '../ports/job-store.ts';
import type { FleetViewReader } from './fleet-view.ts';
import type { JobService } from './job-service.ts';
import type { HubMetrics } from './metrics.ts';

export interface StatsPoint {
  t: number;
  queued: number;
  in_flight: number;
  capacity: number;
}

const SAMPLE_MS = 5000;
const KEEP_MS = 3600_000;

export class StatsSampler {
  readonly series: StatsPoint[] = [];

  constructor(
    private readonly config: Config,
    private readonly store: JobStore,
    private readonly fleetView: FleetViewReader,
    private readonly jobs: JobService,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly metrics: HubMetrics,
  ) {}

  /** Sampling period: 5 s, or faster when tests scale the heartbeat down. */
  private periodMs(): number {
    return Math.min(SAMPLE_MS, this.config.heartbeatS * 1000);
  }

  async sample(): Promise<StatsPoint> {
    const queued = await this.store.countQueued();
    this.jobs.queuedEstimate = queued;
    const view = await this.fleetView.read();
    let inFlight = 0;
    let capacity = 0;
    for (const w of view.workers) {
      if (!w.alive) continue;
      inFlight += w.in_flight;
      capacity += w.max_concurrent;
    }
    const point = { t: this.clock.now(), queued, in_flight: inFlight, capacity };
    this.series.push(point);
    while (this.series.length > 0 && this.series[0].t < point.t - KEEP_MS) this.series.shift();
    this.metrics.queueDepth.set(queued);
    this.metrics.fleetSize.set(view.workers.filter((w) => w.alive).length);
    return point;
  }

  loop(): PeriodicLoop {
    return new PeriodicLoop('stats', this.periodMs(), async () => void (await this.sample()), this.clock, this.log, { runAtStart: true });
  }
}
