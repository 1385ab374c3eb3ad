// pickWorker's choice without the scan: the same filters, the same order (least in flight, then
// most lanes), uniformly at random among ties, from buckets kept up to date as workers beat,
// take work and give it back. A pick costs O(log k) for k distinct (in_flight, max_concurrent)
// pairs (a handful), whatever the fleet's size; the scan it replaces is O(n).
import { excludedBy, runsKind, type PickConfig, type SchedulableWorker } from './pick-worker.ts';
import type { Random } from '../wire/random.ts';

interface Bucket<W> {
  readonly inFlight: number;
  readonly max: number;
  readonly members: W[];
}

/** Sort order of buckets: the scheduler's (in_flight ascending, then max_concurrent descending). */
function before(a: { inFlight: number; max: number }, b: { inFlight: number; max: number }): boolean {
  return a.inFlight < b.inFlight || (a.inFlight === b.inFlight && a.max > b.max);
}

export class PickIndex<W extends SchedulableWorker> {
  /** By in_flight * 4096 + max_concurrent (max_concurrent is at most 256). */
  private readonly buckets = new Map<number, Bucket<W>>();
  /** Non-empty buckets, best first. */
  private readonly order: Bucket<W>[] = [];
  /** Where each indexed worker sits: its bucket and its position in the bucket's members. */
  private readonly where = new Map<string, { bucket: Bucket<W>; at: number }>();
  /** The scheduler's config with a nowMs set per question (no allocation per pick). */
  private readonly probe: { diskMaxPct: number; workerTtlMs: number; nowMs: number };

  /**
   * `cfg` without `nowMs`: every filter but liveness is decided when a worker is filed; liveness
   * (a heartbeat within the TTL) at pick time, since it changes with the clock alone.
   */
  constructor(cfg: Omit<PickConfig, 'nowMs'>) {
    this.probe = { diskMaxPct: cfg.diskMaxPct, workerTtlMs: cfg.workerTtlMs, nowMs: 0 };
  }

  get size(): number {
    return this.where.size;
  }

  private excluded(w: W, nowMs: number) {
    this.probe.nowMs = nowMs;
    return excludedBy(w, this.probe);
  }

  /**
   * File the worker under its current values (after a heartbeat, an assignment or a release).
   * A worker the scheduler would exclude for anything but age leaves the index until its values change.
   */
  update(w: W): void {
    const pos = this.where.get(w.worker_id);
    // Liveness is the pick's business: asked at nowMs = last_seen, age never excludes here.
    if (this.excluded(w, w.last_seen_ms) !== undefined) {
      if (pos) this.remove(w.worker_id);
      return;
    }
    const key = w.in_flight * 4096 + w.max_concurrent;
    let bucket = this.buckets.get(key);
    if (!bucket) {
      bucket = { inFlight: w.in_flight, max: w.max_concurrent, members: [] };
      this.buckets.set(key, bucket);
    }
    if (pos && pos.bucket === bucket) {
      bucket.members[pos.at] = w; // same place; the object may be a new one
      return;
    }
    if (pos) this.takeOut(pos);
    if (bucket.members.length === 0) this.insertOrdered(bucket);
    if (pos) {
      pos.bucket = bucket;
      pos.at = bucket.members.length;
    } else this.where.set(w.worker_id, { bucket, at: bucket.members.length });
    bucket.members.push(w);
  }

  remove(workerId: string): void {
    const pos = this.where.get(workerId);
    if (!pos) return;
    this.where.delete(workerId);
    this.takeOut(pos);
  }

  /** Swap-remove from its bucket: O(1), order inside a bucket does not matter. */
  private takeOut(pos: { bucket: Bucket<W>; at: number }): void {
    const { members } = pos.bucket;
    const last = members.pop()!;
    if (pos.at < members.length) {
      members[pos.at] = last;
      this.where.get(last.worker_id)!.at = pos.at;
    }
    if (members.length === 0) this.order.splice(this.order.indexOf(pos.bucket), 1);
  }

  /**
   * pickWorker's answer: a uniformly random one of the best candidates alive at `nowMs`, not in
   * `skip`. Workers found past their TTL leave the index (their next heartbeat files them again).
   */
  pick(nowMs: number, rng: Random, skip?: ReadonlySet<string>, kind?: string): W | undefined {
    // Skipped ids and workers that do not run `kind` (the sixth filter) are passed over alike.
    const passOver = skip || kind !== undefined ? (w: W) => Boolean(skip?.has(w.worker_id)) || (kind !== undefined && !runsKind(w, kind)) : undefined;
    for (let b = 0; b < this.order.length; ) {
      const bucket = this.order[b];
      const chosen = this.pickIn(bucket, nowMs, rng, passOver);
      if (chosen) return chosen;
      // The bucket emptied (every member expired) and left `order`, or it holds only skipped ones.
      if (this.order[b] === bucket) b++;
    }
    return undefined;
  }

  /**
   * What a drawn member is now: eligible, expired (leaves the index) or filed under stale values
   * (a change nobody reported; it is filed again where it belongs).
   */
  private check(bucket: Bucket<W>, w: W, nowMs: number): 'ok' | 'expired' | 'stale' {
    const why = this.excluded(w, nowMs);
    if (why === 'not_alive') return 'expired';
    return why === undefined && w.in_flight === bucket.inFlight && w.max_concurrent === bucket.max ? 'ok' : 'stale';
  }

  /** Draw until an eligible member comes up; drawing a skipped one switches to a uniform draw among the eligible. */
  private pickIn(bucket: Bucket<W>, nowMs: number, rng: Random, passOver: ((w: W) => boolean) | undefined): W | undefined {
    const { members } = bucket;
    while (members.length > 0) {
      const w = members[Math.min(members.length - 1, Math.floor(rng.next() * members.length))];
      const state = this.check(bucket, w, nowMs);
      if (state === 'expired') this.remove(w.worker_id);
      else if (state === 'stale') this.update(w);
      else if (!passOver?.(w)) return w;
      else {
        const eligible: W[] = [];
        for (const m of [...members]) {
          const s = this.check(bucket, m, nowMs);
          if (s === 'expired') this.remove(m.worker_id);
          else if (s === 'stale') this.update(m);
          else if (!passOver!(m)) eligible.push(m);
        }
        return eligible.length > 0 ? eligible[Math.min(eligible.length - 1, Math.floor(rng.next() * eligible.length))] : undefined;
      }
    }
    return undefined;
  }

  private insertOrdered(bucket: Bucket<W>): void {
    let lo = 0;
    let hi = this.order.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (before(this.order[mid], bucket)) lo = mid + 1;
      else hi = mid;
    }
    this.order.splice(lo, 0, bucket);
  }
}
