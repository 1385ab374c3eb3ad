// Samples for the console's charts: queue depth and fleet utilisation every few seconds over
// the last hour, kept in memory; throughput per minute comes from the jobs table.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { summariseCapacity, type CapacitySummary } from '../domain/pick-worker.ts';
import { PeriodicLoop } from '../loops/periodic-loop.ts';
import type { Clock } from '../ports/clock.ts';
import type { JobStore } from '../ports/job-store.ts';
import type { FleetViewReader } from './fleet-view.ts';
import type { JobService } from './job-service.ts';
import type { HubMetrics } from './metrics.ts';
import { WorkerVitals } from './worker-vitals.ts';

export interface StatsPoint {
  t: number;
  queued: number;
  /** Over the workers that take work (drained, standby, disk-full and dead ones hold no capacity). */
  in_flight: number;
  capacity: number;
}

const SAMPLE_MS = 5000;
const KEEP_MS = 3600_000;
/** The charts' longest range is 24 h; the recorded samples are pruned past that, every PRUNE_EVERY samples. */
const HISTORY_KEEP_MS = 25 * 3600_000;
const PRUNE_EVERY = 100;

export class StatsSampler {
  readonly series: StatsPoint[] = [];
  /** The last sample's capacity and why the excluded workers are out. */
  latest: (CapacitySummary & { queued: number }) | undefined;
  private recorded = 0;
  /** Disk/CPU/memory per worker over the last samples (the console's worker drawer). */
  readonly vitals = new WorkerVitals();

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
    const byKind = await this.store.history.queuedByKind();
    const queued = byKind.reduce((n, k) => n + k.queued, 0);
    const oldestMs = byKind.reduce((m, k) => Math.min(m, new Date(k.oldest_created_at).getTime()), Infinity);
    this.jobs.sampledQueued(queued);
    const view = await this.fleetView.read();
    // Liveness as the view judged it (remote rows as of its read, which may be a cached one).
    const now = this.clock.now();
    const cfg = { diskMaxPct: this.config.diskMaxPct, workerTtlMs: this.config.workerTtlS * 1000, nowMs: now };
    const sum = summariseCapacity(view.workers.map((w) => ({ ...w, last_seen_ms: w.alive ? now : -Infinity })), cfg);
    this.latest = { ...sum, queued };
    this.vitals.observe(view.workers, now);
    const point = { t: this.clock.now(), queued, in_flight: sum.in_flight, capacity: sum.capacity };
    this.series.push(point);
    while (this.series.length > 0 && this.series[0].t < point.t - KEEP_MS) this.series.shift();
    this.metrics.queueDepth.set(queued);
    this.metrics.fleetSize.set(view.workers.filter((w) => w.alive).length);
    this.metrics.fleetAccepting.set(sum.accepting);
    this.metrics.fleetCapacity.set(sum.capacity);
    this.metrics.fleetInFlight.set(sum.in_flight);
    await this.record(point, Number.isFinite(oldestMs) ? Math.max(0, (now - oldestMs) / 1000) : null);
    return point;
  }

  /** Into the database for GET /admin/stats/history (ranges up to 24 h, bucketed there). */
  private async record(point: StatsPoint, oldestQueuedS: number | null): Promise<void> {
    const h = this.store.history;
    await h.record({ at: new Date(point.t), hubId: this.config.hubId, queued: point.queued, oldestQueuedS, inFlight: point.in_flight, capacity: point.capacity });
    if (this.recorded++ % PRUNE_EVERY === 0) await h.prune(new Date(point.t - HISTORY_KEEP_MS));
  }

  loop(): PeriodicLoop {
    return new PeriodicLoop('stats', this.periodMs(), async () => void (await this.sample()), this.clock, this.log, { runAtStart: true });
  }
}
