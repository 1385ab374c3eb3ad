// GET /admin/queue: why jobs wait. The queue by kind with the oldest age, and for the oldest
// job each worker's placement verdict, from the scheduler's own decider (placement-verdict.ts).
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { placementVerdicts, type VerdictWorker } from '../../domain/placement-verdict.ts';
import type { FleetHistory } from '../../ports/fleet-history.ts';
import type { QueueJson } from '../../wire/json.ts';
import { parseOr400 } from '../validate.ts';

export interface QueueRouteDeps {
  history: Pick<FleetHistory, 'queuedByKind' | 'oldestQueued'>;
  fleet: { read(): Promise<{ workers: readonly VerdictWorker[]; as_of: number; stale: boolean }> };
  pick: { diskMaxPct: number; workerTtlS: number };
  now: () => number;
}

const ageS = (now: number, at: Date) => Math.max(0, Math.round((now - new Date(at).getTime()) / 100) / 10);

export function adminQueueRoutes(deps: QueueRouteDeps) {
  return async (app: FastifyInstance) => {
    app.get('/admin/queue', async (req): Promise<QueueJson> => {
      parseOr400(z.strictObject({}), req.query ?? {}, 'query');
      const [kinds, oldest, view] = await Promise.all([deps.history.queuedByKind(), deps.history.oldestQueued(), deps.fleet.read()]);
      const now = deps.now();
      // For the oldest job: its kind counts (a worker that does not run it is ruled out for it).
      const verdicts = placementVerdicts(view.workers, { diskMaxPct: deps.pick.diskMaxPct, workerTtlMs: deps.pick.workerTtlS * 1000, nowMs: now, kind: oldest?.kind });
      return {
        queued: kinds.reduce((n, k) => n + k.queued, 0),
        by_kind: kinds.map((k) => ({ kind: k.kind, queued: k.queued, oldest_age_s: ageS(now, k.oldest_created_at) })),
        oldest: oldest ? { id: oldest.id, kind: oldest.kind, created_at: new Date(oldest.created_at).toISOString(), age_s: ageS(now, oldest.created_at) } : null,
        verdicts,
        candidates: verdicts.filter((v) => v.excluded_by === null).length,
        as_of: new Date(view.as_of).toISOString(),
        stale: view.stale,
      };
    });
  };
}
