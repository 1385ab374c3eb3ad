// A short history of each worker's disk, CPU and memory, for the console's sparklines. Fed
// from the fleet view at every stats sample (so every hub has it for every worker, whichever
// hub holds the link), bounded: POINTS per worker, and workers unseen for FORGET_MS dropped.
export const VITALS_POINTS = 120;
const FORGET_MS = 3600_000;
const VALUES = 3; // disk, cpu, mem: tenths of a percent
const NONE = 0xffff;
/**
 * One worker's ring: the times (epoch ms) as float64, the percentages in tenths as uint16 (the
 * history is given to a tenth anyway), in one buffer: 1,680 bytes a worker. As four float64 a
 * point it was 3,840, the largest part of a hub's memory per worker (every hub holds a ring
 * for every worker in the fleet, linked to it or not).
 */
export const RING_BYTES = VITALS_POINTS * (8 + VALUES * 2);

interface Ring {
  t: Float64Array;
  v: Uint16Array;
  next: number;
  size: number;
  lastMs: number;
}

function newRing(): Ring {
  const buf = new ArrayBuffer(RING_BYTES);
  return { t: new Float64Array(buf, 0, VITALS_POINTS), v: new Uint16Array(buf, VITALS_POINTS * 8, VITALS_POINTS * VALUES), next: 0, size: 0, lastMs: 0 };
}

export interface VitalsPoint {
  t: number;
  disk_pct: number | null;
  cpu_pct: number | null;
  mem_pct: number | null;
}

export interface VitalsSource {
  worker_id: string;
  alive: boolean;
  disk_pct: number;
  cpu_pct?: number | null;
  mem_pct?: number | null;
}

const tenths = (v: number | null | undefined) => (typeof v === 'number' && Number.isFinite(v) ? Math.min(NONE - 1, Math.max(0, Math.round(v * 10))) : NONE);
const back = (x: number) => (x === NONE ? null : x / 10);

export class WorkerVitals {
  private readonly rings = new Map<string, Ring>();

  observe(workers: readonly VitalsSource[], nowMs: number): void {
    for (const w of workers) {
      if (!w.alive) continue;
      let r = this.rings.get(w.worker_id);
      if (!r) this.rings.set(w.worker_id, (r = newRing()));
      const o = r.next * VALUES;
      r.t[r.next] = nowMs;
      r.v[o] = tenths(w.disk_pct);
      r.v[o + 1] = tenths(w.cpu_pct);
      r.v[o + 2] = tenths(w.mem_pct);
      r.next = (r.next + 1) % VITALS_POINTS;
      r.size = Math.min(VITALS_POINTS, r.size + 1);
      r.lastMs = nowMs;
    }
    for (const [id, r] of this.rings) if (nowMs - r.lastMs > FORGET_MS) this.rings.delete(id);
  }

  /** Oldest first. */
  history(workerId: string): VitalsPoint[] {
    const r = this.rings.get(workerId);
    if (!r) return [];
    const out: VitalsPoint[] = [];
    for (let i = 0; i < r.size; i++) {
      const k = (r.next - r.size + i + VITALS_POINTS) % VITALS_POINTS;
      const o = k * VALUES;
      out.push({ t: r.t[k], disk_pct: back(r.v[o]), cpu_pct: back(r.v[o + 1]), mem_pct: back(r.v[o + 2]) });
    }
    return out;
  }

  get workers(): number {
    return this.rings.size;
  }
}
