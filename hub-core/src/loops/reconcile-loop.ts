// Layer 5: every RECONCILE_INTERVAL, settle what POST and redrive left behind, on the
// fleet-wide view. Each action is a conditional UPDATE on the state the decider saw, so a
// job that moved meanwhile (finished, re-linked) is left alone.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { decideReconcile } from '../domain/reconcile.ts';
import type { FleetViewReader } from '../hub/fleet-view.ts';
import type { JobLedger } from '../hub/job-ledger.ts';
import type { WorkerEnrollment } from '../hub/worker-enrollment.ts';
import type { Clock } from '../ports/clock.ts';
import type { JobStore } from '../ports/job-store.ts';
import { PeriodicLoop } from './periodic-loop.ts';

const SCAN_LIMIT = 10_000;

export function reconcileLoop(d: { config: Config; store: JobStore; fleetView: FleetViewReader; ledger: JobLedger; clock: Clock; log: Logger; enrollment: WorkerEnrollment }): PeriodicLoop {
  const { config, store, fleetView, ledger, clock, log, enrollment } = d;
  // Since when this hub has watched, and first saw each running job's worker missing (decideReconcile).
  let watchingSince: number | undefined;
  let absentSince = new Map<string, number>();
  return new PeriodicLoop(
    'reconcile',
    config.reconcileIntervalS * 1000,
    async () => {
      const view = await fleetView.read();
      const [running, queued] = await Promise.all([store.listRunning(SCAN_LIMIT), store.listQueued(SCAN_LIMIT)]);
      const now = clock.now();
      const workers = new Map(view.workers.map((w) => [w.worker_id, { alive: w.alive, last_seen_ms: w.last_seen_ms }]));
      watchingSince ??= now;
      const absent = new Map<string, number>();
      for (const r of running) if (r.worker_id && !workers.has(r.worker_id)) absent.set(r.worker_id, absentSince.get(r.worker_id) ?? now);
      if (!view.partial) absentSince = absent;
      const actions = decideReconcile({ running, queued }, { workers, partial: view.partial, absentSince, watchingSince }, now, config);
      for (const a of actions) await ledger.reconcile(a);
      if (view.partial) log.warn('reconciler skipped orphan checks: fleet view has only this hub');
      // Enrollments that never linked expire here too (a conditional DELETE, safe on every hub).
      await enrollment.expireUnused();
    },
    clock,
    log,
  );
}
