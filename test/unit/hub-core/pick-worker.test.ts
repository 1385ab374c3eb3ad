import { describe, expect, it } from 'vitest';
import { excludedBy, freeLanes, isCandidate, pickWorker, summariseCapacity, takesWork, type SchedulableWorker } from '../../../hub-core/src/domain/pick-worker.ts';
import { seededRandom } from '../../../hub-core/src/wire/random.ts';

const NOW = 1_000_000;
const cfg = { diskMaxPct: 90, workerTtlMs: 120_000, nowMs: NOW };
const w = (id: string, over: Partial<SchedulableWorker> = {}): SchedulableWorker => ({
  worker_id: id,
  status: 'active',
  in_flight: 0,
  max_concurrent: 2,
  lane_novnc_urls: ['http://x/lanes/0', 'http://x/lanes/1'],
  novnc_url: null,
  disk_pct: 10,
  last_seen_ms: NOW - 1000,
  ...over,
});
const rng = seededRandom(1);

describe('pickWorker filters', () => {
  it.each([
    ['heartbeat older than the TTL', { last_seen_ms: NOW - 120_001 }],
    ['status drain', { status: 'drain' }],
    ['status standby', { status: 'standby' }],
    ['every lane busy', { in_flight: 2 }],
    ['no lane URL and no novnc_url', { lane_novnc_urls: [], novnc_url: null }],
    ['disk at the limit', { disk_pct: 90 }],
    ['disk above the limit', { disk_pct: 95.5 }],
    ['a link not ready (disk not reported yet, or superseded)', { ready: false }],
  ])('skips a worker with %s', (_name, over) => {
    expect(pickWorker([w('a', over)], cfg, rng)).toBeUndefined();
    expect(pickWorker([w('a', over), w('b')], cfg, rng)?.worker_id).toBe('b');
  });

  it('keeps a worker whose heartbeat is exactly TTL old, and a single-Chrome worker with only novnc_url', () => {
    expect(pickWorker([w('a', { last_seen_ms: NOW - 120_000 })], cfg, rng)?.worker_id).toBe('a');
    expect(pickWorker([w('a', { lane_novnc_urls: [], novnc_url: 'http://x/vnc', max_concurrent: 1 })], cfg, rng)?.worker_id).toBe('a');
  });

  it('returns undefined for an empty fleet', () => {
    expect(pickWorker([], cfg, rng)).toBeUndefined();
  });
});

describe('pickWorker by kind (the sixth filter)', () => {
  const sim = w('sim', { kinds: ['sleep', 'session'] });
  const chrome = w('chrome', { kinds: ['fetch', 'macro', 'sleep', 'session'], in_flight: 1 });

  it.each([
    ['fetch', 'chrome'],
    ['macro', 'chrome'],
    ['cdp', undefined],
  ])('a %s goes only to a worker that runs it: %s', (kind, expected) => {
    for (let i = 0; i < 20; i++) expect(pickWorker([sim, chrome], { ...cfg, kind }, seededRandom(i))?.worker_id).toBe(expected);
  });

  it('sleep and sessions still prefer the least loaded among the workers that run them', () => {
    expect(pickWorker([sim, chrome], { ...cfg, kind: 'sleep' }, rng)?.worker_id).toBe('sim');
    expect(pickWorker([sim, chrome], { ...cfg, kind: 'session' }, rng)?.worker_id).toBe('sim');
  });

  it('names the reason, after the other filters; a worker that declared no kinds runs any; no kind asked filters nothing', () => {
    expect(excludedBy(sim, { ...cfg, kind: 'fetch' })).toBe('kind_not_supported');
    expect(excludedBy(w('x', { kinds: ['sleep'], status: 'drain' }), { ...cfg, kind: 'fetch' })).toBe('drain');
    expect(excludedBy(w('old'), { ...cfg, kind: 'fetch' })).toBeUndefined();
    expect(excludedBy(w('old', { kinds: null }), { ...cfg, kind: 'cdp' })).toBeUndefined();
    expect(excludedBy(sim, cfg)).toBeUndefined();
    expect(freeLanes([sim, chrome], { ...cfg, kind: 'fetch' })).toBe(1);
    expect(freeLanes([sim, chrome], cfg)).toBe(3);
    expect(summariseCapacity([sim, chrome], cfg)).toMatchObject({ capacity: 4, accepting: 2, excluded: {} });
  });
});

describe('pickWorker order', () => {
  it('prefers the fewest jobs in flight, then the most lanes', () => {
    const fleet = [w('busy', { in_flight: 1, max_concurrent: 8 }), w('small', { max_concurrent: 2 }), w('big', { max_concurrent: 4 })];
    for (let i = 0; i < 50; i++) expect(pickWorker(fleet, cfg, seededRandom(i))?.worker_id).toBe('big');
  });

  it('in_flight before capacity: 0/2 beats 1/8', () => {
    expect(pickWorker([w('a', { in_flight: 1, max_concurrent: 8 }), w('b', { max_concurrent: 2 })], cfg, rng)?.worker_id).toBe('b');
  });

  it('breaks ties uniformly at random: 10,000 picks over 10 idle workers give each 10 % ± 1.5 %', () => {
    const fleet = Array.from({ length: 10 }, (_, i) => w(`w${i}`));
    const counts = new Map<string, number>();
    const r = seededRandom(42);
    for (let i = 0; i < 10_000; i++) {
      const id = pickWorker(fleet, cfg, r)!.worker_id;
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    expect(counts.size).toBe(10);
    for (const n of counts.values()) {
      expect(n / 10_000).toBeGreaterThanOrEqual(0.085);
      expect(n / 10_000).toBeLessThanOrEqual(0.115);
    }
  });

  it('only ties take part in the draw: a worker outside the best key is never picked', () => {
    const fleet = [w('a'), w('b', { in_flight: 1 }), w('c')];
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) seen.add(pickWorker(fleet, cfg, seededRandom(i))!.worker_id);
    expect([...seen].sort()).toEqual(['a', 'c']);
  });

  it('counts free lanes over candidates only', () => {
    expect(freeLanes([w('a', { in_flight: 1 }), w('b', { status: 'drain' }), w('c', { max_concurrent: 4 })], cfg)).toBe(1 + 4);
  });
});

describe('excludedBy: the filter that rules a worker out, in the scheduler\'s order', () => {
  it.each([
    ['heartbeat older than the TTL', { last_seen_ms: NOW - 120_001, status: 'drain' }, 'not_alive'],
    ['drained', { status: 'drain', disk_pct: 99 }, 'drain'],
    ['standby', { status: 'standby' }, 'standby'],
    ['an unknown status', { status: 'paused' }, 'inactive'],
    ['every lane busy', { in_flight: 2, disk_pct: 99 }, 'full'],
    ['no view URL', { lane_novnc_urls: [], novnc_url: null }, 'no_view_url'],
    ['not ready', { ready: false, disk_pct: 99 }, 'not_ready'],
    ['disk at the limit', { disk_pct: 90 }, 'disk_full'],
    ['nothing', {}, undefined],
  ])('%s → %s', (_name, over, why) => {
    expect(excludedBy(w('a', over as Partial<SchedulableWorker>), cfg)).toBe(why);
    expect(isCandidate(w('a', over as Partial<SchedulableWorker>), cfg)).toBe(why === undefined);
    expect(takesWork(w('a', over as Partial<SchedulableWorker>), cfg)).toBe(why === undefined || why === 'full');
  });

  it('agrees with pickWorker on random fleets: it picks only workers excludedBy passes', () => {
    const r = seededRandom(7);
    for (let round = 0; round < 200; round++) {
      const fleet = Array.from({ length: 8 }, (_, i) =>
        w(`w${i}`, {
          status: r.next() < 0.2 ? 'drain' : 'active',
          in_flight: Math.floor(r.next() * 3),
          disk_pct: r.next() < 0.2 ? 95 : 10,
          last_seen_ms: NOW - (r.next() < 0.2 ? 200_000 : 1000),
          ready: r.next() < 0.1 ? false : undefined,
        }),
      );
      const picked = pickWorker(fleet, cfg, r);
      const candidates = fleet.filter((x) => excludedBy(x, cfg) === undefined);
      if (candidates.length === 0) expect(picked).toBeUndefined();
      else expect(candidates).toContain(picked);
    }
  });
});

describe('summariseCapacity', () => {
  it('counts the lanes of workers that take work (busy ones too), and why the others do not', () => {
    const fleet = [
      w('ok', { in_flight: 1, max_concurrent: 4 }),
      w('busy', { in_flight: 2, max_concurrent: 2 }),
      w('drained', { status: 'drain', max_concurrent: 8 }),
      w('standby', { status: 'standby', max_concurrent: 8 }),
      w('full-disk', { disk_pct: 95, max_concurrent: 8 }),
      w('dead', { last_seen_ms: NOW - 500_000, max_concurrent: 8 }),
    ];
    expect(summariseCapacity(fleet, cfg)).toEqual({ capacity: 6, in_flight: 3, accepting: 2, excluded: { drain: 1, standby: 1, disk_full: 1, not_alive: 1 } });
  });

  it('an all-drained fleet has no capacity and says so', () => {
    expect(summariseCapacity([w('a', { status: 'drain' }), w('b', { status: 'drain' })], cfg)).toEqual({ capacity: 0, in_flight: 0, accepting: 0, excluded: { drain: 2 } });
  });
});
