// The job_assets statements (migration 005), each in one named place.
export const ASSET_SQL = {
  /** A result sent again (after a lost ack) stores the same asset again: the last write wins. */
  put: `
    INSERT INTO job_assets (job_id, name, content_type, data, size_bytes, created_at)
    VALUES ($1, $2, $3, $4, $5, $6)
    ON CONFLICT (job_id, name) DO UPDATE
      SET content_type = EXCLUDED.content_type, data = EXCLUDED.data, size_bytes = EXCLUDED.size_bytes, created_at = EXCLUDED.created_at`,

  get: `SELECT content_type, data FROM job_assets WHERE job_id = $1 AND name = $2`,

  list: `SELECT name FROM job_assets WHERE job_id = $1 ORDER BY name`,

  /** In batches, oldest first: one pass never holds a long lock on a big table. */
  deleteStoredBefore: `
    DELETE FROM job_assets
     WHERE (job_id, name) IN (SELECT job_id, name FROM job_assets WHERE created_at < $1 ORDER BY created_at LIMIT $2)
    RETURNING job_id`,
} as const;
