// Live-view URLs for admin callers: a lane's view URL with a short-lived signed token. Only
// the hub holding the worker's link knows that link's key, so another hub forwards (one hop).
import type { Config } from '../config.ts';
import { signViewToken, VIEW_TOKEN_TTL_MS, withViewToken } from '../wire/view-token.ts';
import { PaprikaError } from '../wire/errors.ts';
import type { Clock } from '../ports/clock.ts';
import type { Registry } from '../ports/registry.ts';
import type { Forwarder } from './forwarder.ts';
import type { LocalLinks } from './local-links.ts';

export interface ViewGrantRequest {
  workerId: string;
  lane: number;
  /** The admin request's Origin (the console's), recorded in the token. */
  origin?: string;
  /** Set on a request another hub forwarded: it is not forwarded again. */
  forwarded: boolean;
  /** The caller's Authorization header, passed on when no peer token replaces it. */
  auth: Record<string, string>;
}

export type ViewGrantAnswer = { status: number; body: unknown };

export class ViewGrants {
  constructor(private readonly d: { config: Pick<Config, 'hubId'>; localLinks: LocalLinks; registry: Registry; forwarder: Forwarder; clock: Clock }) {}

  async grant(r: ViewGrantRequest): Promise<ViewGrantAnswer> {
    const link = this.d.localLinks.get(r.workerId);
    if (link) {
      if (r.lane >= link.max_concurrent) throw new PaprikaError('not_found', { worker_id: r.workerId, lane: r.lane }, 'No such lane');
      const base = link.viewUrl(r.lane);
      if (!isHttpUrl(base)) throw new PaprikaError('no_live_view', { worker_id: r.workerId, lane: r.lane });
      const exp = this.d.clock.now() + VIEW_TOKEN_TTL_MS;
      const token = signViewToken({ worker_id: r.workerId, lane: r.lane, exp, scope: 'view', ...(r.origin ? { origin: r.origin } : {}) }, link.view_key);
      return { status: 200, body: { url: withViewToken(base, token), expires_at: new Date(exp).toISOString() } };
    }
    if (!r.forwarded) {
      const owner = await this.d.registry.getOwner(r.workerId).catch(() => undefined);
      const url = owner && owner !== this.d.config.hubId ? await this.d.forwarder.hubUrl(owner) : undefined;
      if (url) {
        const path = `/admin/workers/${encodeURIComponent(r.workerId)}/lanes/${r.lane}/view`;
        // The Origin header is not passed between hubs: it travels in the body.
        const res = await this.d.forwarder.forward('admin.view', url, 'POST', path, r.origin ? { origin: r.origin } : {}, r.auth);
        return { status: res.status, body: res.body };
      }
    }
    throw new PaprikaError('worker_offline', { worker_id: r.workerId });
  }
}

function isHttpUrl(u: string | null): u is string {
  if (!u) return false;
  try {
    const p = new URL(u).protocol;
    return p === 'http:' || p === 'https:';
  } catch {
    return false;
  }
}
