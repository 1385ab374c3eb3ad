// Which queued jobs the redrive loop may claim this pass (seed, layer 4). The age gate is the
// third guard: a job younger than REDRIVE_MIN_AGE may still be inside its POST (8 s inline
// wait + 60 s forward + margin), unless that POST marked it released when it gave up.
export interface QueuedRow {
  id: string;
  created_at: Date;
  released_at: Date | null;
  worker_id: string | null;
}

export interface RedriveDecision {
  take: string[];
  /** Too young and not released: left for the POST that may still hold them. */
  gated: number;
}

export function decideRedrive(rows: readonly QueuedRow[], fleet: { freeLanes: number }, nowMs: number, cfg: { redriveMinAgeS: number }): RedriveDecision {
  const take: string[] = [];
  let gated = 0;
  const minAgeMs = cfg.redriveMinAgeS * 1000;
  for (const r of rows) {
    if (r.worker_id !== null) continue; // guard 2: handed to a worker once; never redriven
    if (r.released_at === null && nowMs - r.created_at.getTime() < minAgeMs) {
      gated++;
      continue;
    }
    if (take.length < fleet.freeLanes) take.push(r.id);
  }
  return { take, gated };
}
