// Live-view tokens: the hub signs, the worker's view server checks. A token is
// base64url(JSON payload) + '.' + base64url(HMAC-SHA256(view_key, that base64url text)).
// The key is random per worker link and sent in `welcome`, so only the hub holding the link
// can sign for it, and a new link (new key) ends every token of the old one.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

/** How long a token may be used to open a view page or a stream (the console opens at once). */
export const VIEW_TOKEN_TTL_MS = 60_000;
/** The query parameter that carries the token on view URLs. */
export const VIEW_TOKEN_PARAM = 'vt';
/** Longer tokens are refused unread: a real one is a few hundred characters. */
const MAX_TOKEN_CHARS = 4096;

const ViewTokenPayload = z.strictObject({
  worker_id: z.string().min(1).max(200),
  lane: z.number().int().min(0),
  /** Epoch ms after which the token opens nothing. */
  exp: z.number(),
  scope: z.literal('view'),
  /** The Origin of the admin request that asked for it, when it had one. */
  origin: z.string().max(2000).optional(),
});
export type ViewTokenPayload = z.infer<typeof ViewTokenPayload>;

export type ViewTokenRefusal = 'missing' | 'malformed' | 'bad_signature' | 'expired' | 'wrong_worker' | 'wrong_lane' | 'no_key';
export type ViewTokenCheck = { ok: true; payload: ViewTokenPayload } | { ok: false, reason: ViewTokenRefusal };

/** A fresh key for one link: 32 random bytes, base64url. */
export function newViewKey(): string {
  return randomBytes(32).toString('base64url');
}

const mac = (key: string, body: string) => createHmac('sha256', Buffer.from(key, 'base64url')).update(body).digest();

export function signViewToken(payload: ViewTokenPayload, key: string): string {
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${body}.${mac(key, body).toString('base64url')}`;
}

/** Checks signature first (nothing unsigned is parsed), then scope, worker, lane and expiry. */
export function verifyViewToken(token: string | null | undefined, key: string | undefined, expect: { workerId: string | undefined; lane: number; nowMs: number }): ViewTokenCheck {
  if (!token) return { ok: false, reason: 'missing' };
  if (!key || !expect.workerId) return { ok: false, reason: 'no_key' };
  if (token.length > MAX_TOKEN_CHARS) return { ok: false, reason: 'malformed' };
  const dot = token.indexOf('.');
  if (dot <= 0 || dot !== token.lastIndexOf('.')) return { ok: false, reason: 'malformed' };
  const body = token.slice(0, dot);
  // Compared as text: base64url has several spellings of one digest, only ours is accepted.
  const presented = Buffer.from(token.slice(dot + 1));
  const expected = Buffer.from(mac(key, body).toString('base64url'));
  // Lengths first (timingSafeEqual throws on a mismatch); a length says nothing about the key.
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return { ok: false, reason: 'bad_signature' };
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  const parsed = ViewTokenPayload.safeParse(raw);
  if (!parsed.success) return { ok: false, reason: 'malformed' };
  const p = parsed.data;
  if (p.worker_id !== expect.workerId) return { ok: false, reason: 'wrong_worker' };
  if (p.lane !== expect.lane) return { ok: false, reason: 'wrong_lane' };
  if (expect.nowMs >= p.exp) return { ok: false, reason: 'expired' };
  return { ok: true, payload: p };
}

/**
 * Who may use a valid token, by the request's Origin: a non-browser client (no Origin), the
 * view server's own pages (the view page opens the stream), or the origin the token was
 * issued to. A page a job opened in a lane has its own origin and is refused even with a token.
 */
export function viewOriginAllowed(origin: string | undefined, payload: ViewTokenPayload, ownOrigins: readonly string[]): boolean {
  if (origin === undefined) return true;
  return ownOrigins.includes(origin) || (payload.origin !== undefined && payload.origin === origin);
}

/** `url` with the token added as ?vt=. */
export function withViewToken(url: string, token: string): string {
  const u = new URL(url);
  u.searchParams.set(VIEW_TOKEN_PARAM, token);
  return u.toString();
}
