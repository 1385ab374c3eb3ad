// The few statements the queue's correctness rests on, each in one named place (the
// graphile-worker way). Every state change is one conditional UPDATE: whoever loses the
// race changes nothing and learns it from the empty RETURNING.
const COLUMNS = `id, kind, spec, status, worker_id, lane, hub_id, session_id, novnc_url, error, result,
  attempts, created_at, assigned_at, finished_at, deadline_at, released_at, idempotency_key`;

/** What a list shows: no spec, no result (a result may be megabytes; GET /jobs/:id has it). */
const SUMMARY_COLUMNS = `id, kind, status, worker_id, lane, hub_id, session_id, novnc_url, error, attempts,
  created_at, assigned_at, finished_at, deadline_at, released_at, idempotency_key`;

/** COLUMNS of `jobs` where a statement joins another relation with the same column names. */
const PREFIXED_COLUMNS = COLUMNS.split(',').map((c) => `jobs.${c.trim()}`).join(', ');

/**
 * The ids of a statement's JSON array argument ($1, objects with an `id`), as a uuid[] computed
 * once. The statements that touch rows by id find them through the primary key alone: the
 * other conditions on a row (status, worker, assignment) are wrapped in `(...) IS TRUE`, which
 * no index can serve, so the planner never trades the key for a status or worker index on
 * statistics taken when the table looked different. Joined to jsonb_to_recordset directly, a
 * claim of 8 jobs cost 50-70 ms against a backlog of 20,000 queued rows (the array re-expanded
 * for every queued row), and a seq scan of the whole table once it was analysed.
 */
const IDS_OF_ARG1 = `ARRAY(SELECT (e->>'id')::uuid FROM jsonb_array_elements($1::jsonb) e)`;

export const SQL = {
  insertJob: `
    INSERT INTO jobs (id, kind, spec, status, hub_id, idempotency_key, created_at)
    VALUES ($1, $2, $3::jsonb, 'queued', $4, $5, $6)
    ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
    RETURNING ${COLUMNS}`,

  /** A new job that found a free lane at once: inserted running, insert and claim in one statement. */
  insertRunningJob: `
    INSERT INTO jobs (id, kind, spec, status, hub_id, idempotency_key, created_at,
                      worker_id, lane, session_id, novnc_url, assigned_at, deadline_at, attempts)
    VALUES ($1, $2, $3::jsonb, 'running', $4, $5, $6, $7, $8, $9, $10, $6, $11, 1)
    ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
    RETURNING ${COLUMNS}`,

  jobByIdempotencyKey: `SELECT ${COLUMNS} FROM jobs WHERE idempotency_key = $1`,

  /**
   * POST /jobs/batch: every new job of a batch in one statement ($1 a JSON array of rows),
   * queued and released so redrive may place them at once — or, for a row that carries a
   * claim (worker_id set: a lane was free when the batch came), inserted already running on
   * that lane. A key already taken (by an earlier job or an earlier row of this batch) is
   * skipped; its row is not returned.
   */
  insertBatch: `
    INSERT INTO jobs (id, kind, spec, status, hub_id, idempotency_key, created_at, released_at,
                      worker_id, lane, session_id, novnc_url, assigned_at, deadline_at, attempts)
    SELECT x.id, x.kind, x.spec, CASE WHEN x.worker_id IS NULL THEN 'queued' ELSE 'running' END, x.hub_id, x.idempotency_key,
           x.created_at, CASE WHEN x.worker_id IS NULL THEN x.created_at END, x.worker_id, x.lane, x.session_id, x.novnc_url,
           CASE WHEN x.worker_id IS NULL THEN NULL ELSE x.created_at END, x.deadline_at, CASE WHEN x.worker_id IS NULL THEN 0 ELSE 1 END
      FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, kind text, spec jsonb, hub_id text, idempotency_key text, created_at timestamptz,
                                              worker_id text, lane int, session_id text, novnc_url text, deadline_at timestamptz)
    ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
    RETURNING ${COLUMNS}`,

  /** The jobs holding any of these keys ($1 a JSON array of strings, made one text[] so the key's index is probed per key, as for IDS_OF_ARG1). */
  jobsByIdempotencyKeys: `SELECT ${COLUMNS} FROM jobs WHERE idempotency_key = ANY (ARRAY(SELECT jsonb_array_elements_text($1::jsonb)))`,
  forgetIdempotencyKey: `UPDATE jobs SET idempotency_key = NULL WHERE id = $1 AND (created_at <= $2) IS TRUE RETURNING id`,

  jobById: `SELECT ${COLUMNS} FROM jobs WHERE id = $1`,

  /** Newest first, one page: $1 status or null, $2/$3 the cursor (the last row seen) or nulls, $4 the page size. */
  listJobs: `
    SELECT ${SUMMARY_COLUMNS} FROM jobs
     WHERE ($1::text IS NULL OR status = $1::text)
       AND ($2::timestamptz IS NULL OR (created_at, id) < ($2::timestamptz, $3::uuid))
     ORDER BY created_at DESC, id DESC
     LIMIT $4`,

  /** Guards 1 and 2 of the seed: conditional UPDATE, and worker_id IS NULL. */
  claimQueuedJob: `
    UPDATE jobs
       SET status = 'running', worker_id = $2, hub_id = $3, lane = $4, session_id = $5,
           novnc_url = $6, assigned_at = $7, deadline_at = $8, attempts = attempts + 1
     WHERE id = $1 AND (status = 'queued' AND worker_id IS NULL) IS TRUE
    RETURNING ${COLUMNS}`,

  /**
   * Many queued jobs claimed in one statement ($1 a JSON array of {id, worker_id, hub_id, lane,
   * session_id, novnc_url, assigned_at, deadline_at}): the same guards as claimQueuedJob, and
   * rows another claimer holds locked are skipped, not waited for (two claimers never block
   * each other; neither can take a row the other claimed). Returns the rows it claimed.
   */
  claimQueuedJobs: `
    UPDATE jobs
       SET status = 'running', worker_id = c.worker_id, hub_id = c.hub_id, lane = c.lane, session_id = c.session_id,
           novnc_url = c.novnc_url, assigned_at = c.assigned_at, deadline_at = c.deadline_at, attempts = jobs.attempts + 1
      FROM jsonb_to_recordset($1::jsonb) AS c(id uuid, worker_id text, hub_id text, lane int, session_id text, novnc_url text, assigned_at timestamptz, deadline_at timestamptz)
     WHERE jobs.id = c.id
       AND jobs.id = ANY (ARRAY(SELECT q.id FROM jobs q
                                 WHERE q.id = ANY (${IDS_OF_ARG1})
                                   AND (q.status = 'queued' AND q.worker_id IS NULL) IS TRUE
                                 FOR UPDATE SKIP LOCKED))
    RETURNING ${PREFIXED_COLUMNS}`,

  /** The send failed or the worker refused: back to queued, released so redrive may retry at once. */
  unclaimJob: `
    UPDATE jobs
       SET status = 'queued', worker_id = NULL, lane = NULL, session_id = NULL, novnc_url = NULL,
           assigned_at = NULL, deadline_at = NULL, released_at = $3
     WHERE id = $1 AND (status = 'running' AND session_id = $2) IS TRUE
    RETURNING id`,

  /**
   * Only the worker the job was sent to, for the run it was sent for, can finish it. A success
   * of that very run also overrides the reconciler's guess that the run was lost (`worker …
   * lost: …`, or `timeout` past the deadline and the grace, domain/reconcile.ts): the worker's
   * own report is the fact, the guess was made because its report was late (a worker re-linking
   * while every hub restarted). Nothing else ran the job meanwhile: a guessed failure is final,
   * never queued again. Failures the worker reported, and cancels, stay as they are.
   */
  finishJob: `
    UPDATE jobs
       -- A guess overturned keeps its finished_at: the run had ended by then (it ended before
       -- its report could arrive), and the job has been terminal since.
       SET status = $3, result = $4::jsonb, error = $5, finished_at = CASE WHEN status = 'failed' THEN finished_at ELSE $6 END
     WHERE id = $1
       AND (session_id = $2 AND worker_id = $7
            AND (status = 'running'
                 OR (status = 'failed' AND $3 = 'succeeded' AND (error = 'timeout' OR error LIKE 'worker % lost: %')))) IS TRUE
    RETURNING ${COLUMNS}`,

  /**
   * finishJob for many results at once ($1 a JSON array of {id, session_id, worker_id, status,
   * result, error, finished_at}; at most one per job): each row under finishJob's own
   * condition, so a row that fails it (canceled meanwhile, another run) is left out of
   * RETURNING and the others are written.
   */
  finishJobs: `
    UPDATE jobs
       SET status = f.status, result = f.result, error = f.error,
           finished_at = CASE WHEN jobs.status = 'failed' THEN jobs.finished_at ELSE f.finished_at END
      FROM jsonb_to_recordset($1::jsonb) AS f(id uuid, session_id text, worker_id text, status text, result jsonb, error text, finished_at timestamptz)
     WHERE jobs.id = ANY (${IDS_OF_ARG1}) AND jobs.id = f.id
       AND (jobs.session_id = f.session_id AND jobs.worker_id = f.worker_id
            AND (jobs.status = 'running'
                 OR (jobs.status = 'failed' AND f.status = 'succeeded' AND (jobs.error = 'timeout' OR jobs.error LIKE 'worker % lost: %')))) IS TRUE
    RETURNING ${PREFIXED_COLUMNS}`,

  unclaimJobOfWorker: `
    UPDATE jobs
       SET status = 'queued', worker_id = NULL, lane = NULL, session_id = NULL, novnc_url = NULL,
           assigned_at = NULL, deadline_at = NULL, released_at = $3
     WHERE id = $1 AND (status = 'running' AND session_id = $2 AND worker_id = $4) IS TRUE
    RETURNING id`,

  cancelJob: `
    UPDATE jobs
       SET status = 'canceled', error = COALESCE(error, 'canceled by request'), finished_at = $2
     WHERE id = $1 AND (status IN ('queued', 'running')) IS TRUE
    RETURNING ${COLUMNS}`,

  failQueuedJob: `
    UPDATE jobs SET status = 'failed', error = $2, finished_at = $3
     WHERE id = $1 AND (status = 'queued' AND worker_id IS NULL) IS TRUE
    RETURNING ${COLUMNS}`,

  failRunningJob: `
    UPDATE jobs SET status = 'failed', error = $2, finished_at = $3
     WHERE id = $1 AND (status = 'running' AND session_id IS NOT DISTINCT FROM $4::text) IS TRUE
    RETURNING ${COLUMNS}`,

  markReleased: `UPDATE jobs SET released_at = $2 WHERE id = $1 AND (status = 'queued' AND released_at IS NULL) IS TRUE`,

  listQueued: `SELECT ${COLUMNS} FROM jobs WHERE status = 'queued' AND worker_id IS NULL ORDER BY created_at ASC LIMIT $1`,

  listRunning: `SELECT ${COLUMNS} FROM jobs WHERE status = 'running' ORDER BY assigned_at ASC LIMIT $1`,

  /** What the database says a worker runs, assigned before a moment (its hello). */
  listRunningOfWorker: `SELECT ${COLUMNS} FROM jobs WHERE status = 'running' AND worker_id = $1 AND assigned_at < $2 ORDER BY assigned_at ASC`,

  countByStatus: `SELECT status, count(*)::int AS n FROM jobs GROUP BY status`,

  countQueued: `SELECT count(*)::int AS n FROM jobs WHERE status = 'queued'`,

  throughput: `
    SELECT date_trunc('minute', finished_at) AS minute,
           count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded,
           count(*) FILTER (WHERE status = 'failed')::int AS failed
      FROM jobs
     WHERE finished_at >= $1
     GROUP BY 1 ORDER BY 1`,

  getWorkerStatus: `SELECT status FROM worker_settings WHERE worker_id = $1`,

  setWorkerStatus: `
    INSERT INTO worker_settings (worker_id, status, updated_at, updated_by) VALUES ($1, $2, $3, $4)
    ON CONFLICT (worker_id) DO UPDATE SET status = EXCLUDED.status, updated_at = EXCLUDED.updated_at, updated_by = EXCLUDED.updated_by`,

  deleteWorkerSettings: `DELETE FROM worker_settings WHERE worker_id = $1 RETURNING status`,

  insertAudit: `INSERT INTO audit_log (at, actor, action, target, details) VALUES ($1, $2, $3, $4, $5::jsonb)`,

  listAudit: `SELECT at, actor, action, target, details FROM audit_log ORDER BY id DESC LIMIT $1`,
} as const;
