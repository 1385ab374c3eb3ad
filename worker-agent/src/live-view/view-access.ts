// Who may open a lane's view page or stream: a valid token signed with the current link's
// view key (the hub that holds the link signs them for admin callers only), used from an
// allowed Origin. The key lives in memory only, and only while a link is up.
import type { IncomingMessage } from 'node:http';
import { PaprikaError, verifyViewToken, VIEW_TOKEN_PARAM, viewOriginAllowed } from 'paprika/wire';

export class ViewKeyring {
  private current: { workerId: string; key: string } | undefined;

  /** From `welcome`: tokens of the previous link stop working here. */
  set(workerId: string, key: string): void {
    this.current = { workerId, key };
  }

  /** The link closed: its tokens die with it; nothing opens until the next welcome. */
  clear(): void {
    this.current = undefined;
  }

  get workerId(): string | undefined {
    return this.current?.workerId;
  }

  get key(): string | undefined {
    return this.current?.key;
  }
}

/**
 * Throws 401 (`view_token_invalid`) without a valid token for this lane, 403
 * (`origin_forbidden`) when a browser page of another origin presents one.
 */
export function authorizeView(req: IncomingMessage, lane: number, keys: ViewKeyring, nowMs: number, ownOrigins: readonly string[]): void {
  const token = new URL(req.url ?? '/', 'http://view').searchParams.get(VIEW_TOKEN_PARAM);
  const check = verifyViewToken(token, keys.key, { workerId: keys.workerId, lane, nowMs });
  if (!check.ok) throw new PaprikaError('view_token_invalid', { reason: check.reason, lane });
  const origin = req.headers.origin;
  if (!viewOriginAllowed(origin, check.payload, ownOrigins)) throw new PaprikaError('origin_forbidden', { origin, lane });
}
