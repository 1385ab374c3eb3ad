// /admin/stats turned into the points the charts plot (numbers on a time axis).
import type { StatsResponse } from '../api/types.ts';

export interface ThroughputPoint {
  t: number;
  succeeded: number;
  failed: number;
}
export interface SeriesPoint {
  t: number;
  queued: number;
  in_flight: number;
  capacity: number;
  utilisation: number;
}

const HOUR_MS = 3600_000;

export function throughputPoints(stats: StatsResponse | null, now: number): ThroughputPoint[] {
  if (!stats) return [];
  return stats.throughput
    .map((b) => ({ t: Date.parse(b.minute), succeeded: b.succeeded, failed: b.failed }))
    .filter((p) => Number.isFinite(p.t) && p.t >= now - HOUR_MS)
    .sort((a, b) => a.t - b.t);
}

export function seriesPoints(stats: StatsResponse | null, now: number): SeriesPoint[] {
  if (!stats) return [];
  return stats.series
    .map((p) => ({
      t: Date.parse(p.t),
      queued: p.queued,
      in_flight: p.in_flight,
      capacity: p.capacity,
      utilisation: p.capacity > 0 ? Math.round((1000 * p.in_flight) / p.capacity) / 10 : 0,
    }))
    .filter((p) => Number.isFinite(p.t) && p.t >= now - HOUR_MS)
    .sort((a, b) => a.t - b.t);
}

export function timeTick(t: number): string {
  const d = new Date(t);
  return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
}
