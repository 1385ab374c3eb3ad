// Chrome lanes for a real worker: find Chrome, start the live-view server, build the pool.
// (Filled in with the Chrome lane pool; see worker-agent/src/chrome/.)
import type { LanePool } from './lanes/lane.ts';

export async function chromeWorkerPool(_o: { lanes: number; singleChrome: boolean; chromePath?: string; lanIp: string; novncBase?: string }): Promise<{ pool: LanePool; stopExtras: () => Promise<void> }> {
  throw new Error('Chrome lanes are not available in this build yet; use --simulate-lanes N');
}
