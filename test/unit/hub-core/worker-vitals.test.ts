// The console's sparkline history per worker: oldest first, to a tenth of a percent, a missing
// figure as null, at most VITALS_POINTS points, dead workers not sampled, and a worker unseen
// for an hour dropped. Stored compactly (tenths in 16 bits): what comes back must be exactly
// what rounding the figure to a tenth gives.
import { describe, expect, it } from 'vitest';
import { RING_BYTES, VITALS_POINTS, WorkerVitals } from '../../../hub-core/src/hub/worker-vitals.ts';
import { seededRandom } from '../../../hub-core/src/wire/random.ts';

const w = (id: string, disk: number, cpu: number | null, mem: number | null, alive = true) => ({ worker_id: id, alive, disk_pct: disk, cpu_pct: cpu, mem_pct: mem });

describe('WorkerVitals', () => {
  it('gives each point back oldest first, to a tenth, with missing figures as null', () => {
    const v = new WorkerVitals();
    v.observe([w('a', 12.34, 0, 100)], 1_000);
    v.observe([w('a', 12.36, null, 99.95), w('b', 1, 2, 3, false)], 2_000);
    v.observe([w('a', Number.NaN, 55.55, null)], 3_000);
    expect(v.history('a')).toEqual([
      { t: 1_000, disk_pct: 12.3, cpu_pct: 0, mem_pct: 100 },
      { t: 2_000, disk_pct: 12.4, cpu_pct: null, mem_pct: 100 },
      { t: 3_000, disk_pct: null, cpu_pct: 55.6, mem_pct: null },
    ]);
    expect(v.history('b')).toEqual([]); // a dead worker is not sampled
    expect(v.workers).toBe(1);
  });

  it('returns exactly the figure rounded to a tenth, for any percentage', () => {
    const rnd = seededRandom(7);
    const v = new WorkerVitals();
    const sent: number[] = [];
    for (let i = 0; i < VITALS_POINTS; i++) {
      const pct = rnd.next() * 100;
      sent.push(pct);
      v.observe([w('a', pct, pct, pct)], 1_700_000_000_000 + i * 5_000);
    }
    const back = v.history('a');
    expect(back.map((p) => p.disk_pct)).toEqual(sent.map((x) => Math.round(x * 10) / 10));
    expect(back.map((p) => p.t)).toEqual(sent.map((_, i) => 1_700_000_000_000 + i * 5_000));
  });

  it('keeps the last VITALS_POINTS points, and drops a worker unseen for an hour', () => {
    const v = new WorkerVitals();
    for (let i = 0; i < VITALS_POINTS + 7; i++) v.observe([w('a', i % 100, 1, 1)], i * 1000);
    const h = v.history('a');
    expect(h).toHaveLength(VITALS_POINTS);
    expect(h[0].t).toBe(7000);
    expect(h.at(-1)!.t).toBe((VITALS_POINTS + 6) * 1000);
    v.observe([w('b', 1, 1, 1)], (VITALS_POINTS + 6) * 1000 + 3_600_001);
    expect(v.history('a')).toEqual([]);
    expect(v.workers).toBe(1);
  });

  it('holds a worker\'s history in under 2 KB of buffers (four float64 a point took 3.8 KB)', () => {
    const v = new WorkerVitals();
    const fleet = Array.from({ length: 5000 }, (_, i) => w(`w${i}`, 1, 2, 3));
    const before = process.memoryUsage().arrayBuffers;
    v.observe(fleet, 1_000);
    const perWorker = (process.memoryUsage().arrayBuffers - before) / fleet.length;
    expect(perWorker).toBeGreaterThan(RING_BYTES / 2); // it measured the rings (other buffers come and go meanwhile)
    expect(perWorker).toBeLessThan(2000);
    expect(v.workers).toBe(5000);
  });
});
