/** A source of chance, injected so tests can make the scheduler's tie-break repeatable. */
export interface Random {
  /** A number in [0, 1). */
  next(): number;
}

export const mathRandom: Random = { next: () => Math.random() };

/** Deterministic mulberry32 generator for tests and seeded chaos runs. */
export function seededRandom(seed: number): Random {
  let a = seed >>> 0;
  return {
    next() {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    },
  };
}
