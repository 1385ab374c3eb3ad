// What the console's worker drawer reads from the database: the worker's last jobs and the
// audit entries about it.
import type { AuditEntry, JobSummaryRow } from './job-store.ts';

export interface WorkerRecord {
  /** The worker's jobs, newest first. */
  jobsOf(workerId: string, limit: number): Promise<JobSummaryRow[]>;
  /** Audit entries whose target is the worker, newest first. */
  auditOf(workerId: string, limit: number): Promise<AuditEntry[]>;
}
