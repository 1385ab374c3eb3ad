// Results written together: every result that arrives within one event-loop turn (or while
// the previous writes are still in flight) goes to the database in one statement, and each
// caller learns its own row only once that statement committed — the ack to the worker still
// follows the durable write. A lone result is written with the single-row statement.
// A batch the database refuses (one row's data, say) is written again row by row, so one bad
// result never costs the others theirs; a database that is down fails every caller (their
// workers send the results again).
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
    private readonly opts: ResultWritesOptions = { maxBatch: 256, maxInFlight: 2 },
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
    const batch: Pending[] = [];
    for (const p of this.pending.values()) {
      if (batch.length >= this.opts.maxBatch) break;
      batch.push(p);
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
      if (!answeredByServer(err)) {
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

/** A SQLSTATE from the server: it read the statement and refused it (not a lost connection). */
function answeredByServer(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}
