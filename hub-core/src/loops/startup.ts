// Start-up safety (seed, "複数 Hub 起動時の安全策"): jobs left running are failed only when no
// other hub is alive. A hub cloned from a VM image once failed every job the live hubs were
// running because its own orchestrator did not know them.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Clock } from '../ports/clock.ts';
import type { JobStore } from '../ports/job-store.ts';
import type { Registry } from '../ports/registry.ts';

export interface StartupDeps {
  config: Pick<Config, 'hubId' | 'hubTtlS'>;
  registry: Pick<Registry, 'listHubs'>;
  store: Pick<JobStore, 'listRunning' | 'failJobIf'>;
  clock: Clock;
  log: Logger;
}

export async function failLeftoversIfAlone(hub: StartupDeps): Promise<number> {
  const now = hub.clock.now();
  let hubs;
  try {
    hubs = await hub.registry.listHubs(now, hub.config.hubTtlS);
  } catch (err) {
    hub.log.warn({ err: String(err) }, 'hub registry unreadable at start-up; leaving running jobs to the reconciler');
    return 0;
  }
  const peers = hubs.filter((h) => h.alive && h.hub_id !== hub.config.hubId);
  if (peers.length > 0) {
    hub.log.info({ peers: peers.map((p) => p.hub_id) }, 'other hubs alive: running jobs left to them');
    return 0;
  }
  let failed = 0;
  for (const row of await hub.store.listRunning(100_000)) {
    const done = await hub.store.failJobIf(row.id, { status: 'running', assignmentId: row.session_id }, 'hub restarted while the job was running', new Date(hub.clock.now()));
    if (done) failed++;
  }
  if (failed > 0) hub.log.warn({ failed }, 'failed jobs left running by a previous hub');
  return failed;
}
