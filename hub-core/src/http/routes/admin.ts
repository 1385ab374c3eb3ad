// /admin/*: the fleet-wide worker table, drain/standby, the hub registry, stats, config.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { JOB_STATUSES } from '../../wire/job-spec.ts';
import { PaprikaError } from '../../wire/errors.ts';
import { PACKAGE_VERSION } from '../../wire/version.ts';
import { callerAuth, FORWARDED_HEADER } from '../../hub/forwarder.ts';
import type { Hub } from '../../hub/hub.ts';
import { ViewGrants } from '../../hub/view-grants.ts';
import { hubJson, workerJson } from '../json.ts';
import { parseOr400 } from '../validate.ts';
import { HUB_HISTORY_S } from '../../ports/registry.ts';

export const WORKER_STATUSES = ['active', 'drain', 'standby'] as const;
const StatusBody = z.strictObject({ status: z.enum(WORKER_STATUSES) });
const WorkerId = z.strictObject({ id: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/, 'not a worker id') });
const LaneOfWorker = WorkerId.extend({ index: z.coerce.number().int().min(0).max(1023) });
/** Only a forwarding hub sends a body: the Origin of the request it received. */
const ViewBody = z.strictObject({ origin: z.string().max(2000).optional() }).optional();

export function adminRoutes(hub: Hub) {
  const views = new ViewGrants(hub);
  const actorOf = (req: FastifyRequest) => (req.headers[FORWARDED_HEADER] ? `hub:${String(req.headers[FORWARDED_HEADER])}` : `admin@${req.ip}`);

  return async (app: FastifyInstance) => {
    app.get('/admin/workers', async () => {
      const view = await hub.fleetView.read();
      return { workers: view.workers.map(workerJson), as_of: new Date(view.as_of).toISOString(), stale: view.stale };
    });

    app.patch('/admin/workers/:id', async (req, reply) => {
      const { id } = parseOr400(WorkerId, req.params, 'worker id');
      const { status } = parseOr400(StatusBody, req.body, 'status change');
      // Durable first: the status outlives the link and this hub (re-read at every hello).
      await hub.ledger.recordWorkerStatus(id, status, actorOf(req));
      let appliedBy = hub.config.hubId;
      if (!(await hub.links.pushStatus(id, status)) && !req.headers[FORWARDED_HEADER]) {
        const owner = await hub.registry.getOwner(id).catch(() => undefined);
        const url = owner && owner !== hub.config.hubId ? await hub.forwarder.hubUrl(owner) : undefined;
        if (url) {
          const res = await hub.forwarder.forward('admin.workers', url, 'PATCH', `/admin/workers/${id}`, { status }, callerAuth(req));
          if (res.status === 200) return reply.send(res.body);
          appliedBy = 'nobody';
        } else appliedBy = 'nobody'; // offline: the stored status applies when it links
      }
      await hub.publisher.flush();
      const view = await hub.fleetView.read();
      const row = view.workers.find((w) => w.worker_id === id);
      return { ...(row ? workerJson({ ...row, status }) : { worker_id: id, status, alive: false }), applied_by: appliedBy };
    });

    // The operator's answer to `worker_enrolled`: the id may enroll again (a lost credential
    // file, a replaced machine). Any hub can do it: the credential lives in Postgres.
    app.post('/admin/workers/:id/reset-credentials', async (req) => {
      const { id } = parseOr400(WorkerId, req.params, 'worker id');
      const hadCredential = await hub.enrollment.resetCredentials(id, actorOf(req));
      return { worker_id: id, had_credential: hadCredential };
    });

    // A lane's live view with a short-lived token (the fleet's bare view_url opens nothing).
    app.post('/admin/workers/:id/lanes/:index/view', async (req, reply) => {
      const { id, index } = parseOr400(LaneOfWorker, req.params, 'lane');
      const body = parseOr400(ViewBody, req.body ?? undefined, 'view request');
      const forwarded = Boolean(req.headers[FORWARDED_HEADER]);
      const origin = forwarded ? body?.origin : req.headers.origin;
      const answer = await views.grant({ workerId: id, lane: index, origin, forwarded, auth: callerAuth(req) });
      return reply.status(answer.status).header('cache-control', 'no-store').send(answer.body);
    });

    app.get('/admin/hubs', async () => {
      const hubs = await hub.registry.listHubs(hub.clock.now(), HUB_HISTORY_S);
      return { hubs: hubs.map((h) => hubJson(h, hub.config.hubId)) };
    });

    app.get('/admin/stats', async () => {
      const now = hub.clock.now();
      const [counts, throughput] = await Promise.all([hub.store.countByStatus(), hub.store.throughput(new Date(now - 3600_000))]);
      return {
        counts,
        throughput: throughput.map((b) => ({ minute: new Date(b.minute).toISOString(), succeeded: b.succeeded, failed: b.failed })),
        series: hub.stats.series.map((p) => ({ t: new Date(p.t).toISOString(), queued: p.queued, in_flight: p.in_flight, capacity: p.capacity })),
        // Capacity counts only workers that take work; `excluded` says why the others do not.
        capacity: hub.stats.latest ?? null,
        as_of: new Date(now).toISOString(),
      };
    });

    app.get('/admin/config', async () => ({
      hub_id: hub.config.hubId,
      disk_max_pct: hub.config.diskMaxPct,
      worker_ttl_s: hub.config.workerTtlS,
      heartbeat_s: hub.config.heartbeatS,
      statuses: WORKER_STATUSES,
      job_statuses: JOB_STATUSES,
      version: PACKAGE_VERSION,
    }));

    app.get('/admin/audit', async (req) => {
      const { limit } = parseOr400(z.strictObject({ limit: z.coerce.number().int().min(1).max(1000).default(100) }), req.query, 'query');
      const rows = await hub.store.listAudit(limit);
      return { entries: rows.map((r) => ({ ...r, at: new Date(r.at).toISOString() })) };
    });

    app.get('/admin/*', async (req) => {
      throw new PaprikaError('not_found', { path: req.url });
    });
  };
}

