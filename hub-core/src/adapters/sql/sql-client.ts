// The one thing the job store needs from a database: parameterised queries and transactions.
// Implemented by `pg` (DATABASE_URL) and by PGlite (the embedded default).
export interface SqlTx {
  query<R = Record<string, unknown>>(text: string, params?: unknown[]): Promise<R[]>;
  /** A script of several statements without parameters (a migration file). */
  exec(sql: string): Promise<void>;
}

export interface SqlClient {
  /** `name` makes it a prepared statement on Postgres (parsed once per connection): the hot path uses it. */
  query<R = Record<string, unknown>>(text: string, params?: unknown[], name?: string): Promise<R[]>;
  transaction<T>(fn: (tx: SqlTx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  readonly kind: 'postgres' | 'pglite';
}
