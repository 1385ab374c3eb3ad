// CDP clients (GET /cdp): unmodified puppeteer.connect / connectOverCDP scripts on the fleet's
// lanes. A client holds a lane through the lane book like a job (holder kind 'cdp', counted in
// in_flight); the worker starts a fresh browser for it and dials back a tunnel WebSocket
// (workers never accept connections), which this hub splices to the client. A lane that no
// local worker can give is asked of the peer with the most free lanes, one hop at most.
// The lane is released only when the worker says the browser is gone (cdp_closed) or its link
// drops, so a freed lane is always a clean one.
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Logger } from 'pino';
import { WebSocket } from 'ws';
import type { Config } from '../config.ts';
import type { Clock } from '../ports/clock.ts';
import type { JobStore } from '../ports/job-store.ts';
import { PaprikaError } from '../wire/errors.ts';
import { CDP_MAX_FRAME_BYTES } from '../wire/protocol.ts';
import { FORWARDED_HEADER, type Forwarder } from './forwarder.ts';
import type { HubEvents } from './hub-events.ts';
import type { LaneBook } from './lane-book.ts';
import type { HubMetrics } from './metrics.ts';
import type { WorkerLink } from './worker-link.ts';

/** How often the hub pings a CDP client; one unanswered ping means the client is gone (a killed process, a dead network). */
export const CDP_PING_MS = 1000;
/** A lane whose worker never confirms the browser's end is released anyway after this long. */
const RELEASE_FALLBACK_MS = 10_000;
/** Close codes the client sees (4000–4999: the application's own). */
export const CDP_CLOSE = { idle: 4000, max: 4001, worker: 4002, hub: 4003 } as const;

export interface CdpLimits {
  idleS: number;
  maxS: number;
}

interface Pending {
  link: WorkerLink;
  lane: number;
  token: string;
  /** The worker's tunnel arrived (a socket), or the worker gave up (undefined). */
  settle: (tunnel: WebSocket | undefined, reason?: string) => void;
}

interface Held {
  link: WorkerLink;
  lane: number;
  /** Cut when the lane is released (the worker's browser is gone, or its link): the client's splice ends with it. */
  tunnel?: WebSocket;
  releaseTimer?: () => void;
}

/** Where a client's browser is: a tunnel from a local worker, or a WebSocket to the peer hub that holds the lane. */
export interface CdpUpstream {
  ws: WebSocket;
  via: 'local' | 'peer';
  /** Tells the lane's worker the client left (local lanes). */
  end(reason: string): void;
  where: { worker_id?: string; lane?: number; hub_url?: string; cdp_id?: string };
}

export interface CdpDeps {
  config: Config;
  lanes: LaneBook;
  forwarder: Pick<Forwarder, 'bestPeer' | 'peerRefused'>;
  clock: Clock;
  log: Logger;
  metrics: HubMetrics;
  events: HubEvents;
  audit: Pick<JobStore, 'recordAudit'>;
}

export class CdpService {
  private readonly pending = new Map<string, Pending>();
  private readonly held = new Map<string, Held>();
  private readonly clients = new Set<WebSocket>();

  constructor(private readonly d: CdpDeps) {}

  /** Limits for one client: the hub's, or less when the client asks (`?idle_s=`, `?max_s=`). */
  limits(query: { idle_s?: unknown; max_s?: unknown }): CdpLimits {
    const asked = (v: unknown, name: string): number | undefined => {
      if (v === undefined) return undefined;
      const n = typeof v === 'string' && /^\d+(\.\d+)?$/.test(v) ? Number(v) : NaN;
      if (!(n > 0)) throw new PaprikaError('bad_request', { [name]: v }, `${name} must be a positive number of seconds`);
      return n;
    };
    const idle = asked(query.idle_s, 'idle_s');
    const max = asked(query.max_s, 'max_s');
    return { idleS: Math.min(idle ?? Infinity, this.d.config.cdpIdleS), maxS: Math.min(max ?? Infinity, this.d.config.cdpMaxS) };
  }

  /**
   * A browser for one client, before its upgrade: a local lane, else a peer's (not when the
   * request was itself forwarded), waiting up to `waitS` for one. Throws 503 + Retry-After.
   */
  async place(limits: CdpLimits, o: { forwarded: boolean; waitS: number; signal: AbortSignal }): Promise<CdpUpstream> {
    const until = this.d.clock.now() + o.waitS * 1000;
    const refused = new Set<string>();
    let peerError: PaprikaError | undefined;
    for (;;) {
      const local = await this.placeLocal(limits, refused);
      if (local) return local;
      if (!o.forwarded) {
        const peer = await this.placeOnPeer(limits).catch((err: unknown) => {
          if (err instanceof PaprikaError) peerError = err;
          else this.d.log.warn({ err: String(err) }, 'CDP placement on a peer failed');
          return undefined;
        });
        if (peer) return peer;
      }
      const left = until - this.d.clock.now();
      if (left <= 0 || o.signal.aborted) break;
      // A local release wakes us at once; a peer's free lane shows in the fleet view, read again within a second.
      await this.d.lanes.waitForLane(Math.min(left, 1000), o.signal);
    }
    this.d.metrics.cdpRefused.inc({ reason: o.signal.aborted ? 'client_gone' : peerError ? 'peer_refused' : 'no_free_lane' });
    // A peer with free lanes refused this hub's token: that, not "no free lane", is what to fix.
    if (peerError) throw peerError;
    throw new PaprikaError('no_free_cdp_lane', { waited_s: o.waitS }, undefined, Math.max(1, Math.ceil(this.d.config.assignWaitS)));
  }

  private async placeLocal(limits: CdpLimits, refused: Set<string>): Promise<CdpUpstream | undefined> {
    for (;;) {
      const cdpId = randomUUID();
      const held = this.d.lanes.reserve({ kind: 'cdp', id: cdpId, assignmentId: null, since: this.d.clock.now() }, refused, 'cdp');
      if (!held) return undefined;
      const { link, lane } = held;
      this.held.set(cdpId, { link, lane });
      this.d.events.workersChanged();
      const tunnel = await this.openTunnel(cdpId, link, lane, limits);
      if (tunnel.ws) {
        const h = this.held.get(cdpId);
        if (!h) {
          tunnel.ws.terminate(); // the link closed meanwhile
          continue;
        }
        h.tunnel = tunnel.ws;
        return { ws: tunnel.ws, via: 'local', where: { worker_id: link.worker_id, lane, cdp_id: cdpId }, end: (reason) => this.clientLeft(cdpId, reason) };
      }
      this.d.log.warn({ worker_id: link.worker_id, lane, reason: tunnel.reason }, 'CDP lane could not start a browser');
      refused.add(link.worker_id);
      this.clientLeft(cdpId, tunnel.reason ?? 'tunnel failed');
    }
  }

  /** Ask the worker for a browser and wait for its tunnel (or its refusal, or FORWARD_TIMEOUT). */
  private openTunnel(cdpId: string, link: WorkerLink, lane: number, limits: CdpLimits): Promise<{ ws?: WebSocket; reason?: string }> {
    const token = randomBytes(32).toString('hex');
    return new Promise((resolve) => {
      const cancel = this.d.clock.setTimer(this.d.config.forwardTimeoutS * 1000, () => settle(undefined, 'the worker did not open the tunnel in time'));
      let done = false;
      const settle = (ws: WebSocket | undefined, reason?: string) => {
        if (done) return;
        done = true;
        if (this.pending.get(cdpId)?.settle === settle) this.pending.delete(cdpId);
        cancel();
        resolve({ ws, reason });
      };
      this.pending.set(cdpId, { link, lane, token, settle });
      link.cdpOpen({ cdp_id: cdpId, lane, tunnel_token: token, max_s: limits.maxS }).catch((err: unknown) => settle(undefined, `send failed: ${String(err)}`));
    });
  }

  /**
   * A worker dials the tunnel for `cdpId`: only the worker whose link received the token, once.
   * Returns the function that takes the upgraded socket; throws 403 before any upgrade otherwise.
   */
  claimTunnel(workerId: string, cdpId: string, token: string | undefined): (ws: WebSocket) => void {
    const p = this.pending.get(cdpId);
    if (!p || p.link.worker_id !== workerId || !p.link.open || !token || !sameToken(p.token, token)) {
      this.d.log.warn({ worker_id: workerId, cdp_id: cdpId }, 'CDP tunnel refused');
      throw new PaprikaError('tunnel_refused', { worker_id: workerId, cdp_id: cdpId });
    }
    // One use: a second dial with the same token finds nothing.
    this.pending.delete(cdpId);
    return (ws) => p.settle(ws);
  }

  /** The worker ended a CDP lane (browser gone, tunnel closed, could not start): clean, so free. */
  onClosed(link: WorkerLink, cdpId: string, reason: string): void {
    const p = this.pending.get(cdpId);
    if (p?.link === link) p.settle(undefined, reason);
    const h = this.held.get(cdpId);
    if (h?.link !== link) return;
    this.release(cdpId);
  }

  /** The link dropped: the worker ends its browsers by itself, and its lanes leave with it. */
  onLinkClosed(link: WorkerLink): void {
    for (const p of [...this.pending.values()]) if (p.link === link) p.settle(undefined, 'worker link closed');
    for (const [id, h] of [...this.held]) if (h.link === link) this.release(id);
  }

  /** The client (or the tunnel) left: tell the worker, and free the lane when it confirms (or after a fallback). */
  private clientLeft(cdpId: string, reason: string): void {
    const h = this.held.get(cdpId);
    if (!h || h.releaseTimer) return;
    void h.link.cdpClose(cdpId, reason);
    h.releaseTimer = this.d.clock.setTimer(RELEASE_FALLBACK_MS, () => {
      this.d.log.warn({ worker_id: h.link.worker_id, cdp_id: cdpId }, 'worker did not confirm the end of a CDP browser; lane released');
      this.release(cdpId);
    });
  }

  private release(cdpId: string): void {
    const h = this.held.get(cdpId);
    if (!h) return;
    this.held.delete(cdpId);
    h.releaseTimer?.();
    h.tunnel?.terminate();
    this.d.lanes.release(h.link, cdpId);
    this.d.events.workersChanged();
  }

  /** Another hub holds a free lane: a WebSocket to its /cdp, with the peer token, marked forwarded. */
  private async placeOnPeer(limits: CdpLimits): Promise<CdpUpstream | undefined> {
    const peer = await this.d.forwarder.bestPeer('cdp');
    if (!peer) return undefined;
    const url = new URL('/cdp', peer.url);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    url.searchParams.set('idle_s', String(limits.idleS));
    url.searchParams.set('max_s', String(limits.maxS));
    const headers: Record<string, string> = { [FORWARDED_HEADER]: this.d.config.hubId };
    if (this.d.config.peerToken) headers.authorization = `Bearer ${this.d.config.peerToken}`;
    const ws = new WebSocket(url, { headers, perMessageDeflate: false, maxPayload: CDP_MAX_FRAME_BYTES, handshakeTimeout: this.d.config.forwardTimeoutS * 1000 });
    const ok = await new Promise<boolean | number>((resolve) => {
      ws.once('open', () => resolve(true));
      ws.once('unexpected-response', (_req, res) => {
        res.resume();
        resolve(res.statusCode ?? false);
      });
      ws.once('error', () => resolve(false));
    });
    if (ok !== true) {
      ws.terminate();
      if (ok === 401) throw this.d.forwarder.peerRefused('cdp', peer.url);
      return undefined;
    }
    return { ws, via: 'peer', where: { hub_url: peer.url }, end: () => {} };
  }

  /**
   * Splice an upgraded client to its upstream, frame for frame. Either end closing closes the
   * other; idle and max limits close with a reason; a client that stops answering pings is gone.
   */
  splice(client: WebSocket, up: CdpUpstream, limits: CdpLimits): void {
    const started = this.d.clock.now();
    const { metrics, log, clock } = this.d;
    this.clients.add(client);
    metrics.cdpOpen.inc();
    metrics.cdpOpened.inc({ via: up.via });
    log.info({ via: up.via, ...up.where }, 'CDP client connected');
    // The hub whose worker holds the lane writes the audit (a peer that only proxies does not: one entry per client).
    if (up.via === 'local') this.audit('cdp.open', up.where, { lane: up.where.lane, cdp_id: up.where.cdp_id, idle_s: limits.idleS, max_s: limits.maxS });
    let ended = false;
    let cancelIdle = () => {};
    const idle = () => {
      cancelIdle();
      cancelIdle = clock.setTimer(limits.idleS * 1000, () => end('idle timeout', CDP_CLOSE.idle));
    };
    const cancelMax = clock.setTimer(limits.maxS * 1000, () => end('max duration reached', CDP_CLOSE.max));
    let answered = true;
    let cancelPing = () => {};
    const ping = () => {
      cancelPing = clock.setTimer(CDP_PING_MS, () => {
        if (!answered) return end('client stopped answering pings');
        answered = false;
        client.ping();
        ping();
      });
    };
    ping();
    client.on('pong', () => (answered = true));
    const end = (reason: string, code?: number) => {
      if (ended) return;
      ended = true;
      cancelIdle();
      cancelMax();
      cancelPing();
      this.clients.delete(client);
      metrics.cdpOpen.dec();
      metrics.cdpSeconds.observe((clock.now() - started) / 1000);
      const seconds = (clock.now() - started) / 1000;
      log.info({ via: up.via, ...up.where, reason, seconds }, 'CDP client disconnected');
      if (up.via === 'local') this.audit('cdp.close', up.where, { lane: up.where.lane, cdp_id: up.where.cdp_id, reason, seconds });
      if (code !== undefined && client.readyState === WebSocket.OPEN) client.close(code, reason);
      else if (client.readyState !== WebSocket.CLOSED) client.terminate();
      if (up.ws.readyState === WebSocket.OPEN) up.ws.close(1000, reason.slice(0, 100));
      else up.ws.terminate();
      up.end(reason);
    };
    idle();
    client.on('message', (data, isBinary) => {
      idle();
      if (up.ws.readyState === WebSocket.OPEN) up.ws.send(data, { binary: isBinary });
    });
    up.ws.on('message', (data, isBinary) => {
      idle();
      if (client.readyState === WebSocket.OPEN) client.send(data, { binary: isBinary });
    });
    client.on('close', () => end('client closed'));
    client.on('error', () => end('client socket error'));
    up.ws.on('close', (_code, reason) => end(up.via === 'local' ? `browser closed${reason.length ? `: ${reason.toString()}` : ''}` : 'peer closed', CDP_CLOSE.worker));
    up.ws.on('error', () => end('upstream socket error', CDP_CLOSE.worker));
  }

  private audit(action: string, where: CdpUpstream['where'], details: Record<string, unknown>): void {
    const at = new Date(this.d.clock.now());
    this.d.audit.recordAudit({ at, actor: 'api', action, target: where.worker_id ?? '', details: { ...details, hub_id: this.d.config.hubId } }).catch((err: unknown) => this.d.log.warn({ err: String(err), action }, 'CDP audit entry not written'));
  }

  /** Hubs stopping take their clients with them (the workers free the lanes as the tunnels close). */
  stop(): void {
    for (const p of [...this.pending.values()]) p.settle(undefined, 'hub stopping');
    for (const c of [...this.clients]) c.close(CDP_CLOSE.hub, 'hub stopping');
  }

  get open(): number {
    return this.clients.size;
  }
}

/** Constant time, whatever the lengths (both hashed first). */
function sameToken(expected: string, presented: string): boolean {
  const digest = (t: string) => createHash('sha256').update(t).digest();
  return timingSafeEqual(digest(expected), digest(presented));
}
