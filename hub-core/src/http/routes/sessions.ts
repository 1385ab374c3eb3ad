// /sessions: one held lane each. Any hub answers any session: a hub that does not own it
// forwards to the owner found in the registry (one hop), so the client sees the same result.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { SessionCommand } from '../../wire/job-spec.ts';
import { PaprikaError } from '../../wire/errors.ts';
import type { PeerRouting } from '../../hub/peer-routing.ts';
import type { ForwardResponse } from '../../hub/forwarder.ts';
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
      // A client that leaves before the answer never learns the session's id: nobody could use
      // or end it, and its lane stayed held for idle_timeout_s (up to a day). So it is closed.
      const gone = new AbortController();
      const socket = req.raw.socket;
      const onGone = () => gone.abort();
      socket.once('close', onGone);
      const send = async ({ lane: _lane, ...out }: NonNullable<Awaited<ReturnType<typeof sessions.open>>>) => {
        if (gone.signal.aborted) await sessions.close(out.session_id).catch(() => false);
        return reply.status(201).send(out);
      };
      const relay = async (res: ForwardResponse) => {
        const id = (res.body as { session_id?: unknown } | null)?.session_id;
        if (gone.signal.aborted && res.status === 201 && typeof id === 'string') await peers.toSessionOwner(id, hop, { method: 'DELETE', path: `/sessions/${id}`, body: undefined }).catch(() => undefined);
        return reply.status(res.status).headers(res.headers).send(res.body);
      };
      try {
        // A free lane here; else at once the peer with the most free lanes; only a full fleet waits ASSIGN_WAIT here.
        const refused = new Set<string>();
        const now = await sessions.open(idleS, gone.signal, { waitS: 0, refused });
        if (now) return await send(now);
        // Gone already: no session is opened on a peer for nobody.
        if (gone.signal.aborted) throw new PaprikaError('no_free_lane', null, 'the client left before a lane was found');
        // A peer that failed (down, or refusing this hub's PAPRIKA_PEER_TOKEN) does not end the
        // wait for a lane here; the last try below answers with its error if it fails again.
        const early = await peers.openSessionOnPeer(body ?? {}, hop).catch(() => undefined);
        if (early?.status === 201) return await relay(early);
        const waited = await sessions.open(idleS, gone.signal, { refused });
        if (waited) return await send(waited);
        if (gone.signal.aborted) throw new PaprikaError('no_free_lane', null, 'the client left before a lane was found');
        const res = await peers.openSessionOnPeer(body ?? {}, hop);
        if (res) return await relay(res);
        throw new PaprikaError('no_free_lane', null, undefined, 2);
      } finally {
        socket.off('close', onGone);
      }
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
