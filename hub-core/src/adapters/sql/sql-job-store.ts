import type { JobStatus } from '../../wire/job-spec.ts';
import { JOB_STATUSES } from '../../wire/job-spec.ts';
import type { AuditEntry, Claim, Finish, JobRow, JobStore, JobSummaryRow, NewJob, StatsBucket, WorkerStatus } from '../../ports/job-store.ts';
import { migrate } from './migrate.ts';
import { pgClient } from './pg-client.ts';
import { pgliteClient } from './pglite-client.ts';
import { SqlCredentialStore } from './sql-credential-store.ts';
import { SqlFleetHistory } from './sql-fleet-history.ts';
import { SqlWorkerRecord } from './sql-worker-record.ts';
import { PLANNED_PER_RUN, type SqlClient } from './sql-client.ts';
import { SQL } from './statements.ts';

/** JSON parameters go in as text and are cast to jsonb in the statement. */
const json = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(v));

// Lists of jobs and pages of them go unnamed: see PLANNED_PER_RUN (sql-client.ts).

export class SqlJobStore implements JobStore {
  readonly credentials: SqlCredentialStore;
  readonly history: SqlFleetHistory;
  readonly workerRecord: SqlWorkerRecord;
  /** @param unknownMigrations the database's migrations this release does not ship (migrate.ts) */
  constructor(
    readonly db: SqlClient,
    readonly unknownMigrations: readonly string[] = [],
  ) {
    this.credentials = new SqlCredentialStore(db);
    this.history = new SqlFleetHistory(db);
    this.workerRecord = new SqlWorkerRecord(db);
  }

  async databaseNow(): Promise<number> {
    const [row] = await this.db.query<{ ms: number | string }>('SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms', [], 'databaseNow');
    return Number(row!.ms);
  }

  async insertJob(job: NewJob): Promise<{ job: JobRow; created: boolean }> {
    const rows = await this.db.query<JobRow>(SQL.insertJob, [job.id, job.kind, json(job.spec), job.hubId, job.idempotencyKey, job.now], 'insertJob');
    return this.insertedOrExisting(rows, job);
  }

  async insertRunningJob(job: NewJob, c: Claim): Promise<{ job: JobRow; created: boolean }> {
    const rows = await this.db.query<JobRow>(SQL.insertRunningJob, [job.id, job.kind, json(job.spec), c.hubId, job.idempotencyKey, c.now, c.workerId, c.lane, c.assignmentId, c.novncUrl, c.deadlineAt], 'insertRunningJob');
    return this.insertedOrExisting(rows, job);
  }

  insertBatch(jobs: Array<NewJob & { claim?: Claim }>): Promise<JobRow[]> {
    const rows = jobs.map((j) => ({
      id: j.id, kind: j.kind, spec: j.spec, hub_id: j.claim?.hubId ?? j.hubId, idempotency_key: j.idempotencyKey, created_at: j.now.toISOString(),
      ...(j.claim && { worker_id: j.claim.workerId, lane: j.claim.lane, session_id: j.claim.assignmentId, novnc_url: j.claim.novncUrl, deadline_at: j.claim.deadlineAt.toISOString() }),
    }));
    return this.db.query<JobRow>(SQL.insertBatch, [JSON.stringify(rows)], 'insertBatch');
  }

  jobsByIdempotencyKeys(keys: string[]): Promise<JobRow[]> {
    return keys.length === 0 ? Promise.resolve([]) : this.db.query<JobRow>(SQL.jobsByIdempotencyKeys, [JSON.stringify(keys)], PLANNED_PER_RUN);
  }

  private async insertedOrExisting(rows: JobRow[], job: NewJob): Promise<{ job: JobRow; created: boolean }> {
    if (rows[0]) return { job: rows[0], created: true };
    const existing = await this.db.query<JobRow>(SQL.jobByIdempotencyKey, [job.idempotencyKey]);
    if (!existing[0]) throw new Error('idempotent insert found neither a new nor an existing job');
    return { job: existing[0], created: false };
  }

  async forgetIdempotencyKey(jobId: string, createdBefore: Date): Promise<boolean> {
    return (await this.db.query(SQL.forgetIdempotencyKey, [jobId, createdBefore])).length > 0;
  }

  async getJob(id: string): Promise<JobRow | undefined> {
    return (await this.db.query<JobRow>(SQL.jobById, [id], 'jobById'))[0];
  }

  listJobs(filter: { status?: JobStatus; limit: number; before?: { created_at: Date; id: string } }): Promise<JobSummaryRow[]> {
    return this.db.query<JobSummaryRow>(SQL.listJobs, [filter.status ?? null, filter.before?.created_at ?? null, filter.before?.id ?? null, filter.limit], PLANNED_PER_RUN);
  }

  async claimQueuedJob(id: string, c: Claim): Promise<JobRow | undefined> {
    return (await this.db.query<JobRow>(SQL.claimQueuedJob, [id, c.workerId, c.hubId, c.lane, c.assignmentId, c.novncUrl, c.now, c.deadlineAt], 'claimQueuedJob'))[0];
  }

  claimQueuedJobs(claims: Array<{ id: string; claim: Claim }>): Promise<JobRow[]> {
    if (claims.length === 0) return Promise.resolve([]);
    const rows = claims.map(({ id, claim: c }) => ({ id, worker_id: c.workerId, hub_id: c.hubId, lane: c.lane, session_id: c.assignmentId, novnc_url: c.novncUrl, assigned_at: c.now.toISOString(), deadline_at: c.deadlineAt.toISOString() }));
    return this.db.query<JobRow>(SQL.claimQueuedJobs, [JSON.stringify(rows)], PLANNED_PER_RUN);
  }

  async unclaimJob(id: string, assignmentId: string, now: Date, workerId?: string): Promise<boolean> {
    const rows = workerId === undefined ? await this.db.query(SQL.unclaimJob, [id, assignmentId, now], 'unclaimJob') : await this.db.query(SQL.unclaimJobOfWorker, [id, assignmentId, now, workerId]);
    return rows.length > 0;
  }

  async finishJob(id: string, f: Finish): Promise<JobRow | undefined> {
    return (await this.db.query<JobRow>(SQL.finishJob, [id, f.assignmentId, f.status, json(f.result ?? null), f.error, f.now, f.workerId], 'finishJob'))[0];
  }

  finishJobs(finishes: Array<{ id: string; finish: Finish }>): Promise<JobRow[]> {
    if (finishes.length === 0) return Promise.resolve([]);
    const rows = finishes.map(({ id, finish: f }) => ({ id, session_id: f.assignmentId, worker_id: f.workerId, status: f.status, result: f.result ?? null, error: f.error, finished_at: f.now.toISOString() }));
    return this.db.query<JobRow>(SQL.finishJobs, [JSON.stringify(rows)], PLANNED_PER_RUN);
  }

  async cancelJob(id: string, now: Date): Promise<JobRow | undefined> {
    return (await this.db.query<JobRow>(SQL.cancelJob, [id, now]))[0];
  }

  async failJobIf(id: string, expect: { status: 'queued' | 'running'; assignmentId?: string | null }, error: string, now: Date): Promise<JobRow | undefined> {
    const rows =
      expect.status === 'queued'
        ? await this.db.query<JobRow>(SQL.failQueuedJob, [id, error, now])
        : await this.db.query<JobRow>(SQL.failRunningJob, [id, error, now, expect.assignmentId ?? null]);
    return rows[0];
  }

  async markReleased(id: string, now: Date): Promise<void> {
    await this.db.query(SQL.markReleased, [id, now], 'markReleased');
  }

  listQueued(limit: number): Promise<JobRow[]> {
    return this.db.query<JobRow>(SQL.listQueued, [limit], 'listQueued');
  }

  listRunning(limit: number): Promise<JobRow[]> {
    return this.db.query<JobRow>(SQL.listRunning, [limit]);
  }

  listRunningOfWorker(workerId: string, assignedBefore: Date): Promise<JobRow[]> {
    return this.db.query<JobRow>(SQL.listRunningOfWorker, [workerId, assignedBefore]);
  }

  async countByStatus(): Promise<Record<JobStatus, number>> {
    const out = Object.fromEntries(JOB_STATUSES.map((s) => [s, 0])) as Record<JobStatus, number>;
    for (const r of await this.db.query<{ status: JobStatus; n: number }>(SQL.countByStatus)) out[r.status] = r.n;
    return out;
  }

  async countQueued(): Promise<number> {
    return (await this.db.query<{ n: number }>(SQL.countQueued))[0]?.n ?? 0;
  }

  throughput(since: Date): Promise<StatsBucket[]> {
    return this.db.query<StatsBucket>(SQL.throughput, [since]);
  }

  async getWorkerStatus(workerId: string): Promise<WorkerStatus | undefined> {
    return (await this.db.query<{ status: WorkerStatus }>(SQL.getWorkerStatus, [workerId]))[0]?.status;
  }

  async setWorkerStatus(workerId: string, status: WorkerStatus, actor: string, now: Date): Promise<void> {
    await this.db.transaction(async (tx) => {
      // No row yet: the worker was active (the default), so that is what the change is from.
      const before = (await tx.query<{ status: string }>(SQL.getWorkerStatus, [workerId]))[0]?.status ?? 'active';
      await tx.query(SQL.setWorkerStatus, [workerId, status, now, actor]);
      await tx.query(SQL.insertAudit, [now, actor, 'worker.status', workerId, json({ from: before, to: status })]);
    });
  }

  async forgetWorker(workerId: string, actor: string, details: Record<string, unknown>, now: Date): Promise<void> {
    await this.db.transaction(async (tx) => {
      const status = (await tx.query<{ status: string }>(SQL.deleteWorkerSettings, [workerId]))[0]?.status ?? null;
      await tx.query(SQL.insertAudit, [now, actor, 'worker.forget', workerId, json({ ...details, stored_status: status })]);
    });
  }

  async recordAudit(e: AuditEntry): Promise<void> {
    await this.db.query(SQL.insertAudit, [e.at, e.actor, e.action, e.target, json(e.details)]);
  }

  listAudit(limit: number): Promise<AuditEntry[]> {
    return this.db.query<AuditEntry>(SQL.listAudit, [limit]);
  }

  async ping(): Promise<void> {
    await this.db.query('SELECT 1');
  }

  close(): Promise<void> {
    return this.db.close();
  }
}

/** DATABASE_URL → Postgres; unset → PGlite under `<dataDir>/db` (or in memory for tests). */
export async function openJobStore(opts: { databaseUrl?: string; pgliteDir?: string }): Promise<SqlJobStore> {
  const db = opts.databaseUrl ? pgClient(opts.databaseUrl) : await pgliteClient(opts.pgliteDir);
  try {
    return new SqlJobStore(db, (await migrate(db)).unknown);
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
}
