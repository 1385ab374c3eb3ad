// /admin/*: the fleet-wide worker table, drain/standby, the hub registry, stats, config.
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Config } from '../../config.ts';
import { JOB_STATUSES } from '../../wire/job-spec.ts';
import { EXCLUSION_REASONS } from '../../domain/placement-verdict.ts';
import { PaprikaError } from '../../wire/errors.ts';
import { FORWARDED_HEADER } from '../../hub/forwarder.ts';
import type { FleetViewReader } from '../../hub/fleet-view.ts';
import type { StatsSampler } from '../../hub/stats.ts';
import type { ViewGrants } from '../../hub/view-grants.ts';
import type { WorkerAdmin } from '../../hub/worker-admin.ts';
import type { WorkerEnrollment } from '../../hub/worker-enrollment.ts';
import type { Clock } from '../../ports/clock.ts';
import type { JobStore } from '../../ports/job-store.ts';
import { HUB_HISTORY_S, type Registry } from '../../ports/registry.ts';
import type { AdminConfigJson, HubJson, StatsJson } from '../../wire/json.ts';
import { PACKAGE_VERSION } from '../../wire/version.ts';
import { hopOf } from '../hop.ts';
import { hubJson, workerJson } from '../json.ts';
import { parseOr400 } from '../validate.ts';
import { WorkersPage } from '../workers-page.ts';

export const WORKER_STATUSES = ['active', 'drain', 'standby'] as const;
const StatusBody = z.strictObject({ status: z.enum(WORKER_STATUSES) });
const WorkerId = z.strictObject({ id: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/, 'not a worker id') });
const LaneOfWorker = WorkerId.extend({ index: z.coerce.number().int().min(0).max(1023) });
/** Only a forwarding hub sends a body: the Origin of the request it received. */
const ViewBody = z.strictObject({ origin: z.string().max(2000).optional() }).optional();

export interface AdminRouteDeps {
  config: Pick<Config, 'hubId' | 'diskMaxPct' | 'workerTtlS' | 'heartbeatS'>;
  clock: Clock;
  fleetView: Pick<FleetViewReader, 'read'>;
  registry: Pick<Registry, 'listHubs'>;
  /** Reads only (counts, throughput, the audit log). */
  reads: Pick<JobStore, 'countByStatus' | 'throughput' | 'listAudit'>;
  stats: Pick<StatsSampler, 'series' | 'latest'>;
  workerAdmin: Pick<WorkerAdmin, 'setStatus' | 'forget'>;
  enrollment: Pick<WorkerEnrollment, 'resetCredentials'>;
  views: Pick<ViewGrants, 'grant'>;
}

export function adminRoutes({ config, clock, fleetView, registry, reads, stats, workerAdmin, enrollment, views }: AdminRouteDeps) {
  const actorOf = (req: FastifyRequest) => (req.headers[FORWARDED_HEADER] ? `hub:${String(req.headers[FORWARDED_HEADER])}` : `admin@${req.ip}`);

  return async (app: FastifyInstance) => {
    // A WorkersPageJson, encoded from each row's kept JSON (workers-page.ts).
    const workersPage = new WorkersPage();
    app.get('/admin/workers', async (_req, reply) => {
      const view = await fleetView.read();
      const pieces = workersPage.pieces(view);
      return reply
        .type('application/json; charset=utf-8')
        .header('content-length', pieces[0].length + pieces[1].length)
        .send(Readable.from(pieces));
    });

    app.patch('/admin/workers/:id', async (req, reply) => {
      const { id } = parseOr400(WorkerId, req.params, 'worker id');
      const { status } = parseOr400(StatusBody, req.body, 'status change');
      const out = await workerAdmin.setStatus(id, status, actorOf(req), hopOf(req));
      if (out.kind === 'forwarded') return reply.send(out.body);
      return { ...(out.row ? workerJson({ ...out.row, status }) : { worker_id: id, status, alive: false }), applied_by: out.appliedBy };
    });

    // Forget an offline worker now (PAPRIKA_WORKER_FORGET_S does it by itself later); 409 while alive.
    app.delete('/admin/workers/:id', async (req) => {
      const { id } = parseOr400(WorkerId, req.params, 'worker id');
      return workerAdmin.forget(id, actorOf(req));
    });

    // The operator's answer to `worker_enrolled`: the id may enroll again (a lost credential
    // file, a replaced machine). Any hub can do it: the credential lives in Postgres.
    app.post('/admin/workers/:id/reset-credentials', async (req) => {
      const { id } = parseOr400(WorkerId, req.params, 'worker id');
      const hadCredential = await enrollment.resetCredentials(id, actorOf(req));
      return { worker_id: id, had_credential: hadCredential };
    });

    // A lane's live view with a short-lived token (the fleet's bare view_url opens nothing).
    app.post('/admin/workers/:id/lanes/:index/view', async (req, reply) => {
      const { id, index } = parseOr400(LaneOfWorker, req.params, 'lane');
      const body = parseOr400(ViewBody, req.body ?? undefined, 'view request');
      const { forwarded, auth } = hopOf(req);
      const origin = forwarded ? body?.origin : req.headers.origin;
      const answer = await views.grant({ workerId: id, lane: index, origin, forwarded, auth });
      return reply.status(answer.status).header('cache-control', 'no-store').send(answer.body);
    });

    app.get('/admin/hubs', async (): Promise<{ hubs: HubJson[] }> => {
      const hubs = await registry.listHubs(clock.now(), HUB_HISTORY_S);
      return { hubs: hubs.map((h) => hubJson(h, config.hubId)) };
    });

    app.get('/admin/stats', async (): Promise<StatsJson> => {
      const now = clock.now();
      const [counts, throughput] = await Promise.all([reads.countByStatus(), reads.throughput(new Date(now - 3600_000))]);
      return {
        counts,
        throughput: throughput.map((b) => ({ minute: new Date(b.minute).toISOString(), succeeded: b.succeeded, failed: b.failed })),
        series: stats.series.map((p) => ({ t: new Date(p.t).toISOString(), queued: p.queued, in_flight: p.in_flight, capacity: p.capacity })),
        // Capacity counts only workers that take work; `excluded` says why the others do not.
        capacity: stats.latest ?? null,
        as_of: new Date(now).toISOString(),
      };
    });

    app.get('/admin/config', async (): Promise<AdminConfigJson> => ({
      hub_id: config.hubId,
      disk_max_pct: config.diskMaxPct,
      worker_ttl_s: config.workerTtlS,
      heartbeat_s: config.heartbeatS,
      statuses: WORKER_STATUSES,
      status_help: STATUS_HELP,
      job_statuses: JOB_STATUSES,
      version: PACKAGE_VERSION,
    }));

    app.get('/admin/audit', async (req) => {
      const { limit } = parseOr400(z.strictObject({ limit: z.coerce.number().int().min(1).max(1000).default(100) }), req.query, 'query');
      const rows = await reads.listAudit(limit);
      return { entries: rows.map((r) => ({ ...r, at: new Date(r.at).toISOString() })) };
    });

    app.get('/admin/*', async (req) => {
      throw new PaprikaError('not_found', { path: req.url });
    });
  };
}

const STATUS_HELP = { active: 'takes work when it has a free lane', drain: EXCLUSION_REASONS.drain, standby: EXCLUSION_REASONS.standby };
