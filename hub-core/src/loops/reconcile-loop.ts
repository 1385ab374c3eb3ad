// Layer 5: every RECONCILE_INTERVAL, settle what POST and redrive left behind, on the
// fleet-wide view. Each action is a conditional UPDATE on the state the decider saw, so a
// job that moved meanwhile (finished, re-linked) is left alone.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { decideReconcile } from '../domain/reconcile.ts';
import type { FleetViewReader } from '../hub/fleet-view.ts';
import type { HubEvents } from '../hub/hub-events.ts';
import type { LocalFleet } from '../hub/local-fleet.ts';
import type { HubMetrics } from '../hub/metrics.ts';
import type { WorkerEnrollment } from '../hub/worker-enrollment.ts';
import { encode } from '../wire/protocol.ts';
import type { Clock } from '../ports/clock.ts';
import type { JobStore } from '../ports/job-store.ts';
import { PeriodicLoop } from './periodic-loop.ts';

const SCAN_LIMIT = 10_000;

export function reconcileLoop(d: { config: Config; store: JobStore; fleetView: FleetViewReader; fleet: LocalFleet; clock: Clock; log: Logger; events: HubEvents; metrics: HubMetrics; enrollment: WorkerEnrollment }): PeriodicLoop {
  const { config, store, fleetView, fleet, clock, log, events, metrics, enrollment } = d;
  return new PeriodicLoop(
    'reconcile',
    config.reconcileIntervalS * 1000,
    async () => {
      const view = await fleetView.read();
      const [running, queued] = await Promise.all([store.listRunning(SCAN_LIMIT), store.listQueued(SCAN_LIMIT)]);
      const now = clock.now();
      const workers = new Map(view.workers.map((w) => [w.worker_id, { alive: w.alive, last_seen_ms: w.last_seen_ms }]));
      const actions = decideReconcile({ running, queued }, { workers, partial: view.partial }, now, config);
      for (const a of actions) {
        const at = new Date(clock.now());
        const failed =
          a.kind === 'fail_queued'
            ? await store.failJobIf(a.job_id, { status: 'queued' }, a.error, at)
            : await store.failJobIf(a.job_id, { status: 'running', assignmentId: a.assignment_id }, a.error, at);
        if (!failed) continue;
        metrics.reconcilerActions.inc({ reason: a.reason });
        log.warn({ job_id: a.job_id, reason: a.reason, error: a.error }, 'reconciler failed a stale job');
        events.jobChanged(failed);
        if (a.kind === 'fail_running' && a.worker_id) {
          const link = fleet.get(a.worker_id);
          await link?.socket.send(encode({ type: 'cancel', job_id: a.job_id, reason: a.error })).catch(() => {});
        }
      }
      if (view.partial) log.warn('reconciler skipped orphan checks: fleet view has only this hub');
      // Enrollments that never linked expire here too (a conditional DELETE, safe on every hub).
      await enrollment.expireUnused();
    },
    clock,
    log,
  );
}
