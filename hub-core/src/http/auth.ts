// Bearer tokens, one per route group (SPEC.md § Environment): compared in constant time; a
// group whose token is unset is open (and then the hub listens beyond loopback only with
// PAPRIKA_INSECURE=1, config.ts). Each token opens its own group only.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Config } from '../config.ts';
import { PaprikaError } from '../wire/errors.ts';
import { FORWARDED_HEADER } from '../hub/forwarder.ts';
import type { RouteGroup } from './route-groups.ts';

const digest = (s: string) => createHash('sha256').update(s).digest();

export function tokenMatches(expected: string | undefined, presented: string | undefined): boolean {
  if (!expected) return true;
  if (!presented) return false;
  // Hash both so lengths match and timingSafeEqual leaks nothing about the length either.
  return timingSafeEqual(digest(expected), digest(presented));
}

/** The subprotocol a WebSocket client offers next to its bearer; the server selects it. */
export const EVENTS_SUBPROTOCOL = 'paprika.v1';
const BEARER_PROTOCOL = 'bearer.';

/**
 * The credentials a request presents: `Authorization: Bearer …`, and on a WebSocket upgrade a
 * `bearer.<base64url>` subprotocol (browsers cannot set headers on a WebSocket, and a token in
 * the URL would end up in proxy logs).
 */
export function bearersOf(headers: IncomingHttpHeaders): string[] {
  const out: string[] = [];
  const h = headers.authorization;
  // The scheme is case-insensitive (RFC 9110 § 11.1): `bearer …` is as good as `Bearer …`.
  if (h && /^bearer /i.test(h)) out.push(h.slice(7).trim());
  if (headers.upgrade) {
    for (const p of String(headers['sec-websocket-protocol'] ?? '').split(',')) {
      const t = p.trim();
      if (t.startsWith(BEARER_PROTOCOL)) out.push(Buffer.from(t.slice(BEARER_PROTOCOL.length), 'base64url').toString('utf8'));
    }
  }
  return out;
}

export function groupToken(config: Config, group: RouteGroup): string | undefined {
  switch (group) {
    case 'api':
      return config.apiToken;
    case 'admin':
      return config.adminToken;
    case 'worker':
      return config.workerToken;
    case 'peer':
      return config.peerToken;
    case 'metrics':
      return config.metricsToken;
    case 'public':
      return undefined;
  }
}

/** The groups (metrics aside) anyone who can connect may use: no token set for them. */
export function openGroups(config: Config): RouteGroup[] {
  return (['api', 'admin', 'worker', 'peer'] as const).filter((g) => !groupToken(config, g));
}

const presents = (expected: string | undefined, bearers: string[]) => !expected || bearers.some((b) => tokenMatches(expected, b));

export interface Caller {
  /** The caller proved itself a peer hub: X-Paprika-Forwarded may be believed. */
  peer: boolean;
}

/**
 * Throws 401 unless the request carries its group's token. A call a peer hub forwards
 * (X-Paprika-Forwarded) carries the peer token instead of the client's, so api and admin
 * routes take the peer token in place of their own only together with that header.
 * `queryToken`: a `?token=` the route table allows for this route (GET /cdp only).
 */
export function authorize(config: Config, group: RouteGroup, headers: IncomingHttpHeaders, queryToken?: string): Caller {
  const bearers = bearersOf(headers);
  if (queryToken) bearers.push(queryToken);
  const peer = presents(config.peerToken, bearers);
  if (presents(groupToken(config, group), bearers)) return { peer };
  const forwarded = headers[FORWARDED_HEADER] !== undefined;
  if ((group === 'api' || group === 'admin') && forwarded && config.peerToken && peer) return { peer };
  throw new PaprikaError('unauthorized', { scope: group, token: TOKEN_VARIABLE[group] }, `Missing or wrong bearer token: this route takes the hub's ${TOKEN_VARIABLE[group]} (Authorization: Bearer <token>)`);
}

/** The variable that holds each group's token, named in a 401 so a client knows which token it needs. */
const TOKEN_VARIABLE: Record<RouteGroup, string> = {
  public: '(none)',
  api: 'PAPRIKA_API_TOKEN',
  admin: 'PAPRIKA_ADMIN_TOKEN',
  worker: 'PAPRIKA_WORKER_TOKEN',
  peer: 'PAPRIKA_PEER_TOKEN',
  metrics: 'PAPRIKA_METRICS_TOKEN',
};
