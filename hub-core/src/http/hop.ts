// How a request reached this hub, for the forward-or-serve rules (hub/peer-routing.ts). The
// forwarded header survives only on a caller that proved itself a peer (server.ts's onRequest).
import type { FastifyRequest } from 'fastify';
import { callerAuth, FORWARDED_HEADER } from '../hub/forwarder.ts';
import type { Hop } from '../hub/peer-routing.ts';

export function hopOf(req: FastifyRequest): Hop {
  return { forwarded: Boolean(req.headers[FORWARDED_HEADER]), auth: callerAuth(req) };
}
