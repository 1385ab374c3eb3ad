// The one thing the job store needs from a database: parameterised queries and transactions.
// Implemented by `pg` (DATABASE_URL) and by PGlite (the embedded default).
export interface SqlTx {
  query<R = Record<string, unknown>>(text: string, params?: unknown[]): Promise<R[]>;
  /** A script of several statements without parameters (a migration file). */
  exec(sql: string): Promise<void>;
}

export interface SqlClient {
  /**
   * `name` makes it a prepared statement on Postgres (parsed once per connection, and from its
   * sixth run on, a plan kept): the statements on one id use it. Leave it out (PLANNED_PER_RUN)
   * where the best plan depends on the table's size or the arguments.
   */
  query<R = Record<string, unknown>>(text: string, params?: unknown[], name?: string): Promise<R[]>;
  transaction<T>(fn: (tx: SqlTx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  readonly kind: 'postgres' | 'pglite';
}

/**
 * No name: parsed and planned at every run, for its arguments and the table as it is. A named
 * statement's generic plan, once Postgres keeps it (from the sixth run), is replaced only when
 * autovacuum next ANALYZEs the table; one made while `jobs` was nearly empty (a new deployment,
 * the first minute of a bulk submit) scanned or sorted the whole table at every run: the batch
 * claim and result write cost Postgres ~3x the CPU a job on a submit of 10,000, a GET /jobs
 * page 43 ms at 200,000 jobs (1.1 ms planned), a worker's job list 27 ms at 100,000 of its jobs
 * (1.2 ms) (test/integration/job-store-plans.test.ts). The statements on one id keep their
 * name: their plan is the primary key whatever the table held, and planning each run cost the
 * one-job dispatch path ~4 %.
 */
export const PLANNED_PER_RUN = undefined;
