// The hub registry: every HUB_HEARTBEAT this hub writes paprika:hubs:{id} (TTL HUB_TTL) and
// its score in paprika:hubs:index, so a hub sharing REDIS_URL shows up with no registration.
// Each pass first drops the worker links that went silent (LinkService.dropSilentLinks).
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { HubEvents } from '../hub/hub-events.ts';
import type { LocalLinks } from '../hub/local-links.ts';
import type { Clock } from '../ports/clock.ts';
import type { Registry } from '../ports/registry.ts';
import { PeriodicLoop } from './periodic-loop.ts';

export function hubHeartbeatLoop(d: { config: Config; registry: Registry; localLinks: LocalLinks; clock: Clock; log: Logger; events: HubEvents; startedAt: number; dropSilentLinks: () => void }): PeriodicLoop {
  const { config, registry, localLinks, clock, log, events, startedAt, dropSilentLinks } = d;
  return new PeriodicLoop(
    'hub-heartbeat',
    config.hubHeartbeatS * 1000,
    async () => {
      // Before the registry write: a Redis outage must not keep dead links open.
      dropSilentLinks();
      await registry.heartbeatHub({ hub_id: config.hubId, url: config.hubUrl, started_at: startedAt, workers: localLinks.size, free_lanes: localLinks.freeLanes() }, config.hubTtlS, clock.now());
      events.hubsChanged();
    },
    clock,
    log,
    { runAtStart: true },
  );
}
