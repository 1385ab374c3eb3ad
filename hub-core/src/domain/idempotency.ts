// What a repeated Idempotency-Key means (pure). The same request again is a retry: answer with
// the first job. A different request under the same key is a client bug that must not be
// answered with someone else's job (a fetch silently dropped): 422. A key older than the
// retention window is forgotten, so the new request makes a new job.

export interface KeyedJob {
  kind: string;
  spec: unknown;
  created_at: Date | string;
}

export type RepeatVerdict = 'same_request' | 'different_request' | 'expired';

/** JSON with object keys sorted: jsonb does not keep key order, so compare this form. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function decideRepeat(existing: KeyedJob, request: { kind: string; spec: unknown }, nowMs: number, ttlS: number): RepeatVerdict {
  if (new Date(existing.created_at).getTime() <= nowMs - ttlS * 1000) return 'expired';
  return existing.kind === request.kind && canonicalJson(existing.spec) === canonicalJson(request.spec) ? 'same_request' : 'different_request';
}
