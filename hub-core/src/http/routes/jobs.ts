// /jobs: submit (inline assignment, then queued), read, list, cancel, assets.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { JOB_STATUSES, JobRequest } from '../../wire/job-spec.ts';
import { findUnstorableText } from '../../domain/storable-text.ts';
import { PaprikaError } from '../../wire/errors.ts';
import type { JobService } from '../../hub/job-service.ts';
import type { PeerRouting } from '../../hub/peer-routing.ts';
import type { UrlGuard } from '../../hub/url-guard.ts';
import type { AssetStore } from '../../ports/asset-store.ts';
import type { JobStore } from '../../ports/job-store.ts';
import { assetHeaders } from '../content-types.ts';
import { hopOf } from '../hop.ts';
import { decodeJobCursor, encodeJobCursor } from '../job-cursor.ts';
import { jobJson, jobSummaryJson } from '../json.ts';
import { parseOr400 } from '../validate.ts';

const JobId = z.strictObject({ id: z.string().uuid('job ids are UUIDs') });
const AssetParams = z.strictObject({ id: z.string().uuid(), name: z.string().regex(/^[A-Za-z0-9_.-]{1,200}$/) });
const ListQuery = z.strictObject({
  status: z.enum(JOB_STATUSES).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  /** `next_cursor` of the previous page. */
  before: z.string().max(200).optional(),
});
const IdempotencyKey = z.string().min(1).max(200).regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces');

export interface JobRouteDeps {
  jobs: Pick<JobService, 'submit' | 'cancel'>;
  /** Reads only: every change of a job goes through the job services. */
  reads: Pick<JobStore, 'getJob' | 'listJobs'>;
  assets: Pick<AssetStore, 'get' | 'list'>;
  urls: Pick<UrlGuard, 'assertJob'>;
  peers: Pick<PeerRouting, 'cancelAtOwner'>;
}

export function jobRoutes({ jobs, reads, assets, urls, peers }: JobRouteDeps) {
  return async (app: FastifyInstance) => {
    app.post('/jobs', async (req: FastifyRequest, reply: FastifyReply) => {
      const body = parseOr400(JobRequest, req.body, 'job');
      const unstorable = findUnstorableText(body.spec, 'spec');
      if (unstorable) throw new PaprikaError('bad_request', [{ path: unstorable.path, message: `${unstorable.reason}: text the job database cannot store` }], 'Invalid job');
      urls.assertJob(body);
      const rawKey = req.headers['idempotency-key'];
      const key = rawKey === undefined ? null : parseOr400(IdempotencyKey, rawKey, 'Idempotency-Key header');
      const abort = new AbortController();
      // The client hung up before its answer: stop waiting for a lane. (Not the request's own
      // 'close': that fires as soon as the body has been read, which ended every wait at once.)
      reply.raw.on('close', () => {
        if (!reply.raw.writableFinished) abort.abort();
      });
      const { job, created, placedOnPeer } = await jobs.submit(body, key, abort.signal, hopOf(req));
      // A peer's lane took it (at once, or after the fleet-wide wait): its answer is the job.
      if (placedOnPeer !== undefined) return reply.status(201).send(placedOnPeer);
      return reply.status(created ? 201 : 200).send(jobJson(job));
    });

    app.get('/jobs', async (req) => {
      const q = parseOr400(ListQuery, req.query, 'query');
      const before = q.before === undefined ? undefined : decodeJobCursor(q.before);
      if (q.before !== undefined && !before) throw new PaprikaError('bad_request', [{ path: 'before', message: 'not a cursor this API made (use next_cursor)' }], 'Invalid query');
      // Summaries only: a list of jobs with multi-megabyte results made answers of 120 MB and
      // a 500 past 512 MB of JSON; the spec and result are in GET /jobs/:id.
      const rows = await reads.listJobs({ status: q.status, limit: q.limit, before });
      const last = rows.length === q.limit ? rows[rows.length - 1] : undefined;
      return { jobs: rows.map(jobSummaryJson), next_cursor: last ? encodeJobCursor(last) : null };
    });

    app.get('/jobs/:id', async (req) => {
      const { id } = parseOr400(JobId, req.params, 'job id');
      const job = await reads.getJob(id);
      if (!job) throw new PaprikaError('not_found', { id }, 'No such job');
      return jobJson(job, { assets: await assets.list(id) });
    });

    app.post('/jobs/:id/cancel', async (req) => {
      const { id } = parseOr400(JobId, req.params, 'job id');
      const out = await jobs.cancel(id);
      if (!out) throw new PaprikaError('not_found', { id }, 'No such job');
      // The worker runs on another hub's link: tell that hub to pass the cancel on.
      await peers.cancelAtOwner(out.job, out.sentToWorker, hopOf(req));
      return jobJson(out.job);
    });

    app.get('/jobs/:id/assets/:name', async (req, reply) => {
      const { id, name } = parseOr400(AssetParams, req.params, 'asset');
      const asset = await assets.get(id, name);
      if (!asset) throw new PaprikaError('not_found', { id, name }, 'No such asset');
      return reply.headers(assetHeaders(asset.contentType, name)).send(asset.data);
    });
  };
}
