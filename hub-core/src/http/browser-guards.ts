// What a browser on another site must not be able to do to a hub: reach it under a name that
// is not the hub's (DNS rebinding), change state with a cross-site request (no-cors POST,
// a cross-site WebSocket), frame the console or have an answer sniffed into HTML.
import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import type { Config } from '../config.ts';
import { PaprikaError } from '../wire/errors.ts';

/** The desktop app's console origin (electron/navigation-policy.ts): no web page can carry it. */
export const DESKTOP_CONSOLE_ORIGIN = 'app://console';
const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Headers on every answer: nothing is sniffed into another type, framed or sent on as a referrer. */
export const BASE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
});

/**
 * The console's policy: its own scripts only; style attributes (React, recharts); images from
 * itself and from blobs (screenshots are fetched with the token); the live feed's socket on the
 * host the page came from (named exactly, not `ws:` at large).
 */
export function consoleCsp(hostHeader: string | undefined): string {
  const host = hostHeader && /^[A-Za-z0-9.:[\]-]{1,300}$/.test(hostHeader) ? hostHeader : undefined;
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    `connect-src 'self'${host ? ` ws://${host} wss://${host}` : ''}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function hostnameOf(hostHeader: string): string | undefined {
  try {
    return new URL(`http://${hostHeader}`).hostname.toLowerCase().replace(/\.$/, '');
  } catch {
    return undefined;
  }
}

export class BrowserGuards {
  private readonly names: Set<string>;
  private readonly hubOrigin: string;

  /** `guardHost`: names are checked while some route group is open (no token to stop a rebound page). */
  constructor(
    config: Config,
    private readonly guardHost: boolean,
  ) {
    this.names = new Set(['localhost', new URL(config.hubUrl).hostname.toLowerCase()]);
    if (!isIP(config.bind) && config.bind) this.names.add(config.bind.toLowerCase());
    this.hubOrigin = new URL(config.hubUrl).origin;
  }

  /**
   * DNS rebinding puts an attacker's name in Host; an IP literal cannot be rebound, so any
   * address passes (workers and nginx reach the hub by address), names only when they are ours.
   */
  checkHost(headers: IncomingHttpHeaders): void {
    if (!this.guardHost || headers.host === undefined) return;
    const name = hostnameOf(headers.host);
    const ok = name !== undefined && (isIP(name.replace(/^\[|\]$/g, '')) !== 0 || this.names.has(name));
    if (!ok) throw new PaprikaError('misdirected', { host: headers.host, allowed: [...this.names, 'IP addresses'] });
  }

  /** A state-changing request or a WebSocket from a page of another site is refused. */
  checkSite(method: string, headers: IncomingHttpHeaders): void {
    if (!STATE_CHANGING.has(method) && !headers.upgrade) return;
    const origin = headers.origin;
    // The desktop console is another scheme, so its fetch metadata says cross-site.
    if (origin === DESKTOP_CONSOLE_ORIGIN) return;
    const site = headers['sec-fetch-site'];
    if (site === 'cross-site' || site === 'same-site') throw new PaprikaError('cross_site', { sec_fetch_site: site });
    if (origin === undefined || origin === this.hubOrigin) return;
    let host: string | undefined;
    try {
      host = new URL(origin).host;
    } catch {
      /* "null" (sandboxed frames, file:) and garbage are nobody's origin */
    }
    if (host === undefined || host.toLowerCase() !== String(headers.host ?? '').toLowerCase()) throw new PaprikaError('cross_site', { origin });
  }
}
