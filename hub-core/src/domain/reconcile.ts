// The stale-job reconciler's decisions (seed, layer 5), on the fleet-wide view: a hub that
// looked only at its own links would fail every healthy job the other hubs run.
export interface RunningRow {
  id: string;
  worker_id: string | null;
  session_id: string | null;
  assigned_at: Date | null;
  deadline_at: Date | null;
}

export interface OpenQueuedRow {
  id: string;
  worker_id: string | null;
  created_at: Date;
}

export interface ReconcileFleet {
  /** Fleet-wide: worker id → last heartbeat (ms) and whether it is alive. */
  workers: ReadonlyMap<string, { alive: boolean; last_seen_ms: number }>;
  /** The view lacks other hubs' workers (registry down, no recent good view): no orphan calls. */
  partial: boolean;
  /**
   * Since when this hub has seen each worker missing from the fleet (no row at all), and since
   * when it has watched at all (its first pass). The grace counts from there too: rows a
   * restarted Redis forgot, or heartbeats a hub missed while it was down, are no evidence that
   * a worker is gone (issue 16). Without them, the grace counts from the last heartbeat alone.
   */
  absentSince?: ReadonlyMap<string, number>;
  watchingSince?: number;
}

export interface ReconcileConfig {
  orphanGraceS: number;
  queuedTimeoutS: number;
}

export type ReconcileAction =
  | { kind: 'fail_running'; job_id: string; assignment_id: string | null; worker_id: string | null; error: string; reason: 'orphan' | 'timeout' }
  | { kind: 'fail_queued'; job_id: string; error: string; reason: 'queued_timeout' };

export function decideReconcile(rows: { running: readonly RunningRow[]; queued: readonly OpenQueuedRow[] }, fleet: ReconcileFleet, nowMs: number, cfg: ReconcileConfig): ReconcileAction[] {
  const actions: ReconcileAction[] = [];
  const graceMs = cfg.orphanGraceS * 1000;
  for (const r of rows.running) {
    // The worker stops a job at its deadline and reports it; its result may still be on the
    // way (a hub restarting, a link re-linking with backoff): wait ORPHAN_GRACE for it, as for
    // a worker gone quiet, before calling it a timeout (issue 16: a success dropped as stale).
    if (r.deadline_at && nowMs > r.deadline_at.getTime() + graceMs) {
      actions.push({ kind: 'fail_running', job_id: r.id, assignment_id: r.session_id, worker_id: r.worker_id, error: 'timeout', reason: 'timeout' });
      continue;
    }
    if (fleet.partial) continue;
    const w = r.worker_id ? fleet.workers.get(r.worker_id) : undefined;
    if (w?.alive) continue;
    // Gone since its last heartbeat (or, never seen, since the assignment). The grace lets a
    // worker that restarts or self-updates come back with the same id and keep its job.
    const seenMissing = !w && r.worker_id ? fleet.absentSince?.get(r.worker_id) : undefined;
    const goneSince = Math.max(w?.last_seen_ms ?? 0, r.assigned_at?.getTime() ?? 0, seenMissing ?? 0, fleet.watchingSince ?? 0);
    if (nowMs - goneSince >= graceMs) {
      actions.push({
        kind: 'fail_running',
        job_id: r.id,
        assignment_id: r.session_id,
        worker_id: r.worker_id,
        error: `worker ${r.worker_id ?? '(none)'} lost: no heartbeat for ${Math.round((nowMs - goneSince) / 1000)} s`,
        reason: 'orphan',
      });
    }
  }
  const queuedMs = cfg.queuedTimeoutS * 1000;
  for (const q of rows.queued) {
    if (q.worker_id === null && nowMs - q.created_at.getTime() >= queuedMs) {
      actions.push({ kind: 'fail_queued', job_id: q.id, error: 'queued timeout', reason: 'queued_timeout' });
    }
  }
  return actions;
}
