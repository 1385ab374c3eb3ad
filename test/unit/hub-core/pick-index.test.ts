import { describe, expect, it } from 'vitest';
import { PickIndex } from '../../../hub-core/src/domain/pick-index.ts';
import { isCandidate, pickWorker, type SchedulableWorker } from '../../../hub-core/src/domain/pick-worker.ts';
import { seededRandom, type Random } from '../../../hub-core/src/wire/random.ts';

type W = { -readonly [K in keyof SchedulableWorker]: SchedulableWorker[K] };
const TTL = 120_000;
const DISK = 90;

/** A random worker: every filter of the scheduler fails now and then, loads and sizes vary. */
function randomWorker(r: Random, id: string, now: number): W {
  const max = 1 + Math.floor(r.next() * 4);
  const roll = () => r.next();
  return {
    worker_id: id,
    status: roll() < 0.1 ? (roll() < 0.5 ? 'drain' : 'standby') : 'active',
    in_flight: Math.floor(roll() * (max + 1)),
    max_concurrent: max,
    lane_novnc_urls: roll() < 0.05 ? [] : ['http://x/0'],
    novnc_url: null,
    disk_pct: roll() < 0.05 ? 95 : 30,
    ready: roll() < 0.05 ? false : undefined,
    last_seen_ms: now - Math.floor(roll() * TTL * 1.3),
  };
}

/** The scan's tied set: every candidate with the best (in_flight, -max_concurrent). */
function scanTies(fleet: readonly W[], now: number, skip: ReadonlySet<string> = new Set()): string[] {
  const cfg = { diskMaxPct: DISK, workerTtlMs: TTL, nowMs: now };
  const c = fleet.filter((w) => isCandidate(w, cfg) && !skip.has(w.worker_id));
  if (c.length === 0) return [];
  const best = pickWorker(c, cfg, seededRandom(1))!;
  return c.filter((w) => w.in_flight === best.in_flight && w.max_concurrent === best.max_concurrent).map((w) => w.worker_id).sort();
}

/** Every worker the index can answer with, found by drawing until no new one shows up for a long while. */
function indexTies(index: PickIndex<W>, now: number, r: Random, skip?: ReadonlySet<string>): string[] {
  const seen = new Set<string>();
  for (let i = 0, quiet = 0; quiet < 400 && i < 20_000; i++) {
    const w = index.pick(now, r, skip);
    if (!w) return [];
    if (seen.has(w.worker_id)) quiet++;
    else (seen.add(w.worker_id), (quiet = 0));
  }
  return [...seen].sort();
}

describe('PickIndex: the same choice as pickWorker', () => {
  it('answers from the same tied set as the scan on random fleets, through heartbeats, assignments, releases and expiries', () => {
    const r = seededRandom(42);
    for (let fleetNo = 0; fleetNo < 60; fleetNo++) {
      let now = 1_000_000;
      const size = 1 + Math.floor(r.next() * 40);
      const fleet = Array.from({ length: size }, (_, i) => randomWorker(r, `w${fleetNo}-${i}`, now));
      const index = new PickIndex<W>({ diskMaxPct: DISK, workerTtlMs: TTL });
      for (const w of fleet) index.update(w);
      for (let step = 0; step < 15; step++) {
        expect(indexTies(index, now, r)).toEqual(scanTies(fleet, now));
        // One change, reported as the hub reports it: a heartbeat, an assignment or a release, a goodbye.
        const w = fleet[Math.floor(r.next() * fleet.length)];
        const what = r.next();
        if (what < 0.3) Object.assign(w, randomWorker(r, w.worker_id, now));
        else if (what < 0.55 && w.in_flight < w.max_concurrent) w.in_flight++;
        else if (what < 0.8 && w.in_flight > 0) w.in_flight--;
        else if (what < 0.9) {
          fleet.splice(fleet.indexOf(w), 1);
          index.remove(w.worker_id);
          if (fleet.length === 0) break;
          continue;
        } else now += Math.floor(r.next() * 30_000); // time passes: some heartbeats expire
        index.update(w);
      }
    }
  });

  it('leaves out the skipped workers, falling to the next best when every tie is skipped', () => {
    const r = seededRandom(7);
    for (let n = 0; n < 40; n++) {
      const now = 1_000_000;
      const fleet = Array.from({ length: 2 + Math.floor(r.next() * 20) }, (_, i) => randomWorker(r, `s${n}-${i}`, now));
      const index = new PickIndex<W>({ diskMaxPct: DISK, workerTtlMs: TTL });
      for (const w of fleet) index.update(w);
      const skip = new Set(fleet.filter(() => r.next() < 0.4).map((w) => w.worker_id));
      const best = scanTies(fleet, now);
      for (const id of best) if (r.next() < 0.7) skip.add(id);
      expect(indexTies(index, now, r, skip)).toEqual(scanTies(fleet, now, skip));
    }
  });

  it('chooses uniformly among ties, as the scan does (chi-square over 12,000 picks)', () => {
    const now = 1_000_000;
    const r = seededRandom(3);
    const fleet: W[] = Array.from({ length: 300 }, (_, i) => ({ ...randomWorker(r, `u${i}`, now), status: 'active', in_flight: i % 3 === 0 ? 0 : 1, max_concurrent: 2, disk_pct: 10, ready: undefined, lane_novnc_urls: ['x'], last_seen_ms: i % 7 === 0 ? now - TTL - 1 : now }));
    const index = new PickIndex<W>({ diskMaxPct: DISK, workerTtlMs: TTL });
    for (const w of fleet) index.update(w);
    const ties = scanTies(fleet, now);
    const counts = { index: new Map<string, number>(), scan: new Map<string, number>() };
    const cfg = { diskMaxPct: DISK, workerTtlMs: TTL, nowMs: now };
    const picks = 12_000;
    const ri = seededRandom(11);
    const rs = seededRandom(12);
    for (let i = 0; i < picks; i++) {
      const a = index.pick(now, ri)!.worker_id;
      const b = pickWorker(fleet, cfg, rs)!.worker_id;
      counts.index.set(a, (counts.index.get(a) ?? 0) + 1);
      counts.scan.set(b, (counts.scan.get(b) ?? 0) + 1);
    }
    const chi2 = (m: Map<string, number>) => ties.reduce((s, id) => s + ((m.get(id) ?? 0) - picks / ties.length) ** 2 / (picks / ties.length), 0);
    expect([...counts.index.keys()].sort()).toEqual(ties);
    // ties.length - 1 degrees of freedom (84 here): the 99.9th percentile is about 130.
    expect(ties.length).toBe(85);
    expect(chi2(counts.index)).toBeLessThan(130);
    expect(chi2(counts.scan)).toBeLessThan(130);
  });

  it('files again a worker whose values changed without an update (never answers with a full worker)', () => {
    const now = 1_000_000;
    const a: W = { worker_id: 'a', status: 'active', in_flight: 0, max_concurrent: 1, lane_novnc_urls: ['x'], novnc_url: null, disk_pct: 1, last_seen_ms: now };
    const b: W = { ...a, worker_id: 'b', max_concurrent: 2, in_flight: 1 };
    const index = new PickIndex<W>({ diskMaxPct: DISK, workerTtlMs: TTL });
    index.update(a);
    index.update(b);
    a.in_flight = 1; // assigned, not reported
    expect(index.pick(now, seededRandom(1))?.worker_id).toBe('b');
    b.in_flight = 2;
    expect(index.pick(now, seededRandom(1))).toBeUndefined();
    expect(index.size).toBe(0);
  });

  it('passes over workers that do not run the kind asked for, as the scan does', () => {
    const r = seededRandom(5);
    for (let n = 0; n < 40; n++) {
      const now = 1_000_000;
      const fleet = Array.from({ length: 2 + Math.floor(r.next() * 20) }, (_, i) => ({ ...randomWorker(r, `k${n}-${i}`, now), kinds: r.next() < 0.5 ? ['sleep'] : r.next() < 0.5 ? null : ['fetch', 'macro'] }));
      const index = new PickIndex<W>({ diskMaxPct: DISK, workerTtlMs: TTL });
      for (const w of fleet) index.update(w);
      const cfg = { diskMaxPct: DISK, workerTtlMs: TTL, nowMs: now, kind: 'fetch' };
      const c = fleet.filter((w) => isCandidate(w, cfg));
      const best = pickWorker(c, cfg, seededRandom(1));
      const want = best ? c.filter((w) => w.in_flight === best.in_flight && w.max_concurrent === best.max_concurrent).map((w) => w.worker_id).sort() : [];
      const seen = new Set<string>();
      for (let i = 0; i < 2000; i++) {
        const w = index.pick(now, r, undefined, 'fetch');
        if (w) seen.add(w.worker_id);
      }
      expect([...seen].sort()).toEqual(want);
    }
  });
});
