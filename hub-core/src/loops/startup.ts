// Start-up safety. The seed failed jobs left running at start-up unless another hub was alive
// in Redis ("複数 Hub 起動時の安全策"), because a hub cloned from a VM image once failed every job
// the live hubs were running: its own orchestrator did not know them. That guard trusts the
// absence of Redis rows, and Redis forgets: restarted empty, it let a restarting hub fail 7
// healthy jobs of a live peer (issue 16). Filtering by this hub's own hub_id would not do
// either: the clone carried the image's configuration, hub id included.
//
// So a hub decides nothing at start-up from what it cannot see. Only a job's worker knows
// whether it still runs it: it re-links and declares its held jobs and pending results (the
// hello adopts or settles them), or it stays away for ORPHAN_GRACE as this hub watches, and
// then the reconciler fails the job. A lone hub SIGKILLed and restarted thus loses no result
// its workers bring back; jobs whose workers died too take ORPHAN_GRACE longer to settle.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { JobStore } from '../ports/job-store.ts';

export interface StartupDeps {
  config: Pick<Config, 'orphanGraceS'>;
  store: Pick<JobStore, 'listRunning'>;
  log: Logger;
}

export async function leaveLeftoversToTheirWorkers(d: StartupDeps): Promise<number> {
  const running = await d.store.listRunning(100_000);
  if (running.length > 0) d.log.info({ running: running.length, orphan_grace_s: d.config.orphanGraceS }, 'jobs left running: kept for their workers to claim; the reconciler fails what none claims within ORPHAN_GRACE');
  return running.length;
}
