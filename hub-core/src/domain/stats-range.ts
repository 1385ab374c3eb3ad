// The console's chart ranges: how long a window is and how wide its buckets are. The window
// ends at the next bucket boundary, so a bucket never straddles two requests' edges and the
// time axis ticks on whole buckets.
export const STATS_RANGES = {
  '15m': { spanS: 15 * 60, bucketS: 30 },
  '1h': { spanS: 3600, bucketS: 60 },
  '24h': { spanS: 24 * 3600, bucketS: 30 * 60 },
} as const;

export type StatsRange = keyof typeof STATS_RANGES;
export const STATS_RANGE_NAMES = Object.keys(STATS_RANGES) as StatsRange[];

export interface StatsWindow {
  range: StatsRange;
  fromMs: number;
  toMs: number;
  bucketS: number;
  buckets: number;
}

export function statsWindow(range: StatsRange, nowMs: number): StatsWindow {
  const { spanS, bucketS } = STATS_RANGES[range];
  const bucketMs = bucketS * 1000;
  // The bucket holding `now` is the last one: it fills in as the window moves.
  const toMs = Math.floor(nowMs / bucketMs) * bucketMs + bucketMs;
  return { range, fromMs: toMs - spanS * 1000, toMs, bucketS, buckets: spanS / bucketS };
}
