// The fleet read, kept incremental: this hub holds every worker's compact row and asks Redis
// only for the rows changed since its last read (readFleetChanges.lua: one round trip, an
// empty answer when nothing changed). At 10,000 workers the whole-hash read cost Redis and
// this process several times a whole `GET /admin/workers`; now a read costs what changed.
// A row that did not change keeps its snapshot object, so the fleet view and the HTTP layer
// can keep what they derived from it (fleet-view.ts, http/workers-page.ts).
import type { Redis } from 'ioredis';
import type { Clock } from '../../ports/clock.ts';
import type { WorkerSnapshot } from '../../ports/registry.ts';

/** Every this long a read takes all rows anyway: it bounds what a write that bypassed the change log (a hub of an older version) or a lost mark can hide. */
export const FULL_FLEET_READ_EVERY_MS = 30_000;

/**
 * How long a forgotten worker's entry stays in the change log (forgetWorker.lua). Every reader
 * reads all rows at least every FULL_FLEET_READ_EVERY_MS, so a reader that has not seen the
 * entry by then reads everything anyway; a reader whose cursor is older still is sent every row
 * (the log's floor), so dropping the entry never leaves a ghost.
 */
export const FORGOTTEN_LOG_MS = 4 * FULL_FLEET_READ_EVERY_MS;

export interface FleetKeys {
  workersIndex: string;
  workersRows: string;
  workersEpoch: string;
  workersSeq: string;
  workersChanges: string;
  workersFloor: string;
  worker: (id: string) => string;
}

export type FleetScripts = Redis & {
  readFleetChanges(epoch: string, seq: string, changes: string, rows: string, index: string, floor: string, readerEpoch: string, cursor: string): Promise<[string | null, number, number, 'all', string[]] | [string, number, number, 'changed', string[], Array<string | null>]>;
};

interface Row {
  raw: string;
  snap: WorkerSnapshot;
}

/** A row as publishWorkers wrote it; undefined when it does not parse (then it is read from its hash). */
function rowToSnapshot(id: string, row: string): WorkerSnapshot | undefined {
  try {
    const w = JSON.parse(row) as WorkerSnapshot;
    return typeof w === 'object' && w !== null && w.worker_id === id && typeof w.last_seen_ms === 'number' ? w : undefined;
  } catch {
    return undefined;
  }
}

function hashToSnapshot(id: string, h: Record<string, string>): WorkerSnapshot | undefined {
  if (!h.last_seen) return undefined; // registered, never linked
  const parse = <T>(s: string | undefined, fallback: T): T => {
    try {
      return s ? (JSON.parse(s) as T) : fallback;
    } catch {
      return fallback;
    }
  };
  return {
    worker_id: id,
    hub_id: h.hub_id ?? '',
    lan_ip: h.lan_ip ?? '',
    hostname: h.hostname ?? '',
    status: h.status ?? 'active',
    in_flight: Number(h.in_flight ?? 0),
    max_concurrent: Number(h.max_concurrent ?? 0),
    lane_novnc_urls: parse(h.lane_novnc_urls, [] as string[]),
    novnc_url: h.novnc_url || null,
    disk_pct: Number(h.disk_pct ?? 0),
    cpu_pct: Number(h.cpu_pct ?? 0),
    mem_pct: Number(h.mem_pct ?? 0),
    last_seen_ms: Number(h.last_seen),
    version: h.version ?? '',
    platform: h.platform ?? '',
    lanes: parse(h.lanes, []),
    kinds: parse<string[] | null>(h.kinds, null),
    left_at_ms: h.left_at ? Number(h.left_at) : null,
  };
}

export class RedisFleetReader {
  private readonly rows = new Map<string, Row>();
  /** '' : none yet, the next read takes all rows. */
  private epoch = '';
  private cursor = 0;
  private allReadAt = -Infinity;
  private pending: Promise<WorkerSnapshot[]> | undefined;

  constructor(
    private readonly redis: FleetScripts,
    private readonly k: FleetKeys,
    private readonly forgetS: number,
    private readonly clock: Clock,
    /** The lazy clean-up of a worker whose hash expired (forgetWorker.lua with onlyIfExpired). */
    private readonly forgetIfExpired: (id: string) => Promise<unknown>,
  ) {}

  /**
   * Every worker in the index. Callers while a read is out share it: a read that outlived its
   * caller's deadline (a stalled Redis) is joined, not doubled, and applies its answer whole.
   */
  read(): Promise<WorkerSnapshot[]> {
    this.pending ??= this.readNow().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  private async readNow(): Promise<WorkerSnapshot[]> {
    const startedAt = this.clock.now();
    const readAll = startedAt - this.allReadAt >= FULL_FLEET_READ_EVERY_MS;
    const k = this.k;
    const answer = await this.redis.readFleetChanges(k.workersEpoch, k.workersSeq, k.workersChanges, k.workersRows, k.workersIndex, k.workersFloor, readAll ? '' : this.epoch, String(this.cursor));
    const [epoch, seq, count] = answer;
    if (answer[3] === 'all') {
      const flat = answer[4];
      const seen = new Set<string>();
      for (let i = 0; i + 1 < flat.length; i += 2) {
        seen.add(flat[i]);
        this.apply(flat[i], flat[i + 1]);
      }
      for (const id of this.rows.keys()) if (!seen.has(id)) this.rows.delete(id);
      this.allReadAt = startedAt;
    } else {
      const [, , , , ids, raws] = answer;
      for (let i = 0; i < ids.length; i++) this.apply(ids[i], raws[i] ?? null);
    }
    this.epoch = epoch ?? '';
    this.cursor = seq;
    return this.collect(count);
  }

  /** A row unchanged since the last read keeps its snapshot object; one that does not parse is left to the hash read. */
  private apply(id: string, raw: string | null): void {
    if (raw === null) {
      this.rows.delete(id);
      return;
    }
    if (this.rows.get(id)?.raw === raw) return;
    const snap = rowToSnapshot(id, raw);
    if (snap) this.rows.set(id, { raw, snap });
    else this.rows.delete(id);
  }

  private async collect(indexSize: number): Promise<WorkerSnapshot[]> {
    const out: WorkerSnapshot[] = [];
    const aged = new Set<string>();
    const forgetBefore = this.clock.now() - this.forgetS * 1000;
    for (const [id, { snap }] of this.rows) {
      // A row outlives its hash (WORKER_FORGET_S expires keys, not hash fields): past that age,
      // forget the worker if its hash is gone (which drops the row too); the hash, if any, speaks.
      if (snap.last_seen_ms < forgetBefore) {
        aged.add(id);
        void this.forgetIfExpired(id).catch(() => {});
        continue;
      }
      out.push(snap);
    }
    if (out.length >= indexSize) return out;
    // Workers published without a row (by a hub of an older version, during a rolling upgrade)
    // or with one that does not parse are read from their hashes.
    const missing = (await this.redis.smembers(this.k.workersIndex)).filter((id) => aged.has(id) || !this.rows.has(id));
    return [...out, ...(await this.readHashes(missing))];
  }

  private async readHashes(ids: string[]): Promise<WorkerSnapshot[]> {
    if (ids.length === 0) return [];
    const p = this.redis.pipeline();
    for (const id of ids) p.hgetall(this.k.worker(id));
    const results = (await p.exec()) ?? [];
    const out: WorkerSnapshot[] = [];
    for (let i = 0; i < ids.length; i++) {
      const [err, h] = results[i] ?? [null, null];
      if (err || !h) continue;
      // Hashes that expired (WORKER_FORGET_S) leave their id in the index: drop it, in the background.
      if (Object.keys(h).length === 0) void this.forgetIfExpired(ids[i]).catch(() => {});
      const snap = hashToSnapshot(ids[i], h as Record<string, string>);
      if (snap) out.push(snap);
    }
    return out;
  }
}
