// POST /workers/register: enrolls a worker — the IP-derived (or explicit) id and a secret of
// its own that proves the id at every link (GET /workers/:id/link is the WebSocket upgrade in
// routes/sockets.ts; each route's token is in route-groups.ts). Also the hub-to-hub routes that need this hub's links.
import { isIPv4 } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { PaprikaError } from '../../wire/errors.ts';
import type { Config } from '../../config.ts';
import type { PeerRouting } from '../../hub/peer-routing.ts';
import type { WorkerAdmin } from '../../hub/worker-admin.ts';
import type { WorkerEnrollment } from '../../hub/worker-enrollment.ts';
import { findUnstorableText } from '../../domain/storable-text.ts';
import { jobJson } from '../json.ts';
import { parseOr400 } from '../validate.ts';

const Register = z.strictObject({
  lan_ip: z.string().refine(isIPv4, 'expected an IPv4 address'),
  // Stored in Postgres: no NUL (it answered 500 and left the id claimed in Redis), no control characters.
  hostname: z.string().min(1).max(253).regex(/^[^\u0000-\u001f\u007f]+$/, 'no control characters').refine((s) => findUnstorableText(s, 'hostname') === undefined, 'no unpaired surrogates'),
  worker_id: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/, 'not a worker id').optional(),
  secret: z.string().min(1).max(200).optional(),
});
const JobId = z.strictObject({ id: z.string().uuid() });

export interface WorkerRouteDeps {
  config: Pick<Config, 'hubId' | 'heartbeatS'>;
  enrollment: Pick<WorkerEnrollment, 'register'>;
  peers: Pick<PeerRouting, 'takeForwardedJob'>;
  workerAdmin: Pick<WorkerAdmin, 'cancelOnWorker'>;
}

export function workerRoutes({ config, enrollment, peers, workerAdmin }: WorkerRouteDeps) {
  return async (app: FastifyInstance) => {
    app.post('/workers/register', async (req, reply) => {
      const body = parseOr400(Register, req.body, 'registration');
      const out = await enrollment.register(body, req.ip);
      // The secret is shown once: nothing between here and the agent may keep a copy.
      reply.header('cache-control', 'no-store');
      return reply.status(out.created ? 201 : 200).send({ worker_id: out.worker_id, secret: out.secret, hub_id: config.hubId, heartbeat_s: config.heartbeatS });
    });

    // A peer hub with no free lane asks this one to take a queued job (one hop, no re-forward).
    app.post('/internal/jobs/:id/assign', async (req, reply) => {
      const { id } = parseOr400(JobId, req.params, 'job id');
      const out = await peers.takeForwardedJob(id);
      if (out.kind === 'not_found') throw new PaprikaError('not_found', { id }, 'No such job');
      if (out.kind === 'answered') return reply.status(200).send(jobJson(out.job));
      return reply.status(409).send({ error: 'no free lane here', code: 'conflict', details: { outcome: out.outcome } });
    });

    app.post('/internal/jobs/:id/cancel-on-worker', async (req) => {
      const { id } = parseOr400(JobId, req.params, 'job id');
      return { sent: await workerAdmin.cancelOnWorker(id) };
    });
  };
}
