// /jobs: submit (inline assignment, then queued), read, list, cancel, assets.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { JOB_STATUSES, JobRequest } from '../../wire/job-spec.ts';
import { findUnstorableText } from '../../domain/storable-text.ts';
import { PaprikaError } from '../../wire/errors.ts';
import type { BatchItem, JobService } from '../../hub/job-service.ts';
import type { JobWaiter } from '../../hub/job-waiter.ts';
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
/** `wait_s`: hold the answer until the job ends or this many seconds pass (a long poll). */
const JobQuery = z.strictObject({ wait_s: z.coerce.number().min(0).max(60).optional() });
const IdempotencyKey = z.string().min(1).max(200).regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces');
const BatchKey = z.object({ idempotency_key: IdempotencyKey.optional() });

/** One item of a batch: the POST /jobs checks, each problem's path starting `jobs.<index>`. */
function batchItem(raw: unknown, index: number, urls: Pick<UrlGuard, 'assertJob'>): BatchItem {
  const under = (path: string | undefined) => `jobs.${index}${path && path !== '(root)' ? `.${path}` : ''}`;
  try {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new PaprikaError('bad_request', [{ path: '', message: 'a job is an object {kind, spec, idempotency_key?}' }]);
    const { idempotency_key, ...request } = raw as Record<string, unknown>;
    const key = parseOr400(BatchKey, { idempotency_key }, 'idempotency_key').idempotency_key ?? null;
    const req = parseOr400(JobRequest, request, 'job');
    const unstorable = findUnstorableText(req.spec, 'spec');
    if (unstorable) throw new PaprikaError('bad_request', [{ path: unstorable.path, message: `${unstorable.reason}: text the job database cannot store` }], 'Invalid job');
    urls.assertJob(req);
    return { req, key };
  } catch (err) {
    if (!(err instanceof PaprikaError)) throw err;
    const d = err.details;
    const details = Array.isArray(d) ? d.map((x: { path?: string; message: string }) => ({ ...x, index, path: under(x.path) })) : { ...(d as object), index, field: under((d as { field?: string } | null)?.field) };
    throw new PaprikaError(err.code, details, `${err.message} (batch item ${index})`, err.retryAfterS);
  }
}

export interface JobRouteDeps {
  jobs: Pick<JobService, 'submit' | 'submitMany' | 'cancel'>;
  /** PAPRIKA_MAX_BATCH: most items in one POST /jobs/batch. */
  maxBatch: number;
  /** Reads only: every change of a job goes through the job services. */
  reads: Pick<JobStore, 'getJob' | 'listJobs'>;
  assets: Pick<AssetStore, 'get' | 'list'>;
  urls: Pick<UrlGuard, 'assertJob'>;
  peers: Pick<PeerRouting, 'cancelAtOwner'>;
  waits: Pick<JobWaiter, 'untilDone'>;
}

export function jobRoutes({ jobs, maxBatch, reads, assets, urls, peers, waits }: JobRouteDeps) {
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

    app.post('/jobs/batch', async (req, reply) => {
      const body = parseOr400(z.strictObject({ jobs: z.array(z.unknown()).min(1).max(maxBatch) }), req.body, 'batch');
      // Every item is checked before anything is written: one bad item is a 400 naming it.
      const items = body.jobs.map((raw, index) => batchItem(raw, index, urls));
      const rows = await jobs.submitMany(items);
      return reply.status(201).send({ jobs: rows.map((row) => jobJson(row)) });
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

    app.get('/jobs/:id', async (req, reply) => {
      const { id } = parseOr400(JobId, req.params, 'job id');
      const { wait_s } = parseOr400(JobQuery, req.query, 'query');
      const hungUp = new AbortController();
      reply.raw.on('close', () => {
        if (!reply.raw.writableFinished) hungUp.abort();
      });
      const job = wait_s ? await waits.untilDone(id, wait_s * 1000, hungUp.signal) : await reads.getJob(id);
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
