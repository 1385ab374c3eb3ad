// The hub's HTTP + WebSocket server: Fastify for the JSON API and, through the same router and
// hooks, the two upgrades (the worker link and the console's event stream, `ws` noServer).
// One onRequest hook guards every route: Host and site checks, then the token of the route
// group the matched route declares in route-groups.ts.
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { WebSocketServer } from 'ws';
import { ConfigError, type Config } from '../config.ts';
import { PaprikaError } from '../wire/errors.ts';
import { FORWARDED_HEADER } from '../hub/forwarder.ts';
import type { Clock } from '../ports/clock.ts';
import { databaseUnavailable } from '../ports/database-errors.ts';
import { RegistryUnavailableError } from '../ports/registry.ts';
import { CDP_MAX_FRAME_BYTES, LINK_CEILING_BYTES } from '../wire/protocol.ts';
import { WALL_PEER_MAX_MESSAGE_BYTES } from '../wire/wall.ts';
import type { WallRelay } from '../hub/wall-relay.ts';
import { AdminEventStream, type AdminEventDeps } from './admin-events.ts';
import { authorize, EVENTS_SUBPROTOCOL, openGroups } from './auth.ts';
import { bodyTimeout } from './body-timeout.ts';
import { cutSoon, rawAnswer } from './raw-answer.ts';
import { RequestDrain } from './request-drain.ts';
import { BASE_HEADERS, BrowserGuards } from './browser-guards.ts';
import { routeDecl, type RouteGroup } from './route-groups.ts';
import { adminRoutes, type AdminRouteDeps } from './routes/admin.ts';
import { adminHistoryRoutes, type HistoryRouteDeps } from './routes/admin-history.ts';
import { adminQueueRoutes, type QueueRouteDeps } from './routes/admin-queue.ts';
import { adminWorkerDetailRoutes, type WorkerDetailDeps } from './routes/admin-worker-detail.ts';
import { faviconRoutes } from './routes/favicon.ts';
import { cdpRoutes, type CdpRouteDeps } from './routes/cdp.ts';
import { jobRoutes, type JobRouteDeps } from './routes/jobs.ts';
import { sessionRoutes, type SessionRouteDeps } from './routes/sessions.ts';
import { socketRoutes, type SocketRouteDeps } from './routes/sockets.ts';
import { systemRoutes, type SystemRouteDeps } from './routes/system.ts';
import { workerRoutes, type WorkerRouteDeps } from './routes/workers.ts';
import { routeUpgradesThroughFastify } from './upgrades.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Copied from the route table when the route is registered; never set by hand. */
    auth?: RouteGroup;
    /** The route table allows `?token=` here (GET /cdp). */
    queryToken?: boolean;
  }
}

export const BODY_LIMIT_BYTES = 1024 * 1024;

function queryTokenOf(query: unknown): string | undefined {
  const t = (query as { token?: unknown } | undefined)?.token;
  return typeof t === 'string' && t.length > 0 && t.length <= 1000 ? t : undefined;
}

export interface HttpServer {
  app: FastifyInstance;
  url: string;
  port: number;
  /** Every registered route with its group (HEAD included), for tests that walk them all. */
  routes: ReadonlyArray<{ method: string; url: string; group: RouteGroup }>;
  /** The hub's stop begins: answers close their connections, the console's event streams end; new connections are still accepted. */
  beginStop(): void;
  /** Refuses new connections, answers what is in flight (up to `boundMs`), closes every connection and socket. */
  close(boundMs: number): Promise<void>;
}

/** What the server needs: its config and log, and each route group's own dependencies (built by app/). */
export interface HttpDeps {
  config: Config;
  log: Logger;
  clock: Clock;
  system: SystemRouteDeps;
  jobs: JobRouteDeps;
  sessions: SessionRouteDeps;
  workers: WorkerRouteDeps;
  admin: AdminRouteDeps;
  history: HistoryRouteDeps;
  queue: QueueRouteDeps;
  workerDetail: WorkerDetailDeps;
  links: SocketRouteDeps['links'];
  wall: Pick<WallRelay, 'watch' | 'leave'>;
  cdp: CdpRouteDeps;
  adminEvents: AdminEventDeps;
}

export async function buildHttpServer(deps: HttpDeps): Promise<HttpServer> {
  const { config, log } = deps;
  const app = Fastify({
    logger: false,
    bodyLimit: BODY_LIMIT_BYTES,
    // A stop answers every request it received (request-drain.ts): Fastify's own close would
    // destroy every connection, a request still being read with it, and answer 503 without a code.
    forceCloseConnections: false,
    return503OnClosing: false,
    // A URL the router cannot decode gets the same {error, code, details} as everything else;
    // the body is drained first so the keep-alive connection stays usable.
    frameworkErrors: (err, req, reply) => {
      req.raw.resume();
      void (reply as unknown as { status(n: number): { send(b: unknown): void } }).status(400).send({ error: err.message, code: 'bad_request', details: { fastify_code: err.code } });
    },
    // A request Node's HTTP parser refuses (a bad header line, a control character in the
    // path, both Content-Length and Transfer-Encoding, headers over the limit) never reaches a
    // route: it gets the same {error, code, details} too, then the connection closes.
    clientErrorHandler: (err, socket) => answerClientError(err, socket, deps.clock),
  });

  const drain = new RequestDrain(app.server, deps.clock);
  app.setErrorHandler((err: FastifyError | PaprikaError, req, reply) => {
    // An error before the body was read (401, 413, 415): drain what is in flight, but close the
    // connection after the answer rather than read an unwanted (or endless) body to its end.
    if (!req.raw.complete) reply.header('connection', 'close');
    req.raw.resume();
    if (err instanceof PaprikaError) {
      if (err.retryAfterS !== undefined) reply.header('retry-after', String(Math.ceil(err.retryAfterS)));
      return reply.status(err.status).send(err.toBody());
    }
    if (err instanceof RegistryUnavailableError) {
      log.warn({ err: String(err), route: req.routeOptions.url }, 'registry unavailable');
      return reply.status(503).header('retry-after', '2').send(new PaprikaError('registry_unavailable').toBody());
    }
    if (databaseUnavailable(err)) {
      log.warn({ err: String(err) }, 'database unreachable');
      const e = new PaprikaError('database_unavailable', null, undefined, 2);
      return reply.status(503).header('retry-after', '2').send(e.toBody());
    }
    const status = typeof err.statusCode === 'number' ? err.statusCode : 500;
    if (status >= 500) log.error({ err: String(err), stack: err.stack }, 'request failed');
    const code = status === 413 ? 'payload_too_large' : status === 415 ? 'unsupported_media_type' : status < 500 ? 'bad_request' : 'internal';
    return reply.status(status).send({ error: status >= 500 ? 'Internal error' : err.message, code, details: err.code ? { fastify_code: err.code } : null });
  });
  app.setNotFoundHandler((req, reply) => (req.raw.resume(), reply).status(404).send({ error: `No route for ${req.method} ${req.url.split('?')[0]}`, code: 'not_found', details: null }));

  bodyTimeout(app, config.bodyTimeoutS, deps.clock);
  // A route missing from the table stops the hub at start: no route is open by omission.
  const routes: Array<{ method: string; url: string; group: RouteGroup }> = [];
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const decls = methods.map((m) => routeDecl(m, route.url));
    if (decls.some((d) => d === undefined)) throw new Error(`route ${methods.join(',')} ${route.url} has no group in http/route-groups.ts`);
    if (new Set(decls.map((d) => d!.group)).size > 1) throw new Error(`route ${route.url}: one registration, several groups`);
    route.config = { ...route.config, auth: decls[0]!.group, queryToken: decls[0]!.queryToken === true };
    for (const method of methods) routes.push({ method, url: route.url, group: decls[0]!.group });
  });

  const guards = new BrowserGuards(config, openGroups(config).length > 0);
  app.addHook('onRequest', async (req) => {
    guards.checkHost(req.headers);
    if (req.is404) return; // no handler runs: the not-found handler answers, and says nothing
    guards.checkSite(req.method, req.headers);
    const group = req.routeOptions.config.auth;
    if (!group) throw new PaprikaError('unauthorized', { scope: 'undeclared' }); // fail closed
    const caller = authorize(config, group, req.headers, req.routeOptions.config.queryToken ? queryTokenOf(req.query) : undefined);
    // Only a proven peer hub may name itself the audit actor or stop a re-forward.
    if (!caller.peer) delete req.raw.headers[FORWARDED_HEADER];
  });
  app.addHook('onSend', async (_req, reply) => {
    reply.headers(BASE_HEADERS);
    // A stopping hub keeps no connection open for a next request it would refuse.
    if (drain.closing) reply.header('connection', 'close');
  });

  const wss = new WebSocketServer({
    noServer: true,
    // Past MAX_FRAME_BYTES a worker frame is refused by message (link-service), not by a dropped link.
    maxPayload: LINK_CEILING_BYTES,
    // The console offers ['paprika.v1', 'bearer.<token>']; only the first is ever echoed back.
    handleProtocols: (offered) => (offered.has(EVENTS_SUBPROTOCOL) ? EVENTS_SUBPROTOCOL : false),
  });
  const events = new AdminEventStream(deps.adminEvents);

  await app.register(systemRoutes(deps.system));
  await app.register(jobRoutes(deps.jobs));
  await app.register(sessionRoutes(deps.sessions));
  await app.register(workerRoutes(deps.workers));
  await app.register(faviconRoutes());
  await app.register(adminHistoryRoutes(deps.history));
  await app.register(adminQueueRoutes(deps.queue));
  await app.register(adminWorkerDetailRoutes(deps.workerDetail));
  await app.register(adminRoutes(deps.admin));
  // The wall's clients send only small `watch` messages; thumbs are already-compressed JPEGs.
  const wallWss = new WebSocketServer({ noServer: true, maxPayload: WALL_PEER_MAX_MESSAGE_BYTES, perMessageDeflate: false, handleProtocols: (offered) => (offered.has(EVENTS_SUBPROTOCOL) ? EVENTS_SUBPROTOCOL : false) });
  await app.register(socketRoutes({ links: deps.links, events, wall: deps.wall }, wss, wallWss));
  // CDP frames are the browser's: a limit of their own, no compression (a screenshot is already compressed).
  const cdpWss = new WebSocketServer({ noServer: true, maxPayload: CDP_MAX_FRAME_BYTES, perMessageDeflate: false });
  await app.register(cdpRoutes(deps.cdp, cdpWss));
  routeUpgradesThroughFastify(app);

  await app.listen({ port: config.port, host: config.bind }).catch((err: NodeJS.ErrnoException) => {
    // Say which setting chose the port: Node's own text ("listen EADDRINUSE … :8080") names neither.
    if (err.code === 'EADDRINUSE') throw new ConfigError('PAPRIKA_PORT', `port ${config.port} on ${config.bind} is already taken by another process (another hub or demo?); choose another with --port N or PAPRIKA_PORT`);
    if (err.code === 'EACCES') throw new ConfigError('PAPRIKA_PORT', `not allowed to listen on port ${config.port} on ${config.bind} (ports below 1024 need privileges); choose another with --port N or PAPRIKA_PORT`);
    if (err.code === 'EADDRNOTAVAIL') throw new ConfigError('PAPRIKA_BIND', `${config.bind} is not an address of this host`);
    throw err;
  });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.bind === '0.0.0.0' || config.bind === '::' ? '127.0.0.1' : config.bind;
  return {
    app,
    port,
    routes,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    beginStop() {
      drain.beginStop();
      events.stop();
    },
    async close(boundMs) {
      events.stop();
      for (const ws of wss.clients) ws.terminate();
      wss.close();
      for (const ws of cdpWss.clients) ws.terminate();
      cdpWss.close();
      for (const ws of wallWss.clients) ws.terminate();
      wallWss.close();
      await drain.close(boundMs);
      await app.close();
    },
  };
}

/** What Node's HTTP parser refused, answered as {error, code, details} (the socket cannot be reused). */
function answerClientError(err: NodeJS.ErrnoException & { code?: string }, socket: import('node:net').Socket, clock: Clock): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, error] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? ([408, 'request_timeout', 'the request was not received in time'] as const)
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? ([431, 'headers_too_large', 'the request headers are over the limit'] as const)
        : ([400, 'bad_request', 'the request is not valid HTTP'] as const);
  if (!socket.writable) return void socket.destroy();
  socket.write(rawAnswer(status, { error, code, details: { parser_code: err.code ?? null } }));
  cutSoon(socket, clock);
}
