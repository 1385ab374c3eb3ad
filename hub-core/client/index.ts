// The Paprika client SDK (`paprika/client`). Users never see the plumbing: 503/502/504 and
// refused connections are retried with jittered exponential backoff (honouring Retry-After)
// within a total deadline; a 4xx is never retried; every submit carries an Idempotency-Key,
// so a retried POST never makes a second job.
import { randomUUID } from 'node:crypto';
import { fetchFailure } from '../src/wire/errors.ts';

import type { JobJson, JobPageJson, JobStatus, JobSummaryJson, SessionJson } from '../src/wire/json.ts';

export type { JobStatus };
export type Job = JobJson;
export type JobSummary = JobSummaryJson;
export type JobPage = JobPageJson;
export type Session = SessionJson;

export type JobSpec =
  | { kind: 'fetch'; spec: { url: string; wait_until?: string; screenshot?: boolean; timeout_s?: number } }
  | { kind: 'macro'; spec: { steps: Array<Record<string, unknown> & { op: string }>; timeout_s?: number } }
  | { kind: 'rerun'; spec: { job_id: string; timeout_s?: number } }
  | { kind: 'sleep'; spec: { ms: number; timeout_s?: number } };

export interface ClientOptions {
  /** Hub (or nginx) base URL, e.g. http://127.0.0.1:8080 */
  url: string;
  /** PAPRIKA_API_TOKEN of the hub, if set. */
  token?: string;
  /** Total time one call may spend retrying (ms). Default 60 s. */
  deadlineMs?: number;
  /** First backoff step (ms). Default 100. */
  baseDelayMs?: number;
  /** Largest backoff step (ms). Default 5 s. */
  maxDelayMs?: number;
  /** Per-attempt timeout (ms). Default 30 s; POST /jobs may wait up to ASSIGN_WAIT on the hub. */
  attemptTimeoutMs?: number;
  fetch?: typeof fetch;
  /** Where the retry and wait loops read the time and sleep; tests pass a fake. Default: the system's. */
  clock?: ClientClock;
}

/** The part of a clock the client needs (the hub's `Clock` and `ManualClock` fit). */
export interface ClientClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

const systemTime: ClientClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
};

/** The hub answered with an error status; `status`, `code` and `details` come from `{error, code, details}`. */
export class PaprikaApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: unknown,
  ) {
    super(message);
    this.name = 'PaprikaApiError';
  }
}

/** Retries ran out before the hub gave a usable answer. `cause` is the last failure. */
export class PaprikaUnavailableError extends Error {
  constructor(
    message: string,
    readonly attempts: number,
    override readonly cause?: unknown,
  ) {
    super(message);
    this.name = 'PaprikaUnavailableError';
  }
}

export class PaprikaTimeoutError extends Error {
  constructor(
    readonly jobId: string,
    readonly lastStatus: JobStatus | undefined,
  ) {
    super(`job ${jobId} did not finish in time (last status: ${lastStatus ?? 'unknown'})`);
    this.name = 'PaprikaTimeoutError';
  }
}

const RETRY_STATUSES = new Set([502, 503, 504]);
/** Seconds one long poll may hold a request (below common proxy idle timeouts of 60 s). */
const LONG_POLL_S = 25;
const TERMINAL: ReadonlySet<JobStatus> = new Set(['succeeded', 'failed', 'canceled']);

function isConnectionError(err: unknown): boolean {
  const codes = ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT', 'EHOSTUNREACH'];
  for (let e: unknown = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: string }).code;
    if (code && codes.includes(code)) return true;
    if (e instanceof Error && (e.name === 'TimeoutError' || e.message === 'fetch failed' || /other side closed/.test(e.message))) return true;
  }
  return false;
}

export class PaprikaClient {
  private readonly o: Required<Omit<ClientOptions, 'token'>> & { token?: string };

  /** The base URL with a trailing slash: a hub behind a sub-path (http://host/paprika) keeps it. */
  private readonly base: URL;

  constructor(opts: ClientOptions) {
    this.o = { deadlineMs: 60_000, baseDelayMs: 100, maxDelayMs: 5000, attemptTimeoutMs: 30_000, fetch: globalThis.fetch, clock: systemTime, ...opts };
    let base: URL | undefined;
    try {
      base = new URL(opts.url);
    } catch {
      base = undefined;
    }
    if (!base || (base.protocol !== 'http:' && base.protocol !== 'https:')) throw new TypeError(`createClient: option url must be the hub's (or nginx's) http(s) URL, such as http://127.0.0.1:8080; got ${JSON.stringify(opts.url)}`);
    if (!base.pathname.endsWith('/')) base.pathname += '/';
    this.base = base;
  }

  /** One API call with the retry policy. */
  async request<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, deadlineMs = this.o.deadlineMs): Promise<T> {
    const clock = this.o.clock;
    const until = clock.now() + deadlineMs;
    let attempt = 0;
    let last: unknown;
    for (;;) {
      attempt++;
      let retryAfterMs: number | undefined;
      try {
        const h: Record<string, string> = { ...headers };
        if (body !== undefined) h['content-type'] = 'application/json';
        if (this.o.token) h.authorization = `Bearer ${this.o.token}`;
        const res = await this.o.fetch(new URL(path.replace(/^\//, ''), this.base), {
          method,
          headers: h,
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(Math.max(1, Math.ceil(Math.min(this.o.attemptTimeoutMs, until - clock.now())))),
        });
        const text = await res.text();
        const parsed = text ? safeJson(text) : null;
        if (res.ok) return parsed as T;
        const err = parsed as { error?: string; code?: string; details?: unknown } | null;
        const apiError = new PaprikaApiError(res.status, err?.code ?? String(res.status), err?.error ?? `HTTP ${res.status}`, err?.details ?? null);
        if (!RETRY_STATUSES.has(res.status)) throw apiError;
        last = apiError;
        const ra = res.headers.get('retry-after');
        if (ra && Number.isFinite(Number(ra))) retryAfterMs = Number(ra) * 1000;
      } catch (err) {
        if (err instanceof PaprikaApiError && !RETRY_STATUSES.has(err.status)) throw err;
        if (!(err instanceof PaprikaApiError) && !isConnectionError(err)) throw err;
        last = err;
      }
      const step = Math.min(this.o.maxDelayMs, this.o.baseDelayMs * 2 ** Math.min(attempt - 1, 16));
      const delay = Math.max(retryAfterMs ?? 0, step / 2 + Math.random() * (step / 2));
      if (clock.now() + delay >= until) throw new PaprikaUnavailableError(`${method} ${path}: hub at ${this.base.origin}${this.base.pathname.replace(/\/$/, '')} unavailable after ${attempt} attempt(s): ${last instanceof PaprikaApiError ? last.message : fetchFailure(last)}`, attempt, last);
      await clock.sleep(delay);
    }
  }

  /** Submit a job. The same idempotency key is sent on every retry: at most one job is made. */
  submit(job: JobSpec, opts: { idempotencyKey?: string } = {}): Promise<Job> {
    return this.request<Job>('POST', '/jobs', job, { 'idempotency-key': opts.idempotencyKey ?? randomUUID() });
  }

  get(id: string): Promise<Job> {
    return this.request<Job>('GET', `/jobs/${encodeURIComponent(id)}`);
  }

  /** The newest jobs as summaries (no spec or result: `get` has them). */
  list(filter: { status?: JobStatus; limit?: number } = {}): Promise<JobSummary[]> {
    return this.listPage(filter).then((p) => p.jobs);
  }

  /** One page of summaries, newest first; pass the page's `next_cursor` as `before` for the next. */
  listPage(filter: { status?: JobStatus; limit?: number; before?: string } = {}): Promise<JobPage> {
    const q = new URLSearchParams();
    if (filter.status) q.set('status', filter.status);
    if (filter.limit) q.set('limit', String(filter.limit));
    if (filter.before) q.set('before', filter.before);
    return this.request<JobPage>('GET', `/jobs${q.size ? `?${q}` : ''}`);
  }

  /**
   * Until the job is terminal or `timeout` ms pass: long polls (`GET /jobs/:id?wait_s=`), which
   * the hub answers as soon as the job ends. A hub that answers at once (one older than the
   * long poll) is polled with backoff (50 ms → 1 s) instead.
   */
  async wait(id: string, opts: { timeout?: number } = {}): Promise<Job> {
    const clock = this.o.clock;
    const until = clock.now() + (opts.timeout ?? 300_000);
    let delay = 50;
    let last: Job | undefined;
    for (;;) {
      const waitS = Math.max(0, Math.min(LONG_POLL_S, Math.floor(this.o.attemptTimeoutMs / 1000) - 5, Math.floor((until - clock.now()) / 1000)));
      const asked = clock.now();
      const path = `/jobs/${encodeURIComponent(id)}${waitS > 0 ? `?wait_s=${waitS}` : ''}`;
      last = await this.request<Job>('GET', path, undefined, {}, Math.max(1000, until - clock.now() + 5000));
      if (TERMINAL.has(last.status)) return last;
      if (clock.now() >= until) throw new PaprikaTimeoutError(id, last.status);
      // A long poll that came back early without an end: no long poll there; back off.
      if (waitS === 0 || clock.now() - asked < waitS * 500) {
        if (clock.now() + delay > until) throw new PaprikaTimeoutError(id, last.status);
        await clock.sleep(delay);
        delay = Math.min(1000, delay * 1.5);
      }
    }
  }

  /** submit + wait. */
  async run(job: JobSpec, opts: { timeout?: number; idempotencyKey?: string } = {}): Promise<Job> {
    const submitted = await this.submit(job, opts);
    return TERMINAL.has(submitted.status) ? submitted : this.wait(submitted.id, opts);
  }

  /**
   * Submit many jobs in one request per PAPRIKA_MAX_BATCH-sized chunk (`batchSize`, default 500);
   * each item gets an Idempotency-Key unless it has one, so a retried chunk makes no job twice.
   * Jobs come back in the items' order.
   */
  async submitMany(items: Array<JobSpec & { idempotencyKey?: string }>, opts: { batchSize?: number } = {}): Promise<Job[]> {
    const size = opts.batchSize ?? 500;
    const out: Job[] = [];
    for (let i = 0; i < items.length; i += size) {
      const chunk = items.slice(i, i + size).map(({ idempotencyKey, ...job }) => ({ ...job, idempotency_key: idempotencyKey ?? randomUUID() }));
      out.push(...(await this.request<{ jobs: Job[] }>('POST', '/jobs/batch', { jobs: chunk })).jobs);
    }
    return out;
  }

  /** submitMany, then wait for each (long polls, all at once); results in the items' order. */
  async runMany(items: Array<JobSpec & { idempotencyKey?: string }>, opts: { timeout?: number; batchSize?: number } = {}): Promise<Job[]> {
    const submitted = await this.submitMany(items, opts);
    return Promise.all(submitted.map((job) => (TERMINAL.has(job.status) ? job : this.wait(job.id, opts))));
  }

  cancel(id: string): Promise<Job> {
    return this.request<Job>('POST', `/jobs/${encodeURIComponent(id)}/cancel`, {});
  }

  openSession(opts: { idleTimeoutS?: number } = {}): Promise<Session> {
    return this.request<Session>('POST', '/sessions', opts.idleTimeoutS ? { idle_timeout_s: opts.idleTimeoutS } : {});
  }

  command<T = unknown>(sessionId: string, command: Record<string, unknown> & { op: string }): Promise<T> {
    return this.request<T>('POST', `/sessions/${encodeURIComponent(sessionId)}/commands`, command);
  }

  close(sessionId: string): Promise<{ session_id: string; closed: boolean }> {
    return this.request('DELETE', `/sessions/${encodeURIComponent(sessionId)}`);
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { error: text.slice(0, 500) };
  }
}

export function createClient(opts: ClientOptions): PaprikaClient {
  return new PaprikaClient(opts);
}
