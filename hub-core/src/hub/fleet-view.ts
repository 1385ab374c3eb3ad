// The fleet-wide view (the seed's stats_async()): this hub's own links, fresh, plus every
// other hub's workers from the registry, read with FLEET_TIMEOUT. When the read is slow or
// fails, the last good view serves for FLEET_CACHE, so a Redis hiccup never shrinks the
// fleet to "this hub only" (the 37 ↔ 30 ↔ 7 ↔ 0 flicker, and the mass failures behind it).
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Clock } from '../ports/clock.ts';
import type { Registry, WorkerSnapshot } from '../ports/registry.ts';
import type { LocalLinks } from './local-links.ts';

export interface FleetWorker extends WorkerSnapshot {
  alive: boolean;
  local: boolean;
}

export interface FleetView {
  workers: FleetWorker[];
  as_of: number;
  stale: boolean;
  /** Only this hub's links: the registry failed and no good view was recent enough. */
  partial: boolean;
}

export class FleetViewReader {
  private lastGood: { workers: WorkerSnapshot[]; at: number } | undefined;
  /**
   * The row made of each remote snapshot: the registry hands back the same snapshot object for
   * a worker that did not change, so its row (and the JSON the HTTP layer keeps per row) is
   * reused while it stays as alive as it was. Rows are shared: nobody may modify one.
   */
  private readonly rowOf = new WeakMap<WorkerSnapshot, FleetWorker>();
  private inflight: Promise<FleetView> | undefined;
  /** Each id's place in the last view: its order is reused while the fleet has the same ids. */
  private lastRank = new Map<string, number>();

  constructor(
    private readonly config: Config,
    private readonly registry: Registry,
    private readonly localLinks: LocalLinks,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  /** Concurrent callers share one registry read. */
  read(): Promise<FleetView> {
    this.inflight ??= this.readOnce().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  private async readOnce(): Promise<FleetView> {
    let remote: WorkerSnapshot[];
    let asOf = this.clock.now();
    let stale = false;
    let partial = false;
    try {
      remote = await this.registry.readFleet(this.config.fleetTimeoutMs);
      this.lastGood = { workers: remote, at: asOf };
    } catch (err) {
      const cached = this.lastGood;
      if (cached && asOf - cached.at <= this.config.fleetCacheS * 1000) {
        this.log.warn({ err: String(err), age_ms: asOf - cached.at }, 'fleet read failed; serving the last good view');
        remote = cached.workers;
        asOf = cached.at;
        stale = true;
      } else {
        this.log.warn({ err: String(err) }, 'fleet read failed and no recent good view; local links only');
        remote = [];
        stale = true;
        partial = true;
      }
    }
    return { workers: this.merge(remote, asOf), as_of: asOf, stale, partial };
  }

  /**
   * Local links win over what the registry says of them: they are the freshest source, except
   * a local link that is no longer alive while the registry has the worker alive on another hub
   * (it re-linked there, and this hub still holds the old socket): that row is the truth, or
   * this hub would show the worker offline and its reconciler fail the worker's running jobs.
   * Remote workers are judged alive as of when the registry was read (`remoteAsOf`), not now: a last
   * good view served during a Redis outage holds no news that could have arrived, so ageing its
   * heartbeats against the clock would shrink the fleet pause by pause — the collapse the cache
   * exists to prevent (the chaos run saw 19/20 with a 4 s TTL and a 2.5 s pause on a busy machine).
   */
  private merge(remote: WorkerSnapshot[], remoteAsOf: number): FleetWorker[] {
    const now = this.clock.now();
    const ttlMs = this.config.workerTtlS * 1000;
    const local = this.localLinks.all().map((l): FleetWorker => ({ ...l.snapshot(), alive: l.aliveAt(now, ttlMs), local: true }));
    const localAlive = local.length > 0 ? new Map(local.map((w) => [w.worker_id, w.alive])) : undefined;
    let movedAway: Set<string> | undefined;
    const rows: FleetWorker[] = [];
    for (const w of remote) {
      const alive = w.left_at_ms == null && remoteAsOf - w.last_seen_ms <= ttlMs;
      const here = localAlive?.get(w.worker_id);
      if (here !== undefined) {
        if (here || !alive || w.hub_id === this.config.hubId) continue;
        (movedAway ??= new Set()).add(w.worker_id);
      }
      let row = this.rowOf.get(w);
      if (row?.alive !== alive) this.rowOf.set(w, (row = { ...w, alive, local: false }));
      rows.push(row);
    }
    for (const w of local) if (!movedAway?.has(w.worker_id)) rows.push(w);
    return this.inOrder(rows);
  }

  /** By worker id. While the ids are those of the last view its order serves (sorting 10,000 ids with localeCompare cost more than the rest of the merge). */
  private inOrder(rows: FleetWorker[]): FleetWorker[] {
    const rank = this.lastRank;
    if (rank.size === rows.length) {
      const out: FleetWorker[] = new Array(rows.length);
      let placed = 0;
      for (const w of rows) {
        const at = rank.get(w.worker_id);
        if (at === undefined || out[at] !== undefined) break;
        out[at] = w;
        placed++;
      }
      if (placed === rows.length) return out;
    }
    rows.sort((a, b) => a.worker_id.localeCompare(b.worker_id));
    this.lastRank = new Map(rows.map((w, i) => [w.worker_id, i]));
    return rows;
  }
}
