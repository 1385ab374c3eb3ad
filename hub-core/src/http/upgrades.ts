// WebSocket upgrades go through Fastify's own router and hooks, like every other request: the
// route table decides the credential of the route the router matched, with the router's own
// decoding, so no second parser of paths exists to disagree with it.
import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';

export interface PendingUpgrade {
  socket: Duplex;
  head: Buffer;
}

const UPGRADE = Symbol('paprika.upgrade');
type WithUpgrade = IncomingMessage & { [UPGRADE]?: PendingUpgrade };

/** The socket of an upgrade request, for a WebSocket route's handler; undefined for plain HTTP. */
export function pendingUpgrade(req: IncomingMessage): PendingUpgrade | undefined {
  return (req as WithUpgrade)[UPGRADE];
}

export function routeUpgradesThroughFastify(app: FastifyInstance): void {
  app.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    (req as WithUpgrade)[UPGRADE] = { socket, head };
    socket.on('error', () => socket.destroy());
    // A refusal (401, 404, 421…) is an ordinary HTTP answer on this socket, then it closes.
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket as Socket);
    res.on('finish', () => socket.end());
    app.routing(req, res);
  });
}
