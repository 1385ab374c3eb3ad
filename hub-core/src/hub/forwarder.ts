// Hub-to-hub forwarding, one hop at most: requests for a session, a worker or a job that
// another hub's WebSocket serves, and jobs when no local lane is free. The receiving hub sees
// X-Paprika-Forwarded and never forwards again.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { freeLanes } from '../domain/pick-worker.ts';
import { PaprikaError } from '../wire/errors.ts';
import type { WorkKind } from '../wire/work-kinds.ts';
import type { Clock } from '../ports/clock.ts';
import type { Registry } from '../ports/registry.ts';
import type { FleetViewReader } from './fleet-view.ts';
import type { HubMetrics } from './metrics.ts';

export const FORWARDED_HEADER = 'x-paprika-forwarded';

/** The caller's bearer, passed on when no PAPRIKA_PEER_TOKEN replaces it (forward() decides). */
export function callerAuth(req: { headers: Record<string, string | string[] | undefined> }): Record<string, string> {
  const a = req.headers.authorization;
  return typeof a === 'string' ? { authorization: a } : {};
}

export interface ForwardResponse {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

/** How often the refusal of one peer is logged again while it lasts. */
const REFUSAL_LOG_EVERY_MS = 60_000;

export class Forwarder {
  private readonly refusalLogged = new Map<string, number>();

  constructor(
    private readonly config: Config,
    private readonly registry: Registry,
    private readonly fleetView: FleetViewReader,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly metrics: HubMetrics,
  ) {}

  async hubUrl(hubId: string): Promise<string | undefined> {
    const hubs = await this.registry.listHubs(this.clock.now(), this.config.hubTtlS);
    return hubs.find((h) => h.hub_id === hubId && h.alive)?.url || undefined;
  }

  /** The live peer whose workers have the most free lanes for `kind`, from the fleet view. */
  async bestPeer(kind?: WorkKind): Promise<{ hubId: string; url: string; free: number } | undefined> {
    const view = await this.fleetView.read();
    const cfg = { diskMaxPct: this.config.diskMaxPct, workerTtlMs: this.config.workerTtlS * 1000, nowMs: this.clock.now(), kind };
    const freeByHub = new Map<string, number>();
    for (const w of view.workers) {
      if (w.local || w.hub_id === this.config.hubId) continue;
      freeByHub.set(w.hub_id, (freeByHub.get(w.hub_id) ?? 0) + freeLanes([w], cfg));
    }
    let best: { hubId: string; free: number } | undefined;
    for (const [hubId, free] of freeByHub) if (free > 0 && (!best || free > best.free)) best = { hubId, free };
    if (!best) return undefined;
    const url = await this.hubUrl(best.hubId);
    return url ? { ...best, url } : undefined;
  }

  async forward(route: string, hubUrl: string, method: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<ForwardResponse> {
    const started = performance.now();
    const h: Record<string, string> = { ...headers, [FORWARDED_HEADER]: this.config.hubId };
    if (this.config.peerToken) h.authorization = `Bearer ${this.config.peerToken}`;
    if (body !== undefined) h['content-type'] = 'application/json';
    try {
      const res = await fetch(new URL(path, hubUrl), {
        method,
        headers: h,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.config.forwardTimeoutS * 1000),
      });
      const text = await res.text();
      this.metrics.forwards.inc({ route, outcome: String(res.status) });
      // This hub let the caller in, so a peer's 401 is never the caller's fault: the hubs disagree
      // on their tokens. Passed through, it told a client its own PAPRIKA_API_TOKEN was wrong,
      // and a drain answered 200 "applied by nobody" (outside probe); say what is wrong, and where.
      if (res.status === 401) throw this.peerRefused(route, hubUrl);
      const out: Record<string, string> = {};
      const retryAfter = res.headers.get('retry-after');
      if (retryAfter) out['retry-after'] = retryAfter;
      return { status: res.status, body: text ? JSON.parse(text) : null, headers: out };
    } catch (err) {
      if (err instanceof PaprikaError) throw err;
      const timedOut = err instanceof Error && err.name === 'TimeoutError';
      this.metrics.forwards.inc({ route, outcome: timedOut ? 'timeout' : 'error' });
      this.log.warn({ route, hub_url: hubUrl, err: String(err) }, 'forward to peer hub failed');
      throw new PaprikaError(timedOut ? 'gateway_timeout' : 'bad_gateway', { hub_url: hubUrl }, undefined, 1);
    } finally {
      this.metrics.forwardSeconds.observe((performance.now() - started) / 1000);
    }
  }

  /** A peer answered 401 to this hub (a forward, or a CDP upgrade): logged once a minute per peer; the error to answer with. */
  peerRefused(route: string, hubUrl: string): PaprikaError {
    const why = this.config.peerToken
      ? `refused this hub's PAPRIKA_PEER_TOKEN: every hub needs the same PAPRIKA_PEER_TOKEN`
      : `refused this hub's forward: it has a PAPRIKA_PEER_TOKEN and this hub has none (or their other tokens differ); every hub needs the same PAPRIKA_PEER_TOKEN`;
    const now = this.clock.now();
    const last = this.refusalLogged.get(hubUrl);
    if (last === undefined || now - last >= REFUSAL_LOG_EVERY_MS) {
      this.refusalLogged.set(hubUrl, now);
      this.log.error({ route, hub_url: hubUrl }, `peer hub ${hubUrl} ${why}; requests, jobs and sessions it should take stay here or fail until the tokens match`);
    }
    return new PaprikaError('peer_refused', { hub_url: hubUrl, token: 'PAPRIKA_PEER_TOKEN' }, `The peer hub at ${hubUrl} ${why}`);
  }
}
