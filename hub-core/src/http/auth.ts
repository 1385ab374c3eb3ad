// Bearer tokens (SPEC.md § Environment): compared in constant time; a route whose token is
// unset is open (and the hub then binds to 127.0.0.1 by default).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { PaprikaError } from '../errors.ts';

const digest = (s: string) => createHash('sha256').update(s).digest();

export function tokenMatches(expected: string | undefined, presented: string | undefined): boolean {
  if (!expected) return true;
  if (!presented) return false;
  // Hash both so lengths match and timingSafeEqual leaks nothing about the length either.
  return timingSafeEqual(digest(expected), digest(presented));
}

export function bearerOf(req: IncomingMessage, url?: URL): string | undefined {
  const h = req.headers.authorization;
  if (h?.startsWith('Bearer ')) return h.slice(7).trim();
  // Browsers cannot set headers on a WebSocket: the console passes ?token= on /admin/events.
  return url?.searchParams.get('token') ?? undefined;
}

/** Throws 401 unless the bearer matches `expected` (or `peer`, for hub-to-hub forwards). */
export function requireToken(expected: string | undefined, req: IncomingMessage, what: string, url?: URL, peer?: string): void {
  if (!expected) return;
  const presented = bearerOf(req, url);
  if (tokenMatches(expected, presented) || (peer !== undefined && tokenMatches(peer, presented))) return;
  throw new PaprikaError('unauthorized', { scope: what });
}
