// The hub's HTTP + WebSocket server: Fastify for the JSON API, `ws` (noServer) for the two
// upgrades — the worker link and the console's event stream — authenticated before upgrade.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import { WebSocketServer } from 'ws';
import { PaprikaError } from '../errors.ts';
import type { Hub } from '../hub/hub.ts';
import { MAX_FRAME_BYTES } from '../protocol.ts';
import { AdminEventStream } from './admin-events.ts';
import { requireToken } from './auth.ts';
import { bodyTimeout } from './body-timeout.ts';
import { adminRoutes } from './routes/admin.ts';
import { jobRoutes } from './routes/jobs.ts';
import { sessionRoutes } from './routes/sessions.ts';
import { systemRoutes } from './routes/system.ts';
import { workerRoutes } from './routes/workers.ts';

export const BODY_LIMIT_BYTES = 1024 * 1024;
const LINK_PATH = /^\/workers\/([A-Za-z0-9_-]{1,100})\/link$/;

const DB_DOWN_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', '57P01', '57P02', '57P03', '08000', '08001', '08003', '08006', '3D000', '55000']);

/** A failure of the connection to Postgres, not of the query: the client should retry (503). */
function isDatabaseDown(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return (e.code !== undefined && DB_DOWN_CODES.has(e.code)) || /Connection terminated|timeout exceeded when trying to connect|Query read timeout|not currently accepting connections|the database system is/.test(e.message ?? '');
}

export interface HttpServer {
  app: FastifyInstance;
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function buildHttpServer(hub: Hub, opts: { consoleDir?: string } = {}): Promise<HttpServer> {
  const app = Fastify({
    logger: false,
    bodyLimit: BODY_LIMIT_BYTES,
    forceCloseConnections: true,
    return503OnClosing: true,
    // A URL the router cannot decode gets the same {error, code, details} as everything else;
    // the body is drained first so the keep-alive connection stays usable.
    frameworkErrors: (err, req, reply) => {
      req.raw.resume();
      void (reply as unknown as { status(n: number): { send(b: unknown): void } }).status(400).send({ error: err.message, code: 'bad_request', details: { fastify_code: err.code } });
    },
  });

  app.setErrorHandler((err: FastifyError | PaprikaError, req, reply) => {
    // An error before the body was read (401, 413, 415): drain what is in flight, but close the
    // connection after the answer rather than read an unwanted (or endless) body to its end.
    if (!req.raw.complete) reply.header('connection', 'close');
    req.raw.resume();
    if (err instanceof PaprikaError) {
      if (err.retryAfterS !== undefined) reply.header('retry-after', String(Math.ceil(err.retryAfterS)));
      return reply.status(err.status).send(err.toBody());
    }
    if (isDatabaseDown(err)) {
      hub.log.warn({ err: String(err) }, 'database unreachable');
      const e = new PaprikaError('database_unavailable', null, undefined, 2);
      return reply.status(503).header('retry-after', '2').send(e.toBody());
    }
    const status = typeof err.statusCode === 'number' ? err.statusCode : 500;
    if (status >= 500) hub.log.error({ err: String(err), stack: err.stack }, 'request failed');
    const code = status === 413 ? 'payload_too_large' : status === 415 ? 'unsupported_media_type' : status < 500 ? 'bad_request' : 'internal';
    return reply.status(status).send({ error: status >= 500 ? 'Internal error' : err.message, code, details: err.code ? { fastify_code: err.code } : null });
  });
  app.setNotFoundHandler((req, reply) => (req.raw.resume(), reply).status(404).send({ error: `No route for ${req.method} ${req.url.split('?')[0]}`, code: 'not_found', details: null }));

  bodyTimeout(app, hub.config.bodyTimeoutS);
  await app.register(systemRoutes(hub, opts.consoleDir));
  await app.register(jobRoutes(hub));
  await app.register(sessionRoutes(hub));
  await app.register(workerRoutes(hub));
  await app.register(adminRoutes(hub));

  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  const events = new AdminEventStream(hub);
  app.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://hub');
    try {
      const link = LINK_PATH.exec(url.pathname);
      if (link) {
        requireToken(hub.config.workerToken, req, 'worker');
        wss.handleUpgrade(req, socket, head, (ws) => hub.links.accept(ws, link[1], req.socket.remoteAddress));
      } else if (url.pathname === '/admin/events') {
        requireToken(hub.config.adminToken, req, 'admin', url);
        wss.handleUpgrade(req, socket, head, (ws) => events.accept(ws));
      } else {
        throw new PaprikaError('not_found', { path: url.pathname });
      }
    } catch (err) {
      const e = err instanceof PaprikaError ? err : new PaprikaError('internal');
      const body = JSON.stringify(e.toBody());
      socket.end(`HTTP/1.1 ${e.status} ${e.code}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    }
  });

  await app.listen({ port: hub.config.port, host: hub.config.bind });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : hub.config.port;
  const host = hub.config.bind === '0.0.0.0' || hub.config.bind === '::' ? '127.0.0.1' : hub.config.bind;
  return {
    app,
    port,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    async close() {
      events.stop();
      for (const ws of wss.clients) ws.terminate();
      wss.close();
      await app.close();
    },
  };
}
