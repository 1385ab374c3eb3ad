// Start-up safety (seed, "複数 Hub 起動時の安全策"): jobs left running are failed only when no
// other hub is alive. A hub cloned from a VM image once failed every job the live hubs were
// running because its own orchestrator did not know them.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { JobLedger } from '../hub/job-ledger.ts';
import type { Clock } from '../ports/clock.ts';
import type { Registry } from '../ports/registry.ts';

export interface StartupDeps {
  config: Pick<Config, 'hubId' | 'hubTtlS'>;
  registry: Pick<Registry, 'listHubs'>;
  ledger: Pick<JobLedger, 'failLeftovers'>;
  clock: Clock;
  log: Logger;
}

export async function failLeftoversIfAlone(d: StartupDeps): Promise<number> {
  let hubs;
  try {
    hubs = await d.registry.listHubs(d.clock.now(), d.config.hubTtlS);
  } catch (err) {
    d.log.warn({ err: String(err) }, 'hub registry unreadable at start-up; leaving running jobs to the reconciler');
    return 0;
  }
  const peers = hubs.filter((h) => h.alive && h.hub_id !== d.config.hubId);
  if (peers.length > 0) {
    d.log.info({ peers: peers.map((p) => p.hub_id) }, 'other hubs alive: running jobs left to them');
    return 0;
  }
  const failed = await d.ledger.failLeftovers();
  if (failed > 0) d.log.warn({ failed }, 'failed jobs left running by a previous hub');
  return failed;
}
