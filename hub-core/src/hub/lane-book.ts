// Who holds which local lane, and who waits for one. Reserving picks a worker and holds one
// of its lanes in the same synchronous step (no other pick can race it); releasing a lane
// wakes the oldest waiter by itself, and capacity no waiter takes is announced as 'spare'
// (the redrive loop listens). Callers never pair a release with a wake-up by hand.
import { EventEmitter } from 'node:events';
import type { Clock } from '../ports/clock.ts';
import type { WorkKind } from '../wire/work-kinds.ts';
import type { LocalLinks } from './local-links.ts';
import type { LaneHold, WorkerLink } from './worker-link.ts';

export interface LaneReservation {
  link: WorkerLink;
  lane: number;
}

interface Waiter {
  finish: (woken: boolean) => void;
}

export class LaneBook extends EventEmitter<{ spare: [] }> {
  private readonly waiters: Waiter[] = [];
  /**
   * A lane of `link` was held or freed: its worker's row changed (in_flight, lanes). The hub
   * publishes it, so other hubs see the lane busy now, not at the next heartbeat (up to 15 s:
   * their consoles showed a busy worker idle, and their placement counted its lane free).
   */
  onLaneChange: ((link: WorkerLink) => void) | undefined;

  constructor(
    private readonly localLinks: LocalLinks,
    private readonly clock: Clock,
  ) {
    super();
  }

  /**
   * Pick a worker whose lanes run `work` (unset: any) and hold one of its lanes; undefined
   * when no such lane is free. `skip`: workers this caller already tried.
   */
  reserve(hold: LaneHold, skip?: ReadonlySet<string>, work?: WorkKind): LaneReservation | undefined {
    const link = this.localLinks.pick(skip, work);
    if (!link) return undefined;
    const lane = link.holdLane(hold);
    if (lane === undefined) return undefined;
    this.onLaneChange?.(link);
    return { link, lane };
  }

  /** Whether any local lane of any kind is free now (a batch stops asking once none is). */
  hasFreeLane(): boolean {
    return this.localLinks.freeLanes() > 0;
  }

  /** Mark a lane held by work the worker already runs (it re-linked holding it). */
  adopt(link: WorkerLink, lane: number, hold: LaneHold): boolean {
    const held = link.adoptLane(lane, hold);
    if (held) this.onLaneChange?.(link);
    return held;
  }

  /**
   * Free the lane `id` (a job or session) holds on `link`, and hand it on. False when it held none.
   * `assignmentId`: only the hold of that assignment. Two paths of one hub can hold a lane each
   * for the same job on the same worker (a POST's inline claim and the redrive loop); the one
   * that lost the claim must free its own lane, not the winner's, or the winner's result frees
   * nothing and a lane stays held with nothing running on it.
   */
  release(link: WorkerLink, id: string, assignmentId?: string): boolean {
    if (link.freeLane(id, assignmentId) === undefined) return false;
    this.onLaneChange?.(link);
    this.offer(1);
    return true;
  }

  /**
   * Capacity appeared without a release (a worker linked, became active, reported its disk):
   * wake waiters oldest first, one per lane; what no waiter takes is 'spare'.
   */
  offer(count: number): void {
    let left = count;
    while (left > 0 && this.waiters.length > 0) {
      this.waiters.shift()!.finish(true);
      left--;
    }
    if (left > 0) this.emit('spare');
  }

  /** Wait until a lane may have freed (true), or `ms` passed or the signal aborted (false). */
  waitForLane(ms: number, signal?: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve(false);
      const onAbort = () => finish(false);
      const cancel = this.clock.setTimer(ms, () => finish(false));
      const waiter: Waiter = { finish: (woken) => finish(woken) };
      const finish = (woken: boolean) => {
        cancel();
        signal?.removeEventListener('abort', onAbort);
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        resolve(woken);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Wake every waiter (a stopping hub: inline POSTs release their jobs now). */
  wakeAll(): void {
    for (const w of [...this.waiters]) w.finish(true);
  }

  get waiting(): number {
    return this.waiters.length;
  }
}
