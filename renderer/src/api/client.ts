// The one module that talks to the hub. Everything else receives typed values or an ApiError;
// components never call it directly (the live controller and store actions do).
import { tokenScopeFor, type TokenScope } from '../model/hub-tokens.ts';
import type { AdminConfig, AdminEvent, HubInfo, Job, JobPage, LaneViewGrant, QueueResponse, WorkerDetail, StatsHistory, StatsResponse, Worker, WorkersResponse } from './types.ts';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details: unknown = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
  get unauthorized(): boolean {
    return this.status === 401;
  }
}

export interface ApiClientOptions {
  /** '' for same origin (the console served by a hub); an absolute URL in the desktop app. */
  baseUrl: string;
  /** Where the live-feed socket connects when not the API base (the desktop app proxies HTTP only). */
  eventsBaseUrl?: string;
  /** The bearer for a route group: /jobs and /sessions ('api') are guarded apart from /admin/*. */
  getToken: (scope: TokenScope) => string | null;
  fetchImpl?: typeof fetch;
  timeoutMs?: number;
}

export type ApiClient = ReturnType<typeof createApiClient>;

/** Must match hub-core/src/http/auth.ts. */
export const EVENTS_SUBPROTOCOL = 'paprika.v1';

function base64url(text: string): string {
  let bin = '';
  for (const byte of new TextEncoder().encode(text)) bin += String.fromCharCode(byte);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function createApiClient(opts: ApiClientOptions) {
  const base = opts.baseUrl.replace(/\/+$/, '');
  const doFetch = opts.fetchImpl ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
  const timeoutMs = opts.timeoutMs ?? 8000;

  async function request(method: string, path: string, body?: unknown): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json' };
    const token = opts.getToken(tokenScopeFor(path));
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      // A hung hub must surface as a failure, or the "link lost" banner would never show.
      res = await doFetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(timeoutMs) });
    } catch (err) {
      throw new ApiError(0, `hub unreachable: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (!res.ok) {
      let msg = `${method} ${path}: HTTP ${res.status}`;
      let details: unknown = null;
      try {
        const j = (await res.json()) as { error?: string; details?: unknown };
        if (j.error) msg = j.error;
        details = j.details ?? null;
      } catch {
        /* not JSON: keep the status line */
      }
      throw new ApiError(res.status, msg, details);
    }
    return res;
  }
  const json = async <T>(method: string, path: string, body?: unknown) => (await (await request(method, path, body)).json()) as T;
  const socketUrl = (origin: string, path: string) => {
    const http = new URL((opts.eventsBaseUrl || base || origin).replace(/\/+$/, '') + path);
    http.protocol = http.protocol === 'https:' ? 'wss:' : 'ws:';
    return http.toString();
  };

  return {
    config: () => json<AdminConfig>('GET', '/admin/config'),
    workers: () => json<WorkersResponse>('GET', '/admin/workers'),
    hubs: () => json<{ hubs: HubInfo[] }>('GET', '/admin/hubs'),
    stats: () => json<StatsResponse>('GET', '/admin/stats'),
    workerDetail: (id: string) => json<WorkerDetail>('GET', `/admin/workers/${encodeURIComponent(id)}/detail`),
    queue: () => json<QueueResponse>('GET', '/admin/queue'),
    statsHistory: (range: string) => json<StatsHistory>('GET', `/admin/stats/history?range=${encodeURIComponent(range)}`),
    setWorkerStatus: (id: string, status: string) => json<Worker>('PATCH', `/admin/workers/${encodeURIComponent(id)}`, { status }),
    /** Deletes the worker's credential: its id may enroll again (audited at the hub). */
    resetWorkerCredentials: (id: string) => json<{ worker_id: string; had_credential: boolean }>('POST', `/admin/workers/${encodeURIComponent(id)}/reset-credentials`),
    /** Forgets an offline worker fleet-wide (409 while it is alive; audited at the hub). */
    forgetWorker: (id: string) => json<{ worker_id: string; forgotten: boolean }>('DELETE', `/admin/workers/${encodeURIComponent(id)}`),
    /** A lane's live view with a short-lived token: the bare view_url opens nothing. */
    laneView: (id: string, lane: number) => json<LaneViewGrant>('POST', `/admin/workers/${encodeURIComponent(id)}/lanes/${lane}/view`),
    jobs: (q: { status?: string; limit?: number; before?: string }) => {
      const p = new URLSearchParams();
      if (q.status) p.set('status', q.status);
      p.set('limit', String(q.limit ?? 200));
      if (q.before) p.set('before', q.before);
      return json<JobPage>('GET', `/jobs?${p}`);
    },
    job: (id: string) => json<Job>('GET', `/jobs/${encodeURIComponent(id)}`),
    cancelJob: (id: string) => json<Job>('POST', `/jobs/${encodeURIComponent(id)}/cancel`),
    /** A new job that runs the earlier one's kind and spec again (the hub resolves it). */
    rerunJob: (id: string) => json<Job>('POST', '/jobs', { kind: 'rerun', spec: { job_id: id } }),
    /** Fetched as a blob (not a bare <img src>) so the bearer token travels with it. */
    assetBlob: async (id: string, name: string) => (await request('GET', `/jobs/${encodeURIComponent(id)}/assets/${encodeURIComponent(name)}`)).blob(),
    eventsUrl: (origin: string) => socketUrl(origin, '/admin/events'),
    /** The lane wall's thumbnails, relayed by the hub; same credential as the events socket. */
    wallUrl: (origin: string) => socketUrl(origin, '/admin/wall'),
    /**
     * Browsers cannot set headers on a WebSocket, and a token in the URL ends up in proxy logs:
     * the admin token rides as a subprotocol the hub reads but never echoes (it selects the first).
     */
    eventsProtocols: (): string[] => {
      const token = opts.getToken('admin');
      return token ? [EVENTS_SUBPROTOCOL, `bearer.${base64url(token)}`] : [EVENTS_SUBPROTOCOL];
    },
  };
}

/** Parse one /admin/events frame; anything unexpected is dropped rather than trusted. */
export function parseAdminEvent(data: unknown): AdminEvent | null {
  if (typeof data !== 'string') return null;
  try {
    const msg = JSON.parse(data) as { type?: unknown };
    if (msg && (msg.type === 'snapshot' || msg.type === 'job' || msg.type === 'error')) return msg as AdminEvent;
  } catch {
    /* malformed frame */
  }
  return null;
}
