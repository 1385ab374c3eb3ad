// What a worker link's handlers need from the rest of the hub (its own file so the link's
// parts — handshake, messages, service — share it without importing each other in a circle).
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { AssetStore } from '../ports/asset-store.ts';
import type { Clock } from '../ports/clock.ts';
import type { JobStore } from '../ports/job-store.ts';
import type { Registry } from '../ports/registry.ts';
import type { HubEvents } from './hub-events.ts';
import type { JobLedger } from './job-ledger.ts';
import type { LaneBook } from './lane-book.ts';
import type { LocalLinks } from './local-links.ts';
import type { HubMetrics } from './metrics.ts';
import type { RecycleCounter } from './recycle-counter.ts';
import type { RegistryPublisher } from './registry-publisher.ts';
import type { SessionService } from './sessions.ts';
import type { CdpService } from './cdp-service.ts';
import type { UrlGuard } from './url-guard.ts';
import type { WorkerEnrollment } from './worker-enrollment.ts';
import type { WallRelay } from './wall-relay.ts';

export interface LinkDeps {
  config: Config;
  store: JobStore;
  registry: Registry;
  assets: AssetStore;
  localLinks: LocalLinks;
  lanes: LaneBook;
  ledger: JobLedger;
  sessions: SessionService;
  cdp: Pick<CdpService, 'onClosed' | 'onLinkClosed'>;
  publisher: RegistryPublisher;
  enrollment: WorkerEnrollment;
  clock: Clock;
  log: Logger;
  events: HubEvents;
  metrics: HubMetrics;
  urls: UrlGuard;
  recycles: RecycleCounter;
  wall: Pick<WallRelay, 'onLinkThumb'>;
}
