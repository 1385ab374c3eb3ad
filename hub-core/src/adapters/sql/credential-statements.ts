// The worker_credentials statements (migration 003), each in one named place.
const COLUMNS = 'worker_id, secret_hash, lan_ip, hostname, created_at, last_linked_at';

export const CREDENTIAL_SQL = {
  /** Two registrations racing for one new id: the loser inserts nothing and gets a 409. */
  insert: `
    INSERT INTO worker_credentials (worker_id, secret_hash, lan_ip, hostname, created_at)
    VALUES ($1, $2, $3, $4, $5)
    ON CONFLICT (worker_id) DO NOTHING
    RETURNING worker_id`,

  byId: `SELECT ${COLUMNS} FROM worker_credentials WHERE worker_id = $1`,

  markLinked: `UPDATE worker_credentials SET last_linked_at = $2 WHERE worker_id = $1`,

  delete: `DELETE FROM worker_credentials WHERE worker_id = $1 RETURNING ${COLUMNS}`,

  /** Conditional on never having linked: an enrollment that links meanwhile is kept. */
  deleteUnlinkedBefore: `
    DELETE FROM worker_credentials
     WHERE worker_id IN (SELECT worker_id FROM worker_credentials
                          WHERE last_linked_at IS NULL AND created_at < $1
                          ORDER BY created_at LIMIT $2)
       AND last_linked_at IS NULL
    RETURNING ${COLUMNS}`,
} as const;
