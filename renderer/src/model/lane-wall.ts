// The lane wall's tiles: every lane of the fleet with what holds it, grouped by hub and worker.
// Elapsed time and the deadline come from the running job the hub lists for that lane.
import type { JobSummary, Worker } from '../api/types.ts';

export interface LaneTile {
  key: string;
  hubId: string;
  workerId: string;
  lane: number;
  alive: boolean;
  busy: boolean;
  viewable: boolean;
  jobId: string | null;
  kind: string | null;
  /** When the lane's job was assigned and its deadline, epoch ms; null when no job is known. */
  assignedMs: number | null;
  deadlineMs: number | null;
  /** Busy without a job: a session or a CDP client holds the lane. */
  holder: 'job' | 'session' | null;
}

export interface WallFilter {
  hub: string;
  worker: string;
  kind: string;
  state: '' | 'busy' | 'idle' | 'late';
}

export const emptyWallFilter: WallFilter = { hub: '', worker: '', kind: '', state: '' };
/** Past this share of its deadline a tile turns red. */
export const LATE_SHARE = 0.8;

const isHttp = (u: string | null) => !!u && /^https?:\/\//i.test(u);

/** Tiles do not depend on the clock (so they stay equal from one second to the next); elapsedMs and deadlineUsed do. */
const collator = new Intl.Collator();

export function laneTiles(workers: readonly Worker[], running: readonly JobSummary[]): LaneTile[] {
  const byId = new Map(running.map((j) => [j.id, j]));
  const tiles: LaneTile[] = [];
  for (const w of workers) {
    for (const l of w.lanes) {
      const job = l.job_id ? byId.get(l.job_id) : undefined;
      const assigned = job?.assigned_at ? Date.parse(job.assigned_at) : NaN;
      const deadline = job?.deadline_at ? Date.parse(job.deadline_at) : NaN;
      tiles.push({
        key: `${w.worker_id}/${l.index}`,
        hubId: w.hub_id ?? '—',
        workerId: w.worker_id,
        lane: l.index,
        alive: w.alive,
        busy: l.busy,
        viewable: isHttp(l.view_url),
        jobId: l.job_id,
        kind: job?.kind ?? null,
        assignedMs: Number.isFinite(assigned) ? assigned : null,
        deadlineMs: Number.isFinite(deadline) && deadline > assigned ? deadline : null,
        holder: l.busy ? (l.job_id ? 'job' : 'session') : null,
      });
    }
  }
  return tiles.sort((a, b) => collator.compare(a.hubId, b.hubId) || collator.compare(a.workerId, b.workerId) || a.lane - b.lane);
}

export function elapsedMs(t: LaneTile, now: number): number | null {
  return t.assignedMs === null ? null : Math.max(0, now - t.assignedMs);
}

/** Share of the deadline used, 0..1+; null without a deadline. */
export function deadlineUsed(t: LaneTile, now: number): number | null {
  return t.assignedMs === null || t.deadlineMs === null ? null : (now - t.assignedMs) / (t.deadlineMs - t.assignedMs);
}

export function isLate(t: LaneTile, now: number): boolean {
  const used = deadlineUsed(t, now);
  return used !== null && used >= LATE_SHARE;
}

export function filterTiles(tiles: readonly LaneTile[], f: WallFilter, now: number): LaneTile[] {
  const worker = f.worker.trim().toLowerCase();
  return tiles.filter(
    (t) =>
      (!f.hub || t.hubId === f.hub) &&
      (!worker || t.workerId.toLowerCase().includes(worker)) &&
      (!f.kind || t.kind === f.kind) &&
      (!f.state || (f.state === 'busy' ? t.busy : f.state === 'idle' ? !t.busy : isLate(t, now))),
  );
}

/** Hub → worker → tiles, in tile order. */
export function groupTiles(tiles: readonly LaneTile[]): Array<{ hubId: string; workers: Array<{ workerId: string; alive: boolean; tiles: LaneTile[] }> }> {
  const out: Array<{ hubId: string; workers: Array<{ workerId: string; alive: boolean; tiles: LaneTile[] }> }> = [];
  for (const t of tiles) {
    let hub = out[out.length - 1];
    if (!hub || hub.hubId !== t.hubId) out.push((hub = { hubId: t.hubId, workers: [] }));
    let w = hub.workers[hub.workers.length - 1];
    if (!w || w.workerId !== t.workerId) hub.workers.push((w = { workerId: t.workerId, alive: t.alive, tiles: [] }));
    w.tiles.push(t);
  }
  return out;
}

/** The previous tile where nothing changed (same fields), so memoised tiles skip their render. */
export function reuseEqualTiles(tiles: LaneTile[], previous: ReadonlyMap<string, LaneTile>): LaneTile[] {
  return tiles.map((t) => {
    const p = previous.get(t.key);
    if (!p) return t;
    for (const k of Object.keys(t) as Array<keyof LaneTile>) if (p[k] !== t[k]) return t;
    return p;
  });
}
