// Chrome lanes for a real worker: find Chrome, start the live-view server, build the pool
// (worker-agent/src/chrome/chrome-worker-lanes.ts does the wiring).
import type { LanePool } from './lanes/lane.ts';
import { chromeWorkerLanes, type ChromeWorkerLanesOptions } from './chrome/chrome-worker-lanes.ts';

export function chromeWorkerPool(o: ChromeWorkerLanesOptions): Promise<{ pool: LanePool; stopExtras: () => Promise<void> }> {
  return chromeWorkerLanes(o);
}
