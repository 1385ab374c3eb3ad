// Who watches which lane on the wall: each watcher (a console's socket, a peer hub's) names a
// set of tiles, replaced whole by its next `watch`. Pure bookkeeping: the relay asks it which
// watchers a frame goes to and which lanes a worker must thumbnail (the union over watchers),
// and learns from each change which workers' unions moved (those get a new `thumbs`).
export interface Tile {
  worker_id: string;
  lane: number;
}

export interface WatchChange {
  /** Tiles this watcher did not watch before (it gets their cached frame at once). */
  added: Tile[];
  /** Workers whose union of watched lanes changed. */
  workers: Set<string>;
}

export class WallWatches<W> {
  private readonly byWatcher = new Map<W, Map<string, Set<number>>>();
  private readonly byTile = new Map<string, Map<number, Set<W>>>();

  /** Replace `watcher`'s tiles with `tiles` (duplicates collapse). */
  set(watcher: W, tiles: readonly Tile[]): WatchChange {
    const next = new Map<string, Set<number>>();
    for (const t of tiles) {
      let lanes = next.get(t.worker_id);
      if (!lanes) next.set(t.worker_id, (lanes = new Set()));
      lanes.add(t.lane);
    }
    const prev = this.byWatcher.get(watcher) ?? new Map<string, Set<number>>();
    const change: WatchChange = { added: [], workers: new Set() };
    for (const [worker, lanes] of prev) {
      for (const lane of lanes) if (!next.get(worker)?.has(lane) && this.unwatch(watcher, worker, lane)) change.workers.add(worker);
    }
    for (const [worker, lanes] of next) {
      for (const lane of lanes) {
        if (prev.get(worker)?.has(lane)) continue;
        change.added.push({ worker_id: worker, lane });
        if (this.watch(watcher, worker, lane)) change.workers.add(worker);
      }
    }
    if (next.size > 0) this.byWatcher.set(watcher, next);
    else this.byWatcher.delete(watcher);
    return change;
  }

  /** The watcher left: as set(watcher, []). */
  remove(watcher: W): WatchChange {
    return this.set(watcher, []);
  }

  /** The lanes of `worker` someone watches, ascending. */
  lanesOf(worker: string): number[] {
    return [...(this.byTile.get(worker)?.keys() ?? [])].sort((a, b) => a - b);
  }

  watchersOf(worker: string, lane: number): ReadonlySet<W> {
    return this.byTile.get(worker)?.get(lane) ?? EMPTY;
  }

  /** Every worker with at least one watched lane. */
  workers(): IterableIterator<string> {
    return this.byTile.keys();
  }

  get watcherCount(): number {
    return this.byWatcher.size;
  }

  /** True when the lane had no watcher before. */
  private watch(watcher: W, worker: string, lane: number): boolean {
    let lanes = this.byTile.get(worker);
    if (!lanes) this.byTile.set(worker, (lanes = new Map()));
    let ws = lanes.get(lane);
    const first = !ws;
    if (!ws) lanes.set(lane, (ws = new Set()));
    ws.add(watcher);
    return first;
  }

  /** True when the lane has no watcher left. */
  private unwatch(watcher: W, worker: string, lane: number): boolean {
    const lanes = this.byTile.get(worker);
    const ws = lanes?.get(lane);
    if (!lanes || !ws) return false;
    ws.delete(watcher);
    if (ws.size > 0) return false;
    lanes.delete(lane);
    if (lanes.size === 0) this.byTile.delete(worker);
    return true;
  }
}

const EMPTY: ReadonlySet<never> = new Set();
