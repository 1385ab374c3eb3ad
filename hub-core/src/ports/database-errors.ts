// One answer, for every caller, to "did this statement fail because the database could not be
// reached?": the HTTP layer answers 503 (retry later) instead of 500, and the result writer
// fails a whole batch (its workers send the results again) instead of retrying row by row.
// Both Postgres (pg) and PGlite reject with these.

/**
 * The database could not be reached, went away, or is not ready: a socket error (ECONNREFUSED,
 * ECONNRESET, ETIMEDOUT, EPIPE…), a connection-exception SQLSTATE (class 08), a server shutting
 * down or starting (57P01–57P03), a database that does not exist (3D000) or is not in a state to
 * answer (55000), or the driver's own words for these (connection terminated, pool connect or
 * read timeout, not queryable). Not a refusal of this statement or its data (class 22, 23, 54…).
 */
export function databaseUnavailable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && (/^E[A-Z]{3,}$/.test(code) || code.startsWith('08') || /^57P0[1-3]$/.test(code) || code === '3D000' || code === '55000')) return true;
  const message = err instanceof Error ? err.message : String(err);
  return /connection terminated|connection.*(closed|ended)|not queryable|terminating connection|ECONNREFUSED|ECONNRESET|timeout exceeded when trying to connect|query read timeout|not currently accepting connections|the database system is/i.test(message);
}
