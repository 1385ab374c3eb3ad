// The workers whose WebSocket this hub holds (the seed's `connections`), the pick among
// them, and the wake-ups when a lane frees: inline POSTs waiting for a lane first, then the
// redrive loop.
import { EventEmitter } from 'node:events';
import type { Config } from '../config.ts';
import { freeLanes, pickWorker } from '../domain/pick-worker.ts';
import type { Clock } from '../ports/clock.ts';
import type { Random } from '../wire/random.ts';
import type { WorkerLink } from './worker-link.ts';

interface Waiter {
  resolve: (woken: boolean) => void;
}

export class LocalFleet extends EventEmitter {
  private readonly links = new Map<string, WorkerLink>();
  private list: WorkerLink[] = [];
  private readonly waiters: Waiter[] = [];

  constructor(
    private readonly config: Config,
    private readonly clock: Clock,
    private readonly random: Random,
  ) {
    super();
  }

  get(workerId: string): WorkerLink | undefined {
    return this.links.get(workerId);
  }

  all(): readonly WorkerLink[] {
    return this.list;
  }

  get size(): number {
    return this.list.length;
  }

  add(link: WorkerLink): WorkerLink | undefined {
    const previous = this.links.get(link.worker_id);
    this.links.set(link.worker_id, link);
    this.list = [...this.links.values()];
    this.emit('changed');
    this.laneFreed(link.max_concurrent - link.in_flight);
    return previous;
  }

  /** Removes the link only if it is still the current one for its id (a re-link may have replaced it). */
  remove(link: WorkerLink): boolean {
    if (this.links.get(link.worker_id) !== link) return false;
    this.links.delete(link.worker_id);
    this.list = [...this.links.values()];
    this.emit('changed');
    return true;
  }

  private pickConfig() {
    return { diskMaxPct: this.config.diskMaxPct, workerTtlMs: this.config.workerTtlS * 1000, nowMs: this.clock.now() };
  }

  /** `skip`: worker ids this caller already tried (a session that one of them refused). */
  pick(skip?: ReadonlySet<string>): WorkerLink | undefined {
    const list = skip?.size ? this.list.filter((l) => !skip.has(l.worker_id)) : this.list;
    return pickWorker(list, this.pickConfig(), this.random);
  }

  freeLanes(): number {
    return freeLanes(this.list, this.pickConfig());
  }

  capacity(): { in_flight: number; capacity: number } {
    let inFlight = 0;
    let capacity = 0;
    for (const l of this.list) {
      inFlight += l.in_flight;
      capacity += l.max_concurrent;
    }
    return { in_flight: inFlight, capacity };
  }

  /**
   * Wait until a lane may have freed (true) or `ms` passed (false). Waiters are woken oldest
   * first, one per freed lane; what capacity no waiter takes wakes the redrive loop.
   */
  waitForLane(ms: number, signal?: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      const waiter: Waiter = { resolve: () => {} };
      const timer = setTimeout(() => finish(false), Math.max(0, ms));
      const onAbort = () => finish(false);
      signal?.addEventListener('abort', onAbort, { once: true });
      const finish = (woken: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        resolve(woken);
      };
      waiter.resolve = finish;
      this.waiters.push(waiter);
    });
  }

  /** A lane freed, a worker linked or became active: hand the capacity to whoever waits. */
  laneFreed(count = 1): void {
    let left = count;
    while (left > 0 && this.waiters.length > 0) {
      this.waiters.shift()!.resolve(true);
      left--;
    }
    if (left > 0) this.emit('lane-free');
  }

  get waiting(): number {
    return this.waiters.length;
  }
}
