// Assets are bounded in time: every pass deletes what was stored longer ago than
// PAPRIKA_ASSET_RETENTION_S, in batches. Every hub runs it; a DELETE of what another hub
// already deleted changes nothing.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { AssetStore } from '../ports/asset-store.ts';
import type { Clock } from '../ports/clock.ts';
import { PeriodicLoop } from './periodic-loop.ts';

const BATCH = 1000;
/** Batches per pass: one pass never runs for long; the next pass takes the rest. */
const MAX_BATCHES = 20;

export interface AssetRetentionDeps {
  config: Config;
  assets: AssetStore;
  clock: Clock;
  log: Logger;
}

/** One pass: how many assets went. */
export async function deleteExpiredAssets(d: AssetRetentionDeps, signal?: AbortSignal): Promise<number> {
  const before = new Date(d.clock.now() - d.config.assetRetentionS * 1000);
  let total = 0;
  for (let i = 0; i < MAX_BATCHES && !signal?.aborted; i++) {
    const n = await d.assets.deleteStoredBefore(before, BATCH);
    total += n;
    if (n < BATCH) break;
  }
  if (total > 0) d.log.info({ deleted: total, stored_before: before.toISOString() }, 'expired assets deleted');
  return total;
}

export function assetRetentionLoop(d: AssetRetentionDeps): PeriodicLoop {
  // A tenth of the retention, at most hourly: assets outlive it by 10 % at worst.
  const periodMs = Math.min(3600, d.config.assetRetentionS / 10) * 1000;
  return new PeriodicLoop('asset-retention', periodMs, (signal) => deleteExpiredAssets(d, signal).then(() => undefined), d.clock, d.log, { runAtStart: true });
}
