// The charts' statements: bucketing happens here, in the database, not in the hub or the UI.
export const HISTORY_SQL = {
  record: `INSERT INTO fleet_samples (at, hub_id, queued, oldest_queued_s, in_flight, capacity) VALUES ($1, $2, $3, $4, $5, $6)`,

  prune: `DELETE FROM fleet_samples WHERE at < $1 RETURNING 1`,

  /** $1 window start, $2 bucket width in seconds, $3 number of buckets: every bucket, empty ones too. */
  buckets: `
    WITH b AS (SELECT generate_series(0, $3::int - 1) AS i),
    s AS (
      SELECT floor(extract(epoch FROM (at - $1::timestamptz)) / $2::int)::int AS i,
             max(queued)::int AS queued, max(oldest_queued_s)::float8 AS oldest_queued_s,
             avg(in_flight)::float8 AS in_flight, avg(capacity)::float8 AS capacity
        FROM fleet_samples
       WHERE at >= $1::timestamptz AND at < $1::timestamptz + make_interval(secs => $2::int * $3::int)
       GROUP BY 1),
    j AS (
      SELECT floor(extract(epoch FROM (finished_at - $1::timestamptz)) / $2::int)::int AS i,
             count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded,
             count(*) FILTER (WHERE status = 'failed')::int AS failed
        FROM jobs
       WHERE finished_at >= $1::timestamptz AND finished_at < $1::timestamptz + make_interval(secs => $2::int * $3::int)
       GROUP BY 1)
    SELECT $1::timestamptz + make_interval(secs => b.i * $2::int) AS t,
           COALESCE(j.succeeded, 0) AS succeeded, COALESCE(j.failed, 0) AS failed,
           s.queued, s.oldest_queued_s, s.in_flight, s.capacity
      FROM b LEFT JOIN s ON s.i = b.i LEFT JOIN j ON j.i = b.i
     ORDER BY b.i`,

  queuedByKind: `
    SELECT kind, count(*)::int AS queued, min(created_at) AS oldest_created_at
      FROM jobs WHERE status = 'queued' AND worker_id IS NULL
     GROUP BY kind ORDER BY 2 DESC, 1`,

  oldestQueued: `SELECT id, kind, created_at FROM jobs WHERE status = 'queued' AND worker_id IS NULL ORDER BY created_at ASC, id ASC LIMIT 1`,
} as const;
