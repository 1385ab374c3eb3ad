// /sessions: one held lane each. Any hub answers any session: a hub that does not own it
// forwards to the owner found in the registry (one hop), so the client sees the same result.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { SessionCommand } from '../../wire/job-spec.ts';
import { PaprikaError } from '../../wire/errors.ts';
import { callerAuth, FORWARDED_HEADER } from '../../hub/forwarder.ts';
import type { Hub } from '../../hub/hub.ts';
import { DEFAULT_SESSION_IDLE_S } from '../../hub/sessions.ts';
import { parseOr400 } from '../validate.ts';

const OpenBody = z.strictObject({ idle_timeout_s: z.number().positive().max(86_400).optional() }).optional();
const SessionId = z.strictObject({ id: z.string().uuid('session ids are UUIDs') });

export function sessionRoutes(hub: Hub) {
  /** Run locally when this hub owns the session; otherwise forward once to the owner. */
  async function atOwner(req: FastifyRequest, reply: FastifyReply, id: string, local: () => Promise<unknown>) {
    if (hub.sessions.isLocal(id)) return local();
    if (req.headers[FORWARDED_HEADER]) throw new PaprikaError('not_found', { session_id: id }, 'No such session');
    const owner = await hub.registry.getSessionOwner(id);
    if (!owner) throw new PaprikaError('not_found', { session_id: id }, 'No such session');
    if (owner === hub.config.hubId) throw new PaprikaError('not_found', { session_id: id }, 'Session ended');
    const url = await hub.forwarder.hubUrl(owner);
    if (!url) throw new PaprikaError('bad_gateway', { session_id: id, owner }, 'The hub owning this session is not alive');
    const res = await hub.forwarder.forward('sessions', url, req.method, req.url, req.body ?? undefined, callerAuth(req));
    return reply.status(res.status).headers(res.headers).send(res.body);
  }

  return async (app: FastifyInstance) => {
    app.post('/sessions', async (req, reply) => {
      const body = parseOr400(OpenBody, req.body ?? undefined, 'session request');
      const opened = await hub.sessions.open(body?.idle_timeout_s ?? DEFAULT_SESSION_IDLE_S);
      if (opened) {
        const { lane: _lane, ...out } = opened;
        return reply.status(201).send(out);
      }
      if (!req.headers[FORWARDED_HEADER]) {
        const peer = await hub.forwarder.bestPeer().catch(() => undefined);
        if (peer) {
          const res = await hub.forwarder.forward('sessions.open', peer.url, 'POST', '/sessions', body ?? {}, callerAuth(req));
          return reply.status(res.status).headers(res.headers).send(res.body);
        }
      }
      throw new PaprikaError('no_free_lane', null, undefined, 2);
    });

    app.post('/sessions/:id/commands', async (req, reply) => {
      const { id } = parseOr400(SessionId, req.params, 'session id');
      const command = parseOr400(SessionCommand, req.body, 'session command');
      hub.urls.assertCommand(command);
      return atOwner(req, reply, id, () => hub.sessions.command(id, command));
    });

    app.delete('/sessions/:id', async (req, reply) => {
      const { id } = parseOr400(SessionId, req.params, 'session id');
      return atOwner(req, reply, id, async () => ({ session_id: id, closed: await hub.sessions.close(id) }));
    });
  };
}
