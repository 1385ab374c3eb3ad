// GET /admin/stats/history turned into what the charts plot: one point per bucket at the
// bucket's middle (so a bar spans its bucket and stays inside the plot), a time axis that
// ticks on whole buckets, and one test for "nothing to show" shared by every chart.
import type { StatsHistory } from '../api/types.ts';

/** A bucket as the hub sends it, placed on the time axis. */
export type ChartPoint = Omit<StatsHistory['buckets'][number], 't'> & {
  /** Middle of the bucket, epoch ms. */
  t: number;
  /** Percent of capacity busy; null without a sample or without capacity. */
  utilisation: number | null;
};

export interface ChartFrame {
  points: ChartPoint[];
  /** The whole window, epoch ms: the x domain of every chart. */
  domain: [number, number];
  ticks: number[];
  tickStepS: number;
  bucketS: number;
}

export const CHART_RANGES = [
  { key: '15m', label: '15 min' },
  { key: '1h', label: '1 h' },
  { key: '24h', label: '24 h' },
] as const;
export type ChartRange = (typeof CHART_RANGES)[number]['key'];

/** Steps a reader expects on a clock axis, in seconds; the tick step is the first that fits. */
const NICE_STEPS_S = [30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200, 86_400];
const MAX_TICKS = 8;

export function chartFrame(h: StatsHistory | null): ChartFrame | null {
  if (!h) return null;
  const from = Date.parse(h.from);
  const to = Date.parse(h.to);
  if (!Number.isFinite(from) || !Number.isFinite(to) || to <= from || !(h.bucket_s > 0)) return null;
  const half = (h.bucket_s * 1000) / 2;
  const points = h.buckets
    .map((b) => ({
      t: Date.parse(b.t) + half,
      succeeded: b.succeeded,
      failed: b.failed,
      queued: b.queued,
      oldest_queued_s: b.oldest_queued_s,
      in_flight: b.in_flight,
      capacity: b.capacity,
      utilisation: b.in_flight !== null && b.capacity ? Math.round((1000 * b.in_flight) / b.capacity) / 10 : null,
    }))
    .filter((p) => Number.isFinite(p.t) && p.t > from && p.t < to)
    .sort((a, b) => a.t - b.t);
  const { ticks, stepS } = timeTicks(from, to, h.bucket_s);
  return { points, domain: [from, to], ticks, tickStepS: stepS, bucketS: h.bucket_s };
}

/** Ticks on multiples of a step that is itself a whole number of buckets, in [from, to): no label twice. */
export function timeTicks(from: number, to: number, bucketS: number): { ticks: number[]; stepS: number } {
  const spanS = (to - from) / 1000;
  const stepS = NICE_STEPS_S.find((s) => s % bucketS === 0 && spanS / s <= MAX_TICKS) ?? Math.ceil(spanS / MAX_TICKS / bucketS) * bucketS;
  const stepMs = stepS * 1000;
  const ticks: number[] = [];
  for (let t = Math.ceil(from / stepMs) * stepMs; t < to; t += stepMs) ticks.push(t);
  return { ticks, stepS };
}

/** HH:MM, or HH:MM:SS when ticks are less than a minute apart. */
export function tickLabel(t: number, stepS: number): string {
  const d = new Date(t);
  const p = (n: number) => String(n).padStart(2, '0');
  const hm = `${p(d.getHours())}:${p(d.getMinutes())}`;
  return stepS < 60 ? `${hm}:${p(d.getSeconds())}` : hm;
}

export function bucketText(bucketS: number): string {
  return bucketS < 60 ? `${bucketS} s` : bucketS < 3600 ? `${bucketS / 60} min` : `${bucketS / 3600} h`;
}

/** Nothing to plot: no sample recorded and no job finished in the window. Every chart says so the same way. */
export function isEmptyFrame(f: ChartFrame | null): boolean {
  return !f || f.points.every((p) => p.queued === null && p.in_flight === null && p.succeeded === 0 && p.failed === 0);
}
