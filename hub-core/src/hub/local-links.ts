// The workers whose WebSocket this hub holds (the seed's `connections`) and the pick among
// them. Who holds which lane and who waits for one is the lane book's (lane-book.ts).
import type { Config } from '../config.ts';
import { freeLanes, pickWorker, type SchedulableWorker } from '../domain/pick-worker.ts';
import type { WorkKind } from '../wire/work-kinds.ts';
import type { Clock } from '../ports/clock.ts';
import type { Random } from '../wire/random.ts';
import type { WorkerLink } from './worker-link.ts';

export class LocalLinks {
  private readonly links = new Map<string, WorkerLink>();
  private list: WorkerLink[] = [];

  constructor(
    private readonly config: Config,
    private readonly clock: Clock,
    private readonly random: Random,
  ) {}

  get(workerId: string): WorkerLink | undefined {
    return this.links.get(workerId);
  }

  all(): readonly WorkerLink[] {
    return this.list;
  }

  get size(): number {
    return this.list.length;
  }

  /** Makes `link` the current one for its worker; returns the one it replaced. */
  add(link: WorkerLink): WorkerLink | undefined {
    const previous = this.links.get(link.worker_id);
    this.links.set(link.worker_id, link);
    this.list = [...this.links.values()];
    return previous;
  }

  /** Removes the link only if it is still the current one for its id (a re-link may have replaced it). */
  remove(link: WorkerLink): boolean {
    if (this.links.get(link.worker_id) !== link) return false;
    this.links.delete(link.worker_id);
    this.list = [...this.links.values()];
    return true;
  }

  private pickConfig(kind?: WorkKind) {
    return { diskMaxPct: this.config.diskMaxPct, workerTtlMs: this.config.workerTtlS * 1000, nowMs: this.clock.now(), kind };
  }

  /**
   * The scheduler decides on frozen snapshots of the links (WorkerLink.schedulable()), never
   * on the live objects. `skip`: worker ids this caller already tried (a session that one of
   * them refused); `kind`: the work to place (unset: any).
   */
  pick(skip?: ReadonlySet<string>, kind?: WorkKind): WorkerLink | undefined {
    const views: SchedulableWorker[] = [];
    for (const l of this.list) if (!skip?.has(l.worker_id)) views.push(l.schedulable());
    const chosen = pickWorker(views, this.pickConfig(kind), this.random);
    return chosen && this.links.get(chosen.worker_id);
  }

  /** Free lanes for `kind` of work (unset: any work). */
  freeLanes(kind?: WorkKind): number {
    return freeLanes(this.list.map((l) => l.schedulable()), this.pickConfig(kind));
  }
}
