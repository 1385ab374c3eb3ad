import type { AuditEntry, JobSummaryRow } from '../../ports/job-store.ts';
import type { WorkerRecord } from '../../ports/worker-record.ts';
import { PLANNED_PER_RUN, type SqlClient } from './sql-client.ts';

const SUMMARY = `id, kind, status, worker_id, lane, hub_id, session_id, novnc_url, error, attempts,
  created_at, assigned_at, finished_at, deadline_at, released_at, idempotency_key`;

export const WORKER_RECORD_SQL = {
  jobsOf: `SELECT ${SUMMARY} FROM jobs WHERE worker_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
  auditOf: `SELECT at, actor, action, target, details FROM audit_log WHERE target = $1 ORDER BY id DESC LIMIT $2`,
} as const;

export class SqlWorkerRecord implements WorkerRecord {
  constructor(private readonly db: SqlClient) {}

  jobsOf(workerId: string, limit: number): Promise<JobSummaryRow[]> {
    return this.db.query<JobSummaryRow>(WORKER_RECORD_SQL.jobsOf, [workerId, limit], PLANNED_PER_RUN);
  }

  auditOf(workerId: string, limit: number): Promise<AuditEntry[]> {
    return this.db.query<AuditEntry>(WORKER_RECORD_SQL.auditOf, [workerId, limit], 'workerAudit');
  }
}
