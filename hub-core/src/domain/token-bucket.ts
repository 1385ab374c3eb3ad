// A token bucket, as plain data: `ratePerMin` tokens refill per minute up to `burst`; a
// request takes one. Used to bound POST /workers/register per source and overall.
export interface Bucket {
  tokens: number;
  at: number;
}

export interface BucketLimit {
  ratePerMin: number;
  burst: number;
}

export type Take = { ok: true; bucket: Bucket } | { ok: false; bucket: Bucket; retryAfterMs: number };

export function refill(b: Bucket | undefined, now: number, limit: BucketLimit): Bucket {
  if (!b) return { tokens: limit.burst, at: now };
  const elapsed = Math.max(0, now - b.at);
  return { tokens: Math.min(limit.burst, b.tokens + (elapsed * limit.ratePerMin) / 60_000), at: now };
}

export function takeToken(b: Bucket | undefined, now: number, limit: BucketLimit): Take {
  const full = refill(b, now, limit);
  if (full.tokens >= 1) return { ok: true, bucket: { tokens: full.tokens - 1, at: now } };
  return { ok: false, bucket: full, retryAfterMs: Math.ceil(((1 - full.tokens) * 60_000) / limit.ratePerMin) };
}
