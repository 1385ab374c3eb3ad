// /sessions: one held lane each. Any hub answers any session: a hub that does not own it
// forwards to the owner found in the registry (one hop), so the client sees the same result.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { SessionCommand } from '../../wire/job-spec.ts';
import { PaprikaError } from '../../wire/errors.ts';
import type { PeerRouting } from '../../hub/peer-routing.ts';
import { DEFAULT_SESSION_IDLE_S, type SessionService } from '../../hub/sessions.ts';
import type { UrlGuard } from '../../hub/url-guard.ts';
import { hopOf } from '../hop.ts';
import { parseOr400 } from '../validate.ts';

const OpenBody = z.strictObject({ idle_timeout_s: z.number().positive().max(86_400).optional() }).optional();
const SessionId = z.strictObject({ id: z.string().uuid('session ids are UUIDs') });

export interface SessionRouteDeps {
  sessions: Pick<SessionService, 'isLocal' | 'open' | 'command' | 'close'>;
  urls: Pick<UrlGuard, 'assertCommand'>;
  peers: Pick<PeerRouting, 'openSessionOnPeer' | 'toSessionOwner'>;
}

export function sessionRoutes({ sessions, urls, peers }: SessionRouteDeps) {
  /** Run locally when this hub owns the session; otherwise forward once to the owner. */
  async function atOwner(req: FastifyRequest, reply: FastifyReply, id: string, local: () => Promise<unknown>) {
    if (sessions.isLocal(id)) return local();
    const res = await peers.toSessionOwner(id, hopOf(req), { method: req.method, path: req.url, body: req.body ?? undefined });
    return reply.status(res.status).headers(res.headers).send(res.body);
  }

  return async (app: FastifyInstance) => {
    app.post('/sessions', async (req, reply) => {
      const body = parseOr400(OpenBody, req.body ?? undefined, 'session request');
      const idleS = body?.idle_timeout_s ?? DEFAULT_SESSION_IDLE_S;
      const hop = hopOf(req);
      const send = ({ lane: _lane, ...out }: NonNullable<Awaited<ReturnType<typeof sessions.open>>>) => reply.status(201).send(out);
      // A free lane here; else at once the peer with the most free lanes; only a full fleet waits ASSIGN_WAIT here.
      const refused = new Set<string>();
      const now = await sessions.open(idleS, undefined, { waitS: 0, refused });
      if (now) return send(now);
      const early = await peers.openSessionOnPeer(body ?? {}, hop);
      if (early?.status === 201) return reply.status(201).headers(early.headers).send(early.body);
      const waited = await sessions.open(idleS, undefined, { refused });
      if (waited) return send(waited);
      const res = await peers.openSessionOnPeer(body ?? {}, hop);
      if (res) return reply.status(res.status).headers(res.headers).send(res.body);
      throw new PaprikaError('no_free_lane', null, undefined, 2);
    });

    app.post('/sessions/:id/commands', async (req, reply) => {
      const { id } = parseOr400(SessionId, req.params, 'session id');
      const command = parseOr400(SessionCommand, req.body, 'session command');
      urls.assertCommand(command);
      return atOwner(req, reply, id, () => sessions.command(id, command));
    });

    app.delete('/sessions/:id', async (req, reply) => {
      const { id } = parseOr400(SessionId, req.params, 'session id');
      return atOwner(req, reply, id, async () => ({ session_id: id, closed: await sessions.close(id) }));
    });
  };
}
