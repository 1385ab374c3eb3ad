// The lane wall's relay (README § Live view): consoles (GET /admin/wall) and peer hubs
// (GET /internal/wall) say which tiles they watch; each local worker is told to thumbnail the
// union of its watched lanes (`thumbs`, replace-set; `[]` once nobody watches), and its `thumb`
// frames go to every watcher of the tile. Workers linked to another hub are watched through one
// upstream socket per peer hub. Only the latest frame of a watched tile is kept; a watcher whose
// socket is behind misses frames rather than receiving old ones.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { WallWatches, type Tile } from '../domain/wall-watches.ts';
import type { Clock } from '../ports/clock.ts';
import type { Registry } from '../ports/registry.ts';
import type { WorkerMessage } from '../wire/protocol.ts';
import type { Random } from '../wire/random.ts';
import type { WallThumbJson } from '../wire/wall.ts';
import type { HubEvents } from './hub-events.ts';
import type { LocalLinks } from './local-links.ts';
import { WallUpstream } from './wall-upstream.ts';
import type { WorkerLink } from './worker-link.ts';

/** One frame per tile per this long (what `thumbs` asks of workers). */
export const WALL_INTERVAL_MS = 1000;
/** Local links are re-checked this long after a change (a heartbeat storm is one pass). */
const LOCAL_SYNC_MS = 100;
/** Owners of watched remote workers are looked up again this often (a worker that moved is followed). */
const REMOTE_SYNC_MS = 2000;

export interface WallWatcher {
  /** One serialised WallServerMessage (serialised once for every watcher of a tile). */
  send(text: string): void;
  /** True while its socket is behind: a thumb for it is dropped. */
  congested(): boolean;
  /** A peer hub: served this hub's own links only (one hop). */
  readonly localOnly: boolean;
}

export interface WallRelayDeps {
  config: Pick<Config, 'hubId' | 'peerToken' | 'forwardTimeoutS' | 'hubTtlS'>;
  localLinks: Pick<LocalLinks, 'get'>;
  registry: Pick<Registry, 'getOwner' | 'listHubs'>;
  events: Pick<HubEvents, 'on' | 'off'>;
  clock: Clock;
  random: Random;
  log: Logger;
  intervalMs?: number;
}

type ThumbMsg = Extract<WorkerMessage, { type: 'thumb' }>;
interface Latest {
  thumb: WallThumbJson;
  fromPeer: boolean;
  relayedAt: number;
  held?: { thumb: WallThumbJson; fromPeer: boolean };
  cancelHeld?: () => void;
}
const tileKey = (worker: string, lane: number) => `${worker}\u0000${lane}`;

export class WallRelay {
  readonly intervalMs: number;
  private readonly watches = new WallWatches<WallWatcher>();
  /**
   * The latest relayed thumb of each watched tile, when, and whether it came from a peer (never
   * served to another peer: one hop). A frame arriving sooner than half an interval after the
   * last waits in `held` and goes out when the half interval ends: the last frame of a page that
   * went still (or its `idle`) is never the one dropped.
   */
  private readonly latest = new Map<string, Latest>();
  /** Links asked for a non-empty set: told `[]` when nobody watches their lanes any more. */
  private readonly asked = new Set<WorkerLink>();
  private readonly upstreams = new Map<string, WallUpstream>();
  private localTimer: (() => void) | undefined;
  private remoteTimer: (() => void) | undefined;
  private remoteRunning = false;
  private remoteAgain = false;
  private stopped = false;
  private readonly onWorkers = () => this.scheduleLocal();

  constructor(private readonly d: WallRelayDeps) {
    this.intervalMs = d.intervalMs ?? WALL_INTERVAL_MS;
  }

  /** A watcher's new tile set (replace-set); it gets the cached frame of each newly watched tile. */
  watch(watcher: WallWatcher, tiles: readonly Tile[]): void {
    if (this.stopped) return;
    if (this.watches.watcherCount === 0) this.d.events.on('workers', this.onWorkers);
    const change = this.watches.set(watcher, tiles);
    for (const t of change.added) {
      const cached = this.latest.get(tileKey(t.worker_id, t.lane));
      if (cached && !(cached.fromPeer && watcher.localOnly) && !watcher.congested()) watcher.send(JSON.stringify(cached.thumb));
    }
    this.afterChange(change.workers);
  }

  leave(watcher: WallWatcher): void {
    const change = this.watches.remove(watcher);
    this.afterChange(change.workers);
  }

  /** A `thumb` from a local link: relayed if this link was asked for that lane, else dropped. */
  onLinkThumb(link: WorkerLink, msg: ThumbMsg): void {
    const why = link.superseded || this.d.localLinks.get(link.worker_id) !== link ? 'not the current link' : msg.lane >= link.max_concurrent ? 'no such lane' : !link.thumbsAsked.includes(msg.lane) ? 'lane not asked for' : undefined;
    if (why) return void this.d.log.debug({ worker_id: link.worker_id, lane: msg.lane, why }, 'thumb dropped');
    this.publish({ type: 'thumb', worker_id: link.worker_id, lane: msg.lane, at: msg.at, ...(msg.jpeg !== undefined ? { jpeg: msg.jpeg } : {}), ...(msg.idle ? { idle: true } : {}) }, false);
  }

  /** Watched tiles right now (tests, metrics). */
  get tileCount(): number {
    let n = 0;
    for (const w of this.watches.workers()) n += this.watches.lanesOf(w).length;
    return n;
  }

  stop(): void {
    this.stopped = true;
    this.d.events.off('workers', this.onWorkers);
    this.localTimer?.();
    this.remoteTimer?.();
    for (const up of this.upstreams.values()) up.close();
    this.upstreams.clear();
    for (const l of this.latest.values()) l.cancelHeld?.();
    this.latest.clear();
  }

  private publish(t: WallThumbJson, fromPeer: boolean): void {
    const watchers = this.watches.watchersOf(t.worker_id, t.lane);
    if (watchers.size === 0) return;
    const key = tileKey(t.worker_id, t.lane);
    const now = this.d.clock.now();
    const prev = this.latest.get(key);
    // A worker that sends faster than asked does not set the pace (half an interval of slack for
    // jitter): the early frame waits, replacing any frame that waited before it, and goes out
    // when the half interval ends.
    // An `idle` (the lane's page is gone) never waits: it replaces whatever waited before it.
    const wait = prev ? prev.relayedAt + this.intervalMs / 2 - now : 0;
    if (prev && wait > 0 && !t.idle) {
      prev.held = { thumb: t, fromPeer };
      prev.cancelHeld ??= this.d.clock.setTimer(wait, () => {
        prev.cancelHeld = undefined;
        const held = prev.held;
        prev.held = undefined;
        if (held && this.latest.get(key) === prev && !this.stopped) this.publish(held.thumb, held.fromPeer);
      });
      return;
    }
    prev?.cancelHeld?.();
    this.latest.set(key, { thumb: t, fromPeer, relayedAt: now });
    const text = JSON.stringify(t);
    for (const w of watchers) {
      if (fromPeer && w.localOnly) continue; // one hop: a peer's frames are not served to peers
      if (!w.congested()) w.send(text);
    }
  }

  private afterChange(workers: Set<string>): void {
    // A tile nobody watches any more keeps no frame.
    for (const key of this.latest.keys()) {
      const [worker, lane] = key.split('\u0000') as [string, string];
      if (workers.has(worker) && this.watches.watchersOf(worker, Number(lane)).size === 0) {
        this.latest.get(key)?.cancelHeld?.();
        this.latest.delete(key);
      }
    }
    if (this.watches.watcherCount === 0) this.d.events.off('workers', this.onWorkers);
    this.syncLocal();
    this.syncRemote();
  }

  private scheduleLocal(): void {
    if (this.localTimer || this.stopped) return;
    this.localTimer = this.d.clock.setTimer(LOCAL_SYNC_MS, () => {
      this.localTimer = undefined;
      this.syncLocal();
    });
  }

  /** Every local link asked exactly for the watched lanes it has. */
  private syncLocal(): void {
    for (const worker of this.watches.workers()) {
      const link = this.d.localLinks.get(worker);
      if (!link || !link.open || link.superseded) continue;
      const lanes = this.watches.lanesOf(worker).filter((l) => l < link.max_concurrent);
      this.ask(link, lanes);
    }
    for (const link of [...this.asked]) {
      if (!link.open || this.d.localLinks.get(link.worker_id) !== link) this.asked.delete(link);
      else if (this.watches.lanesOf(link.worker_id).length === 0) this.ask(link, []);
    }
  }

  private ask(link: WorkerLink, lanes: number[]): void {
    const before = link.thumbsAsked;
    if (before.length === lanes.length && before.every((l, i) => l === lanes[i])) return;
    if (lanes.length > 0) this.asked.add(link);
    else this.asked.delete(link);
    void link.thumbs(lanes, this.intervalMs);
  }

  /** Upstream sockets follow the owners of watched remote workers; re-run every REMOTE_SYNC_MS while anyone watches. */
  private syncRemote(): void {
    if (this.stopped) return;
    if (this.remoteRunning) {
      this.remoteAgain = true;
      return;
    }
    this.remoteRunning = true;
    this.remoteTimer?.();
    this.remoteTimer = undefined;
    void this.resolveRemote()
      .catch((err: unknown) => this.d.log.warn({ err: String(err) }, 'wall owner lookup failed'))
      .finally(() => {
        this.remoteRunning = false;
        if (this.stopped) return;
        if (this.remoteAgain) {
          this.remoteAgain = false;
          return this.syncRemote();
        }
        if (this.watches.watcherCount > 0) this.remoteTimer = this.d.clock.setTimer(REMOTE_SYNC_MS, () => this.syncRemote());
      });
  }

  private async resolveRemote(): Promise<void> {
    const wanted = new Map<string, number[]>(); // remote candidates: watched by a console of this hub
    for (const worker of this.watches.workers()) {
      if (this.d.localLinks.get(worker)) continue;
      const lanes = this.watches.lanesOf(worker).filter((l) => [...this.watches.watchersOf(worker, l)].some((w) => !w.localOnly));
      if (lanes.length > 0) wanted.set(worker, lanes);
    }
    const byHub = new Map<string, Tile[]>();
    if (wanted.size > 0) {
      const [owners, hubs] = await Promise.all([Promise.all([...wanted.keys()].map((w) => this.d.registry.getOwner(w).catch(() => undefined))), this.d.registry.listHubs(this.d.clock.now(), this.d.config.hubTtlS)]);
      const urlOf = new Map(hubs.filter((h) => h.alive && h.url).map((h) => [h.hub_id, h.url]));
      [...wanted].forEach(([worker, lanes], i) => {
        const owner = owners[i];
        const url = owner && owner !== this.d.config.hubId ? urlOf.get(owner) : undefined;
        if (!url) return;
        const tiles = byHub.get(url) ?? [];
        for (const lane of lanes) tiles.push({ worker_id: worker, lane });
        byHub.set(url, tiles);
      });
    }
    if (this.stopped) return;
    for (const [url, up] of this.upstreams) {
      if (byHub.has(url)) continue;
      up.close();
      this.upstreams.delete(url);
    }
    for (const [url, tiles] of byHub) {
      let up = this.upstreams.get(url);
      if (!up) this.upstreams.set(url, (up = new WallUpstream(url, this.d, (t) => this.publish(t, true))));
      up.setTiles(tiles);
    }
  }
}
