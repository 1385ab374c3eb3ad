// GET /admin/workers as bytes, from each row's JSON kept between reads. The fleet view hands
// back the same row object for a worker that neither changed nor died (fleet-view.ts), so at
// 10,000 workers a read serialises only what changed instead of the whole table (mapping and
// stringifying every row was most of the read's time once Redis answered with changes only),
// and while no row changed the encoded table itself is reused.
import type { FleetView, FleetWorker } from '../hub/fleet-view.ts';
import type { WorkersPageJson } from '../wire/json.ts';
import { workerJson } from './json.ts';

const textOf = new WeakMap<FleetWorker, string>();

/** One row's WorkerJson as JSON text, made once per row object. */
export function workerJsonText(w: FleetWorker): string {
  let text = textOf.get(w);
  if (text === undefined) textOf.set(w, (text = JSON.stringify(workerJson(w))));
  return text;
}

function sameRows(a: readonly FleetWorker[], b: readonly FleetWorker[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** One per route plugin: the last table it encoded. */
export class WorkersPage {
  private last: { rows: readonly FleetWorker[]; head: Buffer } | undefined;

  /**
   * The WorkersPageJson of a view, UTF-8 encoded (the document JSON.stringify would make), in
   * two pieces: the table and its tail (`as_of` changes every read). Joining them would copy
   * the table (8 MB at 10,000 workers) on every read.
   */
  pieces(view: FleetView): [Buffer, Buffer] {
    let head = this.last && sameRows(this.last.rows, view.workers) ? this.last.head : undefined;
    if (!head) {
      head = Buffer.from(`{"workers":[${view.workers.map(workerJsonText).join(',')}],`);
      this.last = { rows: view.workers, head };
    }
    const tail: Omit<WorkersPageJson, 'workers'> = { as_of: new Date(view.as_of).toISOString(), stale: view.stale };
    return [head, Buffer.from(JSON.stringify(tail).slice(1))];
  }
}
