// Results written together: every result that arrives within one event-loop turn (or while
// the previous writes are still in flight) goes to the database in one statement, and each
// caller learns its own row only once that statement committed — the ack to the worker still
// follows the durable write. A lone result is written with the single-row statement.
// A batch the database refuses (one row's data, say) is written again row by row, so one bad
// result never costs the others theirs; a database that is down fails every caller (their
// workers send the results again). A statement holds at most maxBatch rows and about maxBytes
// of results.
import { databaseUnavailable } from '../ports/database-errors.ts';
import type { Finish, JobRow } from '../ports/job-store.ts';

/** The two statements, as the ledger runs them (it is the one caller of state-changing store methods). */
export interface ResultStatements {
  one(id: string, finish: Finish): Promise<JobRow | undefined>;
  many(finishes: Array<{ id: string; finish: Finish }>): Promise<JobRow[]>;
}

interface Pending {
  id: string;
  finish: Finish;
  resolve: (row: JobRow | undefined) => void;
  reject: (err: unknown) => void;
}

export interface ResultWritesOptions {
  /** Rows per statement at most. */
  maxBatch: number;
  /** Result bytes per statement at most (roughly: the text in it); a result larger on its own goes alone. */
  maxBytes: number;
  /** Statements in flight at once; more results wait and go in the next one. */
  maxInFlight: number;
}

export class ResultWrites {
  private pending = new Map<string, Pending>();
  /** A second result for a job already pending waits for the first one's write. */
  private later: Pending[] = [];
  private scheduled = false;
  private inFlight = 0;

  constructor(
    private readonly store: ResultStatements,
    private readonly opts: ResultWritesOptions = { maxBatch: 256, maxBytes: 8 * 1024 * 1024, maxInFlight: 2 },
  ) {}

  /** The job's row once finished, or undefined when its condition failed (stale, repeated, canceled meanwhile). */
  write(id: string, finish: Finish): Promise<JobRow | undefined> {
    return new Promise((resolve, reject) => {
      const p = { id, finish, resolve, reject };
      if (this.pending.has(id)) this.later.push(p);
      else this.pending.set(id, p);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.opts.maxInFlight || this.pending.size === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    // Bounded in rows and in bytes: 256 results of a few MB each would make one string of
    // hundreds of MB (past V8's and Postgres's limits) and hold the hub's memory meanwhile.
    const batch: Pending[] = [];
    let bytes = 0;
    for (const p of this.pending.values()) {
      if (batch.length >= this.opts.maxBatch) break;
      const size = roughBytes(p.finish.result, this.opts.maxBytes) + (p.finish.error?.length ?? 0);
      if (batch.length > 0 && bytes + size > this.opts.maxBytes) break;
      batch.push(p);
      bytes += size;
    }
    for (const p of batch) this.pending.delete(p.id);
    // Repeats whose first result is now in this batch wait for the next one.
    const waiting = this.later;
    this.later = [];
    for (const p of waiting) {
      if (this.pending.has(p.id)) this.later.push(p);
      else this.pending.set(p.id, p);
    }
    this.inFlight++;
    try {
      await this.writeBatch(batch);
    } finally {
      this.inFlight--;
      this.schedule();
    }
  }

  private async writeBatch(batch: Pending[]): Promise<void> {
    if (batch.length === 1) return this.writeOne(batch[0]);
    let rows: JobRow[];
    try {
      rows = await this.store.many(batch.map((p) => ({ id: p.id, finish: p.finish })));
    } catch (err) {
      // A lost connection fails them all (their workers send them again); anything else (the
      // server refused the statement, or the client could not build it) is tried row by row,
      // so one result never costs the others theirs.
      if (databaseUnavailable(err)) {
        for (const p of batch) p.reject(err);
        return;
      }
      await Promise.all(batch.map((p) => this.writeOne(p)));
      return;
    }
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const p of batch) p.resolve(byId.get(p.id));
  }

  private async writeOne(p: Pending): Promise<void> {
    try {
      p.resolve(await this.store.one(p.id, p.finish));
    } catch (err) {
      p.reject(err);
    }
  }
}

/** The text a result will take, roughly (the sum of its strings and keys), counted up to `limit`. */
export function roughBytes(value: unknown, limit: number): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && total <= limit) {
    const v = stack.pop();
    if (typeof v === 'string') total += v.length + 2;
    else if (v === null || typeof v !== 'object') total += 8;
    else if (Array.isArray(v)) for (const x of v) stack.push(x);
    else
      for (const [k, x] of Object.entries(v)) {
        total += k.length + 3;
        stack.push(x);
      }
  }
  return total;
}
