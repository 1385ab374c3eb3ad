// The state of the console's link to its hub, as plain data plus pure transitions, so the
// banner rules are unit-tested without a socket or a DOM.

export type SocketState = 'connecting' | 'open' | 'closed';

export interface LinkState {
  socket: SocketState;
  /** Last time any answer (socket frame or poll) arrived. */
  lastOkAt: number | null;
  /** First failure of the current run of failures; null once an answer arrives. */
  failingSince: number | null;
  lastError: string | null;
  /** The hub said its fleet view came from the last good copy (Redis slow or down). */
  hubStale: boolean;
  hubStaleSince: number | null;
  /** When the socket went down while polling kept data flowing. */
  pollingSince: number | null;
  authRequired: boolean;
}

export const initialLink: LinkState = {
  socket: 'connecting',
  lastOkAt: null,
  failingSince: null,
  lastError: null,
  hubStale: false,
  hubStaleSince: null,
  pollingSince: null,
  authRequired: false,
};

export function linkOk(s: LinkState, now: number, hubStale?: boolean): LinkState {
  const stale = hubStale ?? s.hubStale;
  return {
    ...s,
    lastOkAt: now,
    failingSince: null,
    lastError: null,
    authRequired: false,
    hubStale: stale,
    hubStaleSince: stale ? (s.hubStaleSince ?? now) : null,
  };
}

export function linkFailed(s: LinkState, now: number, error: string, unauthorized = false): LinkState {
  return { ...s, failingSince: s.failingSince ?? now, lastError: error, authRequired: unauthorized || s.authRequired };
}

export function socketChanged(s: LinkState, socket: SocketState, now: number): LinkState {
  // A reconnect attempt ('connecting') keeps the time polling began; only 'open' ends it.
  const pollingSince = socket === 'open' ? null : socket === 'closed' ? (s.pollingSince ?? now) : s.pollingSince;
  return { ...s, socket, pollingSince };
}

export type BannerKind = 'none' | 'connecting' | 'auth' | 'lost' | 'stale' | 'polling';

export interface Banner {
  kind: BannerKind;
  since: number | null;
  detail: string | null;
}

/**
 * What the operator must be told, most serious first. `silentAfterMs` covers a socket that
 * is "open" but has gone quiet (a half-open TCP link): the hub pushes a snapshot every few
 * seconds, so a few missed ones mean the data on screen is no longer live.
 */
export function bannerFor(s: LinkState, now: number, silentAfterMs: number): Banner {
  if (s.authRequired) return { kind: 'auth', since: s.failingSince, detail: s.lastError };
  if (s.failingSince !== null) return { kind: 'lost', since: s.failingSince, detail: s.lastError };
  if (s.lastOkAt === null) return { kind: 'connecting', since: null, detail: null };
  if (now - s.lastOkAt > silentAfterMs) return { kind: 'lost', since: s.lastOkAt, detail: 'no update from the hub' };
  if (s.hubStale) return { kind: 'stale', since: s.hubStaleSince, detail: 'the hub is serving its last good fleet view' };
  if (s.socket !== 'open' && s.pollingSince !== null) return { kind: 'polling', since: s.pollingSince, detail: null };
  return { kind: 'none', since: null, detail: null };
}

/** Quiet period after which an open link counts as lost: three missed snapshots, at least 10 s. */
export function silentAfterMs(heartbeatS: number | undefined): number {
  return Math.max(10_000, 3 * Math.min(5, heartbeatS ?? 5) * 1000);
}
