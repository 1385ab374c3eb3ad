// The composition root: one hub built from the adapters the config chooses, the services, the
// loops and the HTTP/WS server, with one start and one stop. Tests, the CLI and the Electron
// app all start hubs this way. Only this folder knows every part; each part below it (a route
// group, a loop, a service) receives the few parts it uses, by name.
import path from 'node:path';
import pino, { type Logger } from 'pino';
import { ConfigError, isLoopbackBind, loadConfig, type Config } from '../config.ts';
import { openGroups } from '../http/auth.ts';
import { MemoryRegistry } from '../adapters/memory/memory-registry.ts';
import { RedisRegistry } from '../adapters/redis/redis-registry.ts';
import { openJobStore, SqlJobStore } from '../adapters/sql/sql-job-store.ts';
import { DataDirInUseError } from '../adapters/sql/data-dir-lock.ts';
import { freePort } from '../http/free-port.ts';
import { buildHttpServer, type HttpDeps, type HttpServer } from '../http/server.ts';
import { assetRetentionLoop } from '../loops/asset-retention-loop.ts';
import { hubHeartbeatLoop } from '../loops/hub-heartbeat-loop.ts';
import type { PeriodicLoop } from '../loops/periodic-loop.ts';
import { reconcileLoop } from '../loops/reconcile-loop.ts';
import { redriveLoop } from '../loops/redrive-loop.ts';
import { leaveLeftoversToTheirWorkers } from '../loops/startup.ts';
import { chooseAssetStore } from './asset-store-choice.ts';
import type { AssetStore } from '../ports/asset-store.ts';
import type { Clock } from '../ports/clock.ts';
import { chooseHubClock, DatabaseClock } from './database-clock.ts';
import type { JobRow, JobStore } from '../ports/job-store.ts';
import { mathRandom, type Random } from '../wire/random.ts';
import type { Registry } from '../ports/registry.ts';
import { CdpService } from '../hub/cdp-service.ts';
import { Dispatcher } from '../hub/dispatcher.ts';
import { FleetViewReader } from '../hub/fleet-view.ts';
import { Forwarder } from '../hub/forwarder.ts';
import { JobWaiter } from '../hub/job-waiter.ts';
import { TERMINAL_STATUSES } from '../wire/job-spec.ts';
import { HubEvents } from '../hub/hub-events.ts';
import { JobLedger } from '../hub/job-ledger.ts';
import { JobService } from '../hub/job-service.ts';
import { LaneBook } from '../hub/lane-book.ts';
import { LinkService } from '../hub/link-service.ts';
import { LocalLinks } from '../hub/local-links.ts';
import { createMetrics, type HubMetrics } from '../hub/metrics.ts';
import { PeerRouting } from '../hub/peer-routing.ts';
import { RecycleCounter } from '../hub/recycle-counter.ts';
import { RegistryPublisher } from '../hub/registry-publisher.ts';
import { SessionService } from '../hub/sessions.ts';
import { StatsSampler } from '../hub/stats.ts';
import { UrlGuard } from '../hub/url-guard.ts';
import { ViewGrants } from '../hub/view-grants.ts';
import { WallRelay } from '../hub/wall-relay.ts';
import { WorkerAdmin } from '../hub/worker-admin.ts';
import { WorkerEnrollment } from '../hub/worker-enrollment.ts';

export interface StartHubOptions {
  config?: Config;
  /** Environment to read the config from when `config` is not given (default process.env). */
  env?: Record<string, string | undefined>;
  port?: number;
  /** Aborts a start that is still waiting for Redis (SIGTERM while starting). */
  signal?: AbortSignal;
  store?: JobStore;
  registry?: Registry;
  assets?: AssetStore;
  /** Used as is (tests' manual clocks). Without it a hub on Postgres keeps Postgres's time (database-clock.ts). */
  clock?: Clock;
  /** The host clock that Postgres's corrects (tests: a skewed one); default the system clock. */
  hostClock?: Clock;
  random?: Random;
  logger?: Logger;
  /** Where the built console lives (default renderer/dist). */
  consoleDir?: string;
}

/** How long a graceful stop lets inline POSTs release their jobs before it closes the server. */
const INLINE_SETTLE_MS = 5000;
/**
 * How long the server's close then waits for requests still in flight (one still being read
 * included) before it answers them 503: a client that sends headers and then nothing does not
 * hold the stop for its body timeout.
 */
const REQUESTS_SETTLE_MS = 5000;

export class Hub {
  readonly events = new HubEvents();
  readonly metrics: HubMetrics = createMetrics();
  readonly localLinks: LocalLinks;
  readonly lanes: LaneBook;
  readonly ledger: JobLedger;
  readonly publisher: RegistryPublisher;
  readonly sessions: SessionService;
  /** CDP clients (GET /cdp) on lanes of this hub's workers or a peer's. */
  readonly cdp: CdpService;
  readonly dispatcher: Dispatcher;
  readonly jobs: JobService;
  readonly links: LinkService;
  readonly enrollment: WorkerEnrollment;
  readonly fleetView: FleetViewReader;
  readonly forwarder: Forwarder;
  readonly stats: StatsSampler;
  /** Forward or serve here: the one-hop rules between hubs. */
  readonly peers: PeerRouting;
  /** An operator's actions on one worker, wherever its link is. */
  readonly workerAdmin: WorkerAdmin;
  readonly views: ViewGrants;
  /** The lane wall's thumbnails: asked of local workers while watched, relayed to consoles and peer hubs. */
  readonly wall: WallRelay;
  readonly startedAt: number;
  /** The egress policy: sent to workers, checked on submitted URLs. */
  readonly urls: UrlGuard;
  /** The long polls (GET /jobs/:id?wait_s=): a stop answers them at once. */
  readonly waits: JobWaiter;
  private loops: PeriodicLoop[] = [];
  private http: HttpServer | undefined;
  private stopped = false;

  constructor(
    readonly config: Config,
    readonly store: JobStore,
    readonly registry: Registry,
    readonly assets: AssetStore,
    readonly clock: Clock,
    readonly random: Random,
    readonly log: Logger,
    private readonly ownsAdapters: { store: boolean; registry: boolean },
  ) {
    this.startedAt = clock.now();
    this.localLinks = new LocalLinks(config, clock, random);
    this.lanes = new LaneBook(this.localLinks, clock);
    this.ledger = new JobLedger({ store, lanes: this.lanes, localLinks: this.localLinks, clock, log, events: this.events, metrics: this.metrics });
    this.publisher = new RegistryPublisher(registry, log, clock);
    // Only the worker's current link here speaks for it: a closed or replaced link's lanes freeing
    // (its close handling) must not publish its stale row over the live one.
    this.lanes.onLaneChange = (link) => {
      if (this.localLinks.get(link.worker_id) === link) this.publisher.mark(link);
    };
    // Every job that ends here is announced to the other hubs: their long polls (GET
    // /jobs/:id?wait_s=) answer at once instead of at their next re-read.
    this.events.on('job', (row: JobRow) => {
      if (TERMINAL_STATUSES.has(row.status)) registry.announceJobDone(row.id).catch(() => {});
    });
    this.sessions = new SessionService(config, this.lanes, registry, clock, log, this.events);
    this.dispatcher = new Dispatcher(config, store, this.lanes, this.ledger, clock);
    this.fleetView = new FleetViewReader(config, registry, this.localLinks, clock, log);
    this.forwarder = new Forwarder(config, registry, this.fleetView, clock, log, this.metrics);
    this.peers = new PeerRouting({ config, registry, forwarder: this.forwarder, jobs: store, dispatcher: this.dispatcher });
    this.jobs = new JobService(config, this.ledger, this.lanes, this.dispatcher, this.peers, clock, log);
    this.enrollment = new WorkerEnrollment({ config, store, registry, clock, log });
    this.urls = new UrlGuard(config, () => this.http?.port ?? config.port);
    this.wall = new WallRelay({ config, localLinks: this.localLinks, registry, events: this.events, clock, random, log });
    this.cdp = new CdpService({ config, lanes: this.lanes, forwarder: this.forwarder, clock, log, metrics: this.metrics, events: this.events, audit: store });
    this.links = new LinkService({ config, store, registry, assets, localLinks: this.localLinks, lanes: this.lanes, ledger: this.ledger, sessions: this.sessions, cdp: this.cdp, publisher: this.publisher, enrollment: this.enrollment, clock, log, events: this.events, metrics: this.metrics, urls: this.urls, recycles: new RecycleCounter(this.metrics), wall: this.wall });
    this.stats = new StatsSampler(config, store, this.fleetView, this.jobs, clock, log, this.metrics);
    this.workerAdmin = new WorkerAdmin({ config, ledger: this.ledger, links: this.links, peers: this.peers, forwarder: this.forwarder, publisher: this.publisher, fleetView: this.fleetView, localLinks: this.localLinks, registry, events: this.events, log });
    this.waits = new JobWaiter(store, this.events, clock, registry);
    this.views = new ViewGrants({ config, localLinks: this.localLinks, registry, forwarder: this.forwarder, clock });
  }

  /** Each route group's own dependencies, by name: no route sees the whole hub. */
  private httpDeps(consoleDir: string | undefined): HttpDeps {
    const { config, log, clock, store, registry } = this;
    return {
      config,
      log,
      clock,
      system: {
        config,
        clock,
        checks: { database: () => store.ping(), registry: () => registry.ping() },
        state: () => ({ stopping: this.jobs.stopping, workers: this.localLinks.size }),
        metrics: this.metrics,
        consoleDir,
      },
      jobs: { jobs: this.jobs, maxBatch: config.maxBatch, reads: store, assets: this.assets, urls: this.urls, peers: this.peers, waits: this.waits },
      sessions: { sessions: this.sessions, urls: this.urls, peers: this.peers },
      workers: { config, enrollment: this.enrollment, peers: this.peers, workerAdmin: this.workerAdmin },
      history: { history: store.history, now: () => clock.now() },
      queue: { history: store.history, fleet: this.fleetView, pick: config, now: () => clock.now() },
      workerDetail: { record: store.workerRecord, fleet: this.fleetView, vitals: this.stats.vitals, pick: config, now: () => clock.now() },
      admin: { config, clock, fleetView: this.fleetView, registry, reads: store, stats: this.stats, workerAdmin: this.workerAdmin, enrollment: this.enrollment, views: this.views },
      links: this.links,
      wall: this.wall,
      cdp: { cdp: this.cdp, assignWaitS: config.assignWaitS, stopping: () => this.jobs.stopping },
      adminEvents: { config, clock, log, events: this.events, fleetView: this.fleetView, registry, reads: store, stats: this.stats },
    };
  }

  get url(): string {
    if (!this.http) throw new Error('hub not started');
    return this.http.url;
  }

  /** The HTTP routes this hub serves and the group guarding each (route-groups.ts). */
  get routes(): HttpServer['routes'] {
    if (!this.http) throw new Error('hub not started');
    return this.http.routes;
  }

  get port(): number {
    if (!this.http) throw new Error('hub not started');
    return this.http.port;
  }

  async start(consoleDir?: string): Promise<void> {
    await leaveLeftoversToTheirWorkers({ config: this.config, store: this.store, log: this.log });
    this.http = await buildHttpServer(this.httpDeps(consoleDir));
    const { config, store, registry, localLinks, lanes, ledger, dispatcher, fleetView, clock, log, events, metrics, enrollment, startedAt } = this;
    this.loops = [hubHeartbeatLoop({ config, registry, localLinks, clock, log, events, startedAt, dropSilentLinks: () => this.links.dropSilentLinks() }), reconcileLoop({ config, store, fleetView, ledger, clock, log, enrollment }), this.stats.loop(), assetRetentionLoop({ config, assets: this.assets, clock, log })];
    if (!config.queueRedriveDisable) this.loops.push(redriveLoop({ config, store, localLinks, lanes, ledger, dispatcher, clock, log, metrics }));
    if (clock instanceof DatabaseClock) this.loops.push(clock.loop(log));
    for (const l of this.loops) l.start();
    const open = !(this.config.apiToken || this.config.adminToken || this.config.workerToken);
    const openToAll = openGroups(this.config);
    if (this.config.insecure && openToAll.length > 0 && !isLoopbackBind(this.config.bind)) {
      this.log.warn({ bind: this.config.bind, open_groups: openToAll }, `INSECURE: PAPRIKA_INSECURE=1 and no token for ${openToAll.join(', ')}: anyone who can reach ${this.config.bind} may use those routes`);
    }
    this.log.info({ hub_id: this.config.hubId, url: this.http.url, redis: Boolean(this.config.redisUrl), postgres: Boolean(this.config.databaseUrl) }, open && this.config.bind === '127.0.0.1' ? 'hub listening (no tokens set: bound to 127.0.0.1 only)' : 'hub listening');
  }

  /**
   * Graceful stop: refuse new jobs (503), answer the long polls, let inline POSTs settle, close
   * the links (workers re-link elsewhere, their owner keys released), stop the loops, refuse new
   * connections and answer every request received, leave the registry.
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    // Said at both ends: in the log a graceful stop reads differently from a crash.
    const began = this.clock.now();
    this.log.info({ hub_id: this.config.hubId, links: this.localLinks.size }, 'hub stopping: new jobs refused, links closing');
    // Long polls answer now with the job as it is. The server keeps serving until its links are
    // closed (peer hubs forward cancels and session commands for its workers until then; new jobs
    // get 503), then refuses new connections and answers what it received (http.close).
    this.http?.beginStop();
    this.waits.stop();
    await this.jobs.drain(INLINE_SETTLE_MS); // 503 for new jobs; inline waits release their jobs now
    for (const l of this.loops) await l.stop();
    this.sessions.stop();
    this.cdp.stop();
    this.wall.stop();
    await this.links.stop(); // every close handler ran: owner keys released
    await this.http?.close(REQUESTS_SETTLE_MS);
    await this.publisher.stop();
    await this.registry.removeHub(this.config.hubId).catch(() => {});
    if (this.ownsAdapters.registry) await this.registry.close();
    if (this.ownsAdapters.store) await this.store.close();
    this.log.info({ hub_id: this.config.hubId, took_ms: this.clock.now() - began }, 'hub stopped');
  }
}

/** A service named in the environment that cannot be reached or refused the start-up: the message names the variable and the address (never the credentials). */
function serviceError(variable: string, what: string, url: string, err: unknown): ConfigError {
  let where = url;
  try {
    const u = new URL(url);
    where = `${u.hostname}:${u.port || (u.protocol.startsWith('redis') ? 6379 : 5432)}`;
  } catch {
    where = 'the address given';
  }
  const message = err instanceof Error ? err.message : String(err);
  // Postgres answered (its errors carry a severity): reached, and it refused the start-up
  // (a password, a missing database, a migration that failed).
  if ((err as { severity?: unknown }).severity) return new ConfigError(variable, `${what} at ${where} refused the hub's start-up: ${message}`);
  return new ConfigError(variable, `cannot reach ${what} at ${where}: ${message}`);
}

export async function startHub(opts: StartHubOptions = {}): Promise<Hub> {
  let config = opts.config ?? loadConfig(opts.env ?? process.env, { port: opts.port });
  // Port 0 means "any free port": resolved before the config is made, so the default hub id and URL name the real port.
  if (config.port === 0 && !opts.config) config = loadConfig(opts.env ?? process.env, { port: await freePort(config.bind) });
  const log = opts.logger ?? pino({ level: config.logLevel, base: { hub: config.hubId } });
  const store =
    opts.store ??
    (await openJobStore({ databaseUrl: config.databaseUrl, pgliteDir: path.join(config.dataDir, 'db') }).catch((err) => {
      if (config.databaseUrl) throw serviceError('DATABASE_URL', 'Postgres', config.databaseUrl, err);
      if (err instanceof DataDirInUseError) throw new ConfigError('PAPRIKA_DATA_DIR', `${config.dataDir}: ${err.message}`);
      // A system call on the embedded database's directory failed: say which variable chose it.
      throw (err as NodeJS.ErrnoException).syscall ? new ConfigError('PAPRIKA_DATA_DIR', `cannot use ${config.dataDir} for the embedded database: ${(err as Error).message}`) : err;
    }));
  if (store instanceof SqlJobStore && store.unknownMigrations.length > 0) {
    const where = config.databaseUrl ? 'DATABASE_URL' : `the embedded database in ${config.dataDir}`;
    log.warn({ unknown_migrations: store.unknownMigrations }, `${where} was migrated by a newer release than this hub (${store.unknownMigrations.join(', ')} unknown here): this hub may misread what newer hubs write; run the same release on every hub (README: Upgrading)`);
  }
  const clock = await chooseHubClock({ clock: opts.clock, hostClock: opts.hostClock, databaseUrl: config.databaseUrl, databaseNow: store.databaseNow?.bind(store), log });
  let registry = opts.registry;
  try {
    registry ??= config.redisUrl
      ? await RedisRegistry.connect(config.redisUrl, config.redisPrefix, config.workerTtlS, { signal: opts.signal, forgetS: config.workerForgetS, commandTimeoutMs: config.redisTimeoutS * 1000 }).catch((err) => {
          throw serviceError('REDIS_URL', 'Redis', config.redisUrl as string, err);
        })
      : new MemoryRegistry(clock, config.workerForgetS);
  } catch (err) {
    if (!opts.store) await store.close();
    throw err;
  }
  const assets = opts.assets ?? chooseAssetStore(config, store, clock);
  const hub = new Hub(config, store, registry, assets, clock, opts.random ?? mathRandom, log, { store: !opts.store, registry: !opts.registry });
  try {
    await hub.start(opts.consoleDir);
  } catch (err) {
    await hub.stop().catch(() => {});
    throw err;
  }
  return hub;
}
