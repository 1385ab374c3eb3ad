// The WebSocket routes: the worker link, the console's event stream and the lane wall (a
// console's, and a peer hub's for the workers linked here). Their credential
// is in the route table like every route's; the handler only takes the socket over.
import type { FastifyInstance } from 'fastify';
import type { WebSocketServer } from 'ws';
import { PaprikaError } from '../../wire/errors.ts';
import type { LinkService } from '../../hub/link-service.ts';
import type { AdminEventStream } from '../admin-events.ts';
import type { WallRelay } from '../../hub/wall-relay.ts';
import { acceptWallSocket } from '../wall-socket.ts';
import { completeUpgrade, pendingUpgrade } from '../upgrades.ts';

const WORKER_ID = /^[A-Za-z0-9_-]{1,100}$/;

export interface SocketRouteDeps {
  links: Pick<LinkService, 'accept' | 'admit'>;
  events: Pick<AdminEventStream, 'accept'>;
  wall: Pick<WallRelay, 'watch' | 'leave'>;
}

/** `wallWss`: the wall's own server (a client message over 1 MB closes the socket). */
export function socketRoutes({ links, events, wall }: SocketRouteDeps, wss: WebSocketServer, wallWss: WebSocketServer) {
  return async (app: FastifyInstance) => {
    app.get('/workers/:id/link', (req, reply) => {
      const { id } = req.params as { id: string };
      if (!WORKER_ID.test(id)) throw new PaprikaError('bad_request', { id }, 'not a worker id');
      const up = pendingUpgrade(req.raw);
      if (!up) throw new PaprikaError('upgrade_required', { path: '/workers/:id/link' });
      // Counted before the upgrade: a socket waiting for its hello holds memory until then. A
      // full bound cuts its oldest silent socket; refused only while every slot checks a hello.
      const remote = req.raw.socket.remoteAddress;
      const admission = links.admit(remote, () => up.socket.destroy());
      if (!admission.ok) {
        const { scope, limit } = admission;
        const what = scope === 'source' ? `from ${remote} (PAPRIKA_LINK_PENDING_PER_IP)` : 'on this hub (PAPRIKA_LINK_PENDING_MAX)';
        throw new PaprikaError('links_waiting', { scope, limit, remote }, `${limit} worker links ${what} are having their hello checked; retry shortly`, 1);
      }
      const { slot } = admission;
      // An upgrade that never completes (a bad handshake, a peer gone) gives the slot back with its socket.
      up.socket.once('close', slot.release);
      reply.hijack();
      completeUpgrade(wss, req.raw, up, (ws) => links.accept(ws, id, remote, up.socket, slot));
    });

    app.get('/admin/events', (req, reply) => {
      const up = pendingUpgrade(req.raw);
      if (!up) throw new PaprikaError('upgrade_required', { path: '/admin/events' });
      reply.hijack();
      completeUpgrade(wss, req.raw, up, (ws) => events.accept(ws));
    });

    for (const [path, localOnly] of [['/admin/wall', false], ['/internal/wall', true]] as const) {
      app.get(path, (req, reply) => {
        const up = pendingUpgrade(req.raw);
        if (!up) throw new PaprikaError('upgrade_required', { path });
        reply.hijack();
        completeUpgrade(wallWss, req.raw, up, (ws) => acceptWallSocket(ws, wall, localOnly));
      });
    }
  };
}
