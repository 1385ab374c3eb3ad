// GET /admin/stats/history?range=15m|1h|24h: the charts' buckets, computed in the database
// from the recorded fleet samples and the finished jobs. The route gets only what it reads.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { STATS_RANGE_NAMES, statsWindow, type StatsRange } from '../../domain/stats-range.ts';
import type { FleetHistory } from '../../ports/fleet-history.ts';
import type { StatsHistoryJson } from '../../wire/json.ts';
import { parseOr400 } from '../validate.ts';

export interface HistoryRouteDeps {
  history: Pick<FleetHistory, 'buckets'>;
  now: () => number;
}

const Query = z.strictObject({ range: z.enum(STATS_RANGE_NAMES as [StatsRange, ...StatsRange[]]).default('1h') });
const round = (v: number | null, digits: number) => (v === null ? null : Math.round(Number(v) * 10 ** digits) / 10 ** digits);

export function adminHistoryRoutes(deps: HistoryRouteDeps) {
  return async (app: FastifyInstance) => {
    app.get('/admin/stats/history', async (req): Promise<StatsHistoryJson> => {
      const { range } = parseOr400(Query, req.query, 'query');
      const w = statsWindow(range, deps.now());
      const rows = await deps.history.buckets({ from: new Date(w.fromMs), bucketS: w.bucketS, buckets: w.buckets });
      return {
        range,
        bucket_s: w.bucketS,
        from: new Date(w.fromMs).toISOString(),
        to: new Date(w.toMs).toISOString(),
        buckets: rows.map((b) => ({
          t: new Date(b.t).toISOString(),
          succeeded: b.succeeded,
          failed: b.failed,
          queued: b.queued,
          oldest_queued_s: round(b.oldest_queued_s, 1),
          in_flight: round(b.in_flight, 2),
          capacity: round(b.capacity, 2),
        })),
      };
    });
  };
}
