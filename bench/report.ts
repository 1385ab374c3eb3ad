// Figures and their one-line form: `name: paprika X unit, peer Y unit, ratio R` (R > 1 means
// Paprika is better, whichever direction the unit runs).
export interface Figure {
  name: string;
  unit: string;
  paprika: number;
  peer: number;
  peerName: string;
  higherIsBetter: boolean;
  /** The smallest non-zero value the measurement can tell (1 for whole-millisecond timestamps). */
  resolution?: number;
  extra?: Record<string, unknown>;
}

/** Paprika at 0 on a lower-is-better figure measured to `resolution`: the ratio is at least peer / resolution. */
function belowResolution(f: Figure): boolean {
  return !f.higherIsBetter && f.paprika === 0 && f.resolution !== undefined && f.peer > 0;
}

export function ratio(f: Figure): number {
  if (belowResolution(f)) return f.peer / f.resolution!;
  if (f.paprika === 0 || f.peer === 0) return 0;
  return f.higherIsBetter ? f.paprika / f.peer : f.peer / f.paprika;
}

const fmt = (n: number) => (Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 10 ? n.toFixed(1) : n.toFixed(2));

export function line(f: Figure): string {
  return `${f.name}: paprika ${fmt(f.paprika)} ${f.unit}, peer ${fmt(f.peer)} ${f.unit}, ratio ${belowResolution(f) ? '>= ' : ''}${ratio(f).toFixed(2)}`;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

export function summary(values: number[]): { p50: number; p99: number; mean: number; n: number } {
  const s = [...values].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p99: percentile(s, 99), mean: s.reduce((a, b) => a + b, 0) / Math.max(1, s.length), n: s.length };
}

/** Closed loop: `concurrency` clients each run `one()` until `total` calls were started. */
export async function closedLoop(total: number, concurrency: number, one: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) await one(next++);
    }),
  );
  return performance.now() - started;
}
