// Errors at the edges are values with a code, an HTTP status and details (Fastify-style
// table). Routes throw PaprikaError; the HTTP layer turns it into `{error, details}`.
export const ERROR_CODES = {
  bad_request: { status: 400, message: 'The request is not valid' },
  url_denied: { status: 400, message: 'The URL is denied by the egress policy' },
  unauthorized: { status: 401, message: 'Missing or wrong bearer token' },
  cross_site: { status: 403, message: 'Cross-site request refused' },
  view_token_invalid: { status: 401, message: 'Missing, expired or wrong live-view token; open the lane again from the console' },
  origin_forbidden: { status: 403, message: 'This origin may not open the live view' },
  not_found: { status: 404, message: 'Not found' },
  no_live_view: { status: 404, message: 'This lane has no live view' },
  conflict: { status: 409, message: 'Conflict' },
  request_timeout: { status: 408, message: 'The request body arrived too slowly' },
  worker_enrolled: { status: 409, message: 'This worker id already has a credential; prove its secret, or an operator resets its credentials' },
  worker_not_enrolled: { status: 401, message: 'This worker id has no credential; register first' },
  worker_proof_invalid: { status: 401, message: "The link's proof does not match this worker id's credential" },
  rate_limited: { status: 429, message: 'Too many requests; retry later' },
  worker_offline: { status: 409, message: 'The worker is not linked to a live hub' },
  worker_alive: { status: 409, message: 'The worker is alive: only an offline worker can be forgotten (stop it first)' },
  payload_too_large: { status: 413, message: 'Request body too large' },
  idempotency_key_reused: { status: 422, message: 'This Idempotency-Key was used for a different request' },
  unsupported_media_type: { status: 415, message: 'Expected application/json' },
  misdirected: { status: 421, message: 'This hub does not answer for that Host' },
  upgrade_required: { status: 426, message: 'This route is a WebSocket' },
  bad_gateway: { status: 502, message: 'The owning hub did not answer' },
  peer_refused: { status: 502, message: "A peer hub refused this hub's credentials: every hub needs the same PAPRIKA_PEER_TOKEN" },
  queue_full: { status: 503, message: 'Too many queued jobs; retry later' },
  shutting_down: { status: 503, message: 'This hub is shutting down; retry on another hub' },
  database_unavailable: { status: 503, message: 'The job database is unreachable; retry later' },
  registry_unavailable: { status: 503, message: 'The fleet registry (Redis) did not answer in time; retry later' },
  no_free_lane: { status: 503, message: 'No free lane for a session; retry later' },
  links_waiting: { status: 503, message: 'Too many worker links are waiting for their hello; retry shortly' },
  no_free_cdp_lane: { status: 503, message: 'No free lane for a CDP client; retry later' },
  tunnel_refused: { status: 403, message: 'This tunnel token is not valid for this worker' },
  gateway_timeout: { status: 504, message: 'The owning hub did not answer in time' },
  internal: { status: 500, message: 'Internal error' },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export class PaprikaError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    readonly details: unknown = undefined,
    message?: string,
    /** Seconds for a Retry-After header (503s, 429s). */
    readonly retryAfterS?: number,
  ) {
    super(message ?? ERROR_CODES[code].message);
    this.name = 'PaprikaError';
    this.status = ERROR_CODES[code].status;
  }

  toBody(): { error: string; code: ErrorCode; details: unknown } {
    return { error: this.message, code: this.code, details: this.details ?? null };
  }
}

/** zod issues → a compact, stable list for `details`. */
export function issuesToDetails(issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>): Array<{ path: string; message: string }> {
  return issues.map((i) => ({ path: i.path.map(String).join('.') || '(root)', message: i.message }));
}

/**
 * What a failed fetch() says, with its cause: undici reports every network failure as "fetch
 * failed" and keeps the reason (ECONNREFUSED 127.0.0.1:8080, ENOTFOUND, a TLS error) in `cause`.
 */
export function fetchFailure(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const cause = (err as { cause?: { code?: string; message?: string } } | null)?.cause;
  if (!cause) return message;
  const why = cause.code && !String(cause.message ?? '').includes(cause.code) ? `${cause.code}: ${cause.message ?? ''}` : (cause.message ?? cause.code ?? '');
  return why ? `${message} (${why})` : message;
}
