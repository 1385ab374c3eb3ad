// A short history of each worker's disk, CPU and memory, for the console's sparklines. Fed
// from the fleet view at every stats sample (so every hub has it for every worker, whichever
// hub holds the link), bounded: POINTS per worker, and workers unseen for FORGET_MS dropped.
export const VITALS_POINTS = 120;
const FORGET_MS = 3600_000;
const FIELDS = 4; // t (s since epoch), disk, cpu, mem

interface Ring {
  data: Float64Array;
  next: number;
  size: number;
  lastMs: number;
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

const num = (v: number | null | undefined) => (typeof v === 'number' && Number.isFinite(v) ? v : NaN);
const back = (v: number) => (Number.isNaN(v) ? null : Math.round(v * 10) / 10);

export class WorkerVitals {
  private readonly rings = new Map<string, Ring>();

  observe(workers: readonly VitalsSource[], nowMs: number): void {
    for (const w of workers) {
      if (!w.alive) continue;
      let r = this.rings.get(w.worker_id);
      if (!r) this.rings.set(w.worker_id, (r = { data: new Float64Array(VITALS_POINTS * FIELDS), next: 0, size: 0, lastMs: 0 }));
      const o = r.next * FIELDS;
      r.data[o] = nowMs;
      r.data[o + 1] = num(w.disk_pct);
      r.data[o + 2] = num(w.cpu_pct);
      r.data[o + 3] = num(w.mem_pct);
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
      const o = ((r.next - r.size + i + VITALS_POINTS) % VITALS_POINTS) * FIELDS;
      out.push({ t: r.data[o], disk_pct: back(r.data[o + 1]), cpu_pct: back(r.data[o + 2]), mem_pct: back(r.data[o + 3]) });
    }
    return out;
  }

  get workers(): number {
    return this.rings.size;
  }
}
