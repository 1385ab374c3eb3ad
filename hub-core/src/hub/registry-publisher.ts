// Coalesced writes of this hub's workers to the shared registry (row, online TTL and owner key):
// every heartbeat marks its worker dirty, and one pipelined write per tick carries all of them
// (a fleet of 1,000 workers heartbeating every 15 s costs a few round trips a second, not 67).
import type { Logger } from 'pino';
import type { Clock } from '../ports/clock.ts';
import type { Registry } from '../ports/registry.ts';
import type { WorkerLink } from './worker-link.ts';

export class RegistryPublisher {
  private readonly dirty = new Map<string, WorkerLink>();
  private heard = new Set<string>();
  private cancelTimer: (() => void) | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly registry: Registry,
    private readonly log: Logger,
    private readonly clock: Clock,
    private readonly tickMs = 25,
  ) {}

  /** `heard`: a heartbeat was just received on this link (the worker is linked here now). */
  mark(link: WorkerLink, heard = false): void {
    if (this.stopped) return;
    this.dirty.set(link.worker_id, link);
    if (heard) this.heard.add(link.worker_id);
    this.cancelTimer ??= this.clock.setTimer(this.tickMs, () => void this.flush());
  }

  /** Writes everything marked so far; resolves when it is in the registry (or failed and logged). */
  flush(): Promise<void> {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    const batch = [...this.dirty.values()].map((l) => l.snapshot());
    const heard = this.heard;
    this.dirty.clear();
    this.heard = new Set();
    if (batch.length === 0) return this.flushing;
    this.flushing = this.flushing.then(() =>
      this.registry.publishWorkers(batch, heard).catch((err: unknown) => {
        this.log.warn({ err: String(err), workers: batch.length }, 'registry publish failed; next heartbeat retries');
      }),
    );
    return this.flushing;
  }

  async stop(): Promise<void> {
    await this.flush();
    this.stopped = true;
  }
}
