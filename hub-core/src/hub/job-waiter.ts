// GET /jobs/:id?wait_s=: answer when the job ends, not when the client polls next. A job that
// ends on this hub wakes its waiters at once (the ledger's 'job' event); one that ends on
// another hub is announced through the registry (Redis pub/sub: every hub announces the jobs it
// saw end) and its waiters re-read the row; re-reading every PEER_CHECK_MS is the fallback for
// an announcement lost while Redis was away.
import { setMaxListeners } from 'node:events';
import type { Clock } from '../ports/clock.ts';
import type { JobRow, JobStore } from '../ports/job-store.ts';
import type { Registry } from '../ports/registry.ts';
import { TERMINAL_STATUSES } from '../wire/job-spec.ts';
import type { HubEvents } from './hub-events.ts';

/** How often a waiter re-reads its row for a completion written by another hub. */
const PEER_CHECK_MS = 1000;
/** Waiters per hub: each holds a request open; past this, answer at once (the client polls). */
const MAX_WAITERS = 10_000;

export class JobWaiter {
  private waiters = 0;
  /** Ends every wait: a stopping hub answers its long polls now, not at their wait_s. */
  private readonly stopping = new AbortController();
  /** One listener on the hub's events for every waiter: by job id. */
  private readonly byJob = new Map<string, Set<(row: JobRow) => void>>();

  constructor(
    private readonly store: Pick<JobStore, 'getJob'>,
    events: HubEvents,
    private readonly clock: Clock,
    peers?: Pick<Registry, 'onJobDone'>,
  ) {
    // Every waiter listens for the stop on it: up to MAX_WAITERS, not Node's warning at 11.
    setMaxListeners(MAX_WAITERS + 1, this.stopping.signal);
    events.on('job', (row: JobRow) => {
      if (!TERMINAL_STATUSES.has(row.status)) return;
      for (const wake of this.byJob.get(row.id) ?? []) wake(row);
    });
    peers?.onJobDone((id) => {
      const waiting = this.byJob.get(id);
      if (!waiting || waiting.size === 0) return;
      void this.store.getJob(id).then(
        (row) => {
          if (row && TERMINAL_STATUSES.has(row.status)) for (const wake of this.byJob.get(id) ?? []) wake(row);
        },
        () => {}, // the periodic re-read still finds it
      );
    });
  }

  /** Every wait answers now with the job as it is, and a new one answers at once (the hub stops). */
  stop(): void {
    this.stopping.abort();
  }

  /** The job once terminal, or as it is after `ms` (or when `signal` aborts); undefined if there is no such job. */
  async untilDone(id: string, ms: number, signal?: AbortSignal): Promise<JobRow | undefined> {
    const first = await this.store.getJob(id);
    if (!first || TERMINAL_STATUSES.has(first.status) || ms <= 0 || signal?.aborted || this.stopping.signal.aborted || this.waiters >= MAX_WAITERS) return first;
    this.waiters++;
    try {
      return await new Promise<JobRow>((resolve) => {
        let last = first;
        let done = false;
        const finish = (row: JobRow) => {
          if (done) return;
          done = true;
          cancelDeadline();
          cancelCheck();
          const set = this.byJob.get(id)!;
          set.delete(onJob);
          if (set.size === 0) this.byJob.delete(id);
          signal?.removeEventListener('abort', onAbort);
          this.stopping.signal.removeEventListener('abort', onAbort);
          resolve(row);
        };
        const onJob = (row: JobRow) => finish(row);
        const onAbort = () => finish(last);
        const check = () => {
          cancelCheck = this.clock.setTimer(PEER_CHECK_MS, () => {
            void this.store.getJob(id).then(
              (row) => {
                if (row) last = row;
                if (row && TERMINAL_STATUSES.has(row.status)) finish(row);
                else if (!done) check();
              },
              () => !done && check(),
            );
          });
        };
        let cancelCheck = () => {};
        const cancelDeadline = this.clock.setTimer(ms, () => finish(last));
        const set = this.byJob.get(id) ?? new Set();
        set.add(onJob);
        this.byJob.set(id, set);
        signal?.addEventListener('abort', onAbort, { once: true });
        this.stopping.signal.addEventListener('abort', onAbort, { once: true });
        check();
      });
    } finally {
      this.waiters--;
    }
  }
}
