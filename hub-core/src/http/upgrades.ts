// WebSocket upgrades go through Fastify's own router and hooks, like every other request: the
// route table decides the credential of the route the router matched, with the router's own
// decoding, so no second parser of paths exists to disagree with it.
import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { WebSocket, WebSocketServer } from 'ws';

export interface PendingUpgrade {
  socket: Duplex;
  head: Buffer;
  /** Upgraded: the socket drops the HTTP answer it carried (and with it the request), which it would otherwise hold for the socket's life. */
  release(): void;
}

const UPGRADE = Symbol('paprika.upgrade');
type WithUpgrade = IncomingMessage & { [UPGRADE]?: PendingUpgrade };

/** The socket of an upgrade request, for a WebSocket route's handler; undefined for plain HTTP. */
export function pendingUpgrade(req: IncomingMessage): PendingUpgrade | undefined {
  return (req as WithUpgrade)[UPGRADE];
}

function destroyOnError(this: Duplex): void {
  this.destroy();
}

export function routeUpgradesThroughFastify(app: FastifyInstance): void {
  app.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // Outside routeUpgrade's scope: a listener the socket keeps for its life must not hold that
    // scope's answer (closures of one scope share it).
    socket.on('error', destroyOnError);
    routeUpgrade(app, req, socket, head);
  });
}

function routeUpgrade(app: FastifyInstance, req: IncomingMessage, socket: Duplex, head: Buffer): void {
  // A refusal (401, 404, 421…) is an ordinary HTTP answer on this socket, then it closes.
  const res = new ServerResponse(req);
  const release = () => {
    if (res.socket) res.detachSocket(res.socket);
    delete (req as WithUpgrade)[UPGRADE];
  };
  (req as WithUpgrade)[UPGRADE] = { socket, head, release };
  res.shouldKeepAlive = false;
  res.assignSocket(socket as Socket);
  // Destroyed once the answer is written, not only ended: a client that never sends its own FIN
  // (a half-open socket) kept it, and with it the server's close, open for good.
  res.on('finish', () => (socket as Socket).destroySoon());
  app.routing(req, res);
}

/**
 * Completes a WebSocket route's upgrade: `wss` answers 101 on the pending socket, which then
 * lets go of the HTTP answer made for it (a hub held one answer and one request, about 2 KB of
 * heap with their headers, for each linked worker's whole link), and `onSocket` gets the WebSocket.
 */
export function completeUpgrade(wss: WebSocketServer, req: IncomingMessage, up: PendingUpgrade, onSocket: (ws: WebSocket) => void): void {
  wss.handleUpgrade(req, up.socket, up.head, (ws) => {
    up.release();
    onSocket(ws);
  });
}
