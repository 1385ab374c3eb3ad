// GET /admin/workers/:id/detail: the console's worker drawer. The worker's row and lanes, its
// placement verdict now (the scheduler's filter), disk/CPU/memory over the last samples, its
// last 50 jobs, the kinds it ran, and the audit of its status changes (old → new).
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { placementVerdict } from '../../domain/placement-verdict.ts';
import type { FleetWorker } from '../../hub/fleet-view.ts';
import type { VitalsPoint } from '../../hub/worker-vitals.ts';
import type { WorkerRecord } from '../../ports/worker-record.ts';
import { jobSummaryJson, workerJson } from '../json.ts';
import type { WorkerDetailJson } from '../../wire/json.ts';
import { parseOr400 } from '../validate.ts';

export interface WorkerDetailDeps {
  record: WorkerRecord;
  fleet: { read(): Promise<{ workers: readonly FleetWorker[]; as_of: number; stale: boolean }> };
  vitals: { history(workerId: string): VitalsPoint[] };
  pick: { diskMaxPct: number; workerTtlS: number };
  now: () => number;
}

const Params = z.strictObject({ id: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/, 'not a worker id') });
export const WORKER_DETAIL_JOBS = 50;
const AUDIT_LIMIT = 50;

export function adminWorkerDetailRoutes(deps: WorkerDetailDeps) {
  return async (app: FastifyInstance) => {
    app.get('/admin/workers/:id/detail', async (req): Promise<WorkerDetailJson> => {
      const { id } = parseOr400(Params, req.params, 'worker id');
      parseOr400(z.strictObject({}), req.query ?? {}, 'query');
      const [view, jobs, audit] = await Promise.all([deps.fleet.read(), deps.record.jobsOf(id, WORKER_DETAIL_JOBS), deps.record.auditOf(id, AUDIT_LIMIT)]);
      const row = view.workers.find((w) => w.worker_id === id);
      const now = deps.now();
      return {
        worker_id: id,
        worker: row ? workerJson(row) : null,
        verdict: row ? placementVerdict(row, { diskMaxPct: deps.pick.diskMaxPct, workerTtlMs: deps.pick.workerTtlS * 1000, nowMs: now }) : null,
        vitals: deps.vitals.history(id).map((p) => ({ ...p, t: new Date(p.t).toISOString() })),
        jobs: jobs.map(jobSummaryJson),
        kinds_run: [...new Set(jobs.map((j) => j.kind))].sort(),
        audit: audit.map((a) => ({ at: new Date(a.at).toISOString(), actor: a.actor, action: a.action, details: a.details })),
        as_of: new Date(view.as_of).toISOString(),
      };
    });
  };
}
