// The jobs table and the durable worker settings, behind one interface so the same code runs
// on Postgres (`pg`) and on embedded PGlite. The statements live in adapters/sql/statements.ts.
import type { JobKind, JobStatus } from '../wire/job-spec.ts';
import type { CredentialStore } from './credential-store.ts';
import type { FleetHistory } from './fleet-history.ts';

/** A job as lists show it: everything but the spec and the result. */
export type JobSummaryRow = Omit<JobRow, 'spec' | 'result'>;

export interface JobRow {
  id: string;
  kind: JobKind;
  spec: Record<string, unknown>;
  status: JobStatus;
  worker_id: string | null;
  lane: number | null;
  hub_id: string | null;
  /** The assignment this run belongs to: a result carrying another one is stale and ignored. */
  session_id: string | null;
  novnc_url: string | null;
  error: string | null;
  result: unknown;
  attempts: number;
  created_at: Date;
  assigned_at: Date | null;
  finished_at: Date | null;
  deadline_at: Date | null;
  /** Set when POST /jobs gave up on inline assignment: redrive may take it before the age gate. */
  released_at: Date | null;
  idempotency_key: string | null;
}

export interface NewJob {
  id: string;
  kind: JobKind;
  spec: Record<string, unknown>;
  hubId: string;
  idempotencyKey: string | null;
  now: Date;
}

export interface Claim {
  workerId: string;
  hubId: string;
  lane: number;
  assignmentId: string;
  novncUrl: string | null;
  now: Date;
  deadlineAt: Date;
}

export interface Finish {
  assignmentId: string;
  /** The worker reporting: a result for another worker's job changes nothing. */
  workerId: string;
  status: 'succeeded' | 'failed' | 'canceled';
  result: unknown;
  error: string | null;
  now: Date;
}

export type WorkerStatus = 'active' | 'drain' | 'standby';

export interface AuditEntry {
  at: Date;
  actor: string;
  action: string;
  target: string;
  details: unknown;
}

export interface StatsBucket {
  minute: Date;
  succeeded: number;
  failed: number;
}

export interface JobStore {
  /** The database server's clock now, in ms since the epoch (a hub on Postgres keeps time by it). */
  databaseNow?(): Promise<number>;
  /** Worker credentials, on the same database (one transaction can audit a reset). */
  readonly credentials: CredentialStore;
  /** The charts' samples and the queue by kind, on the same database. */
  readonly history: FleetHistory;
  /** A worker's last jobs and audit entries (the console's worker drawer). */
  readonly workerRecord: {
    /** The worker's jobs, newest first. */
    jobsOf(workerId: string, limit: number): Promise<JobSummaryRow[]>;
    /** Audit entries whose target is the worker, newest first. */
    auditOf(workerId: string, limit: number): Promise<AuditEntry[]>;
  };
  /** Inserts a queued job; with an idempotency key already used, returns the existing job and created=false. */
  insertJob(job: NewJob): Promise<{ job: JobRow; created: boolean }>;
  /**
   * Inserts many jobs in one statement; returns the rows it made. A job without a claim is
   * queued and released; one with a claim (a lane was free) is inserted running on it. A job
   * whose idempotency key is already held (by an earlier job or an earlier job of the same
   * call) is skipped.
   */
  insertBatch(jobs: Array<NewJob & { claim?: Claim }>): Promise<JobRow[]>;
  /** The jobs holding any of these idempotency keys. */
  jobsByIdempotencyKeys(keys: string[]): Promise<JobRow[]>;
  /** Frees a job's Idempotency-Key for reuse when the job was created at or before `createdBefore`; false when it was not. */
  forgetIdempotencyKey(jobId: string, createdBefore: Date): Promise<boolean>;
  /** Insert and claim at once: the job found a free lane before it was written. */
  insertRunningJob(job: NewJob, claim: Claim): Promise<{ job: JobRow; created: boolean }>;
  getJob(id: string): Promise<JobRow | undefined>;
  /** One page of summaries, newest first; `before` is the last row of the previous page. */
  listJobs(filter: { status?: JobStatus; limit: number; before?: { created_at: Date; id: string } }): Promise<JobSummaryRow[]>;
  /** The conditional UPDATE: queued ∧ worker_id IS NULL → running. Undefined when another claimer won. */
  claimQueuedJob(id: string, claim: Claim): Promise<JobRow | undefined>;
  /**
   * claimQueuedJob for many jobs in one statement: returns the rows it claimed (those still
   * queued and unassigned, and not locked by a concurrent claimer); the others stay as they were.
   */
  claimQueuedJobs(claims: Array<{ id: string; claim: Claim }>): Promise<JobRow[]>;
  /** Undo a claim whose send failed or that the worker rejected; back to queued, released. */
  unclaimJob(id: string, assignmentId: string, now: Date, workerId?: string): Promise<boolean>;
  /** Terminal status for the run with this assignment id, only while it is still running. */
  finishJob(id: string, finish: Finish): Promise<JobRow | undefined>;
  /**
   * finishJob for many results in one statement (at most one per job): returns the rows it
   * finished; a result whose condition fails is left out and changes nothing.
   */
  finishJobs(finishes: Array<{ id: string; finish: Finish }>): Promise<JobRow[]>;
  /** queued or running → canceled. */
  cancelJob(id: string, now: Date): Promise<JobRow | undefined>;
  /** Fail a job only if it is still in the status (and assignment) the decider saw. */
  failJobIf(id: string, expect: { status: 'queued' | 'running'; assignmentId?: string | null }, error: string, now: Date): Promise<JobRow | undefined>;
  markReleased(id: string, now: Date): Promise<void>;
  /** Queued, unassigned jobs, oldest first. */
  listQueued(limit: number): Promise<JobRow[]>;
  listRunning(limit: number): Promise<JobRow[]>;
  /** Running jobs of one worker assigned before `assignedBefore`. */
  listRunningOfWorker(workerId: string, assignedBefore: Date): Promise<JobRow[]>;
  countByStatus(): Promise<Record<JobStatus, number>>;
  countQueued(): Promise<number>;
  throughput(since: Date): Promise<StatsBucket[]>;

  getWorkerStatus(workerId: string): Promise<WorkerStatus | undefined>;
  setWorkerStatus(workerId: string, status: WorkerStatus, actor: string, now: Date): Promise<void>;
  /** An operator forgot an offline worker: its stored status goes, the audit log says who and what it was. */
  forgetWorker(workerId: string, actor: string, details: Record<string, unknown>, now: Date): Promise<void>;
  listAudit(limit: number): Promise<AuditEntry[]>;
  /** One audit entry on its own (an event that changes no row, e.g. a CDP client's connection). */
  recordAudit(entry: AuditEntry): Promise<void>;

  ping(): Promise<void>;
  close(): Promise<void>;
}
