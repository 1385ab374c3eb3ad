// Interactive sessions held on a local lane: open, command, close, and the request/reply
// bookkeeping over the worker link. Which hub owns a session is in the registry, so any
// hub can forward a request for it (the forwarder, hub/forwarder.ts).
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { SessionCommand } from '../wire/job-spec.ts';
import { PaprikaError } from '../wire/errors.ts';
import { NO_SUCH_SESSION, type HubMessageBody } from '../wire/protocol.ts';
import type { Clock } from '../ports/clock.ts';
import type { Registry } from '../ports/registry.ts';
import type { HubEvents } from './hub-events.ts';
import type { LaneBook } from './lane-book.ts';
import type { WorkerLink } from './worker-link.ts';

export const DEFAULT_SESSION_IDLE_S = 300;

interface Pending {
  link: WorkerLink;
  resolve: (v: { ok: boolean; result?: unknown; error?: string }) => void;
  cancelTimer: () => void;
}

export interface OpenedSession {
  session_id: string;
  worker_id: string;
  hub_id: string;
  novnc_url: string | null;
  lane: number;
}

export class SessionService {
  private readonly pending = new Map<string, Pending>();
  /** session id → the link holding it */
  private readonly local = new Map<string, { link: WorkerLink; lane: number; idleS: number }>();
  /**
   * Sessions whose session_open is out, by the link it went to; `closed` once the worker said
   * session_closed for it before its reply was taken (a tiny idle timeout: both frames can
   * arrive in one read). Without it the lane stayed held here after the worker had freed it.
   */
  private readonly opening = new Map<string, { link: WorkerLink; closed: boolean }>();

  constructor(
    private readonly config: Config,
    private readonly lanes: LaneBook,
    private readonly registry: Registry,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly events: HubEvents,
  ) {}

  isLocal(sessionId: string): boolean {
    return this.local.has(sessionId);
  }

  get count(): number {
    return this.local.size;
  }

  /**
   * Holds one local lane, waiting up to `waitS` (ASSIGN_WAIT) for one; undefined when none
   * freed. `refused`: workers that refused this request's session_open already (one request
   * may try here twice: at once, then after asking the peers); they are not asked again.
   */
  async open(idleS: number, signal?: AbortSignal, o: { waitS?: number; refused?: Set<string> } = {}): Promise<OpenedSession | undefined> {
    const sessionId = randomUUID();
    const until = this.clock.now() + (o.waitS ?? this.config.assignWaitS) * 1000;
    const refused = o.refused ?? new Set<string>();
    for (;;) {
      const held = this.lanes.reserve({ kind: 'session', id: sessionId, assignmentId: null }, refused, 'session');
      if (held) {
        const { link, lane } = held;
        const opening = { link, closed: false };
        this.opening.set(sessionId, opening);
        const reply = await this.request(link, (request_id) => ({ type: 'session_open', request_id, session_id: sessionId, lane, idle_timeout_s: idleS })).finally(() => this.opening.delete(sessionId));
        if (reply.ok && opening.closed) {
          // Opened and already ended by the worker: answered as opened (its commands get 404), lane freed.
          this.lanes.release(link, sessionId);
          this.events.workersChanged();
          return { session_id: sessionId, worker_id: link.worker_id, hub_id: this.config.hubId, novnc_url: null, lane };
        }
        if (!reply.ok) {
          this.lanes.release(link, sessionId);
          this.log.warn({ worker_id: link.worker_id, error: reply.error }, 'session_open refused');
          // Another worker may take it, within the same ASSIGN_WAIT; this one is not asked again.
          refused.add(link.worker_id);
          continue;
        }
        this.local.set(sessionId, { link, lane, idleS });
        await this.registry.setSessionOwner(sessionId, this.config.hubId, idleS * 2).catch((err: unknown) => this.log.warn({ err: String(err) }, 'session owner not recorded'));
        this.events.workersChanged();
        return { session_id: sessionId, worker_id: link.worker_id, hub_id: this.config.hubId, novnc_url: link.viewUrl(lane), lane };
      }
      const left = until - this.clock.now();
      if (left <= 0 || signal?.aborted) return undefined;
      await this.lanes.waitForLane(left, signal);
    }
  }

  async command(sessionId: string, command: SessionCommand): Promise<unknown> {
    const s = this.local.get(sessionId);
    if (!s) throw new PaprikaError('not_found', { session_id: sessionId }, 'No such session');
    const reply = await this.request(s.link, (request_id) => ({ type: 'session_command', request_id, session_id: sessionId, command }));
    if (!reply.ok && reply.error === NO_SUCH_SESSION && this.local.get(sessionId) === s) {
      // The worker ended it (its session_closed may still be on the way): so does this hub.
      this.forget(sessionId);
      throw new PaprikaError('not_found', { session_id: sessionId }, 'Session ended');
    }
    if (!reply.ok) throw new PaprikaError('bad_request', { session_id: sessionId, op: command.op }, reply.error ?? 'session command failed');
    void this.registry.setSessionOwner(sessionId, this.config.hubId, s.idleS * 2).catch(() => {});
    if (command.op === 'ping') return { pong: true, worker_id: s.link.worker_id, lane: s.lane, hub_id: this.config.hubId };
    return reply.result;
  }

  async close(sessionId: string): Promise<boolean> {
    const s = this.local.get(sessionId);
    if (!s) return false;
    await this.request(s.link, (request_id) => ({ type: 'session_close', request_id, session_id: sessionId }));
    this.forget(sessionId);
    return true;
  }

  /** A reply to a request; `from`, when a link sent it: only the link the request went to may answer it. */
  onReply(requestId: string, reply: { ok: boolean; result?: unknown; error?: string }, from?: WorkerLink): void {
    const p = this.pending.get(requestId);
    if (!p) return;
    if (from && p.link !== from) {
      this.log.warn({ worker_id: from.worker_id, request_id: requestId }, 'a worker answered a session request sent to another; ignored');
      return;
    }
    this.pending.delete(requestId);
    p.cancelTimer();
    p.resolve(reply);
  }

  /** The worker ended a session by itself (idle timeout, lane crash). */
  onClosed(link: WorkerLink, sessionId: string, reason: string): void {
    const opening = this.opening.get(sessionId);
    if (opening?.link === link) opening.closed = true;
    if (this.local.get(sessionId)?.link !== link) return;
    this.log.info({ session_id: sessionId, worker_id: link.worker_id, reason }, 'session closed by worker');
    this.forget(sessionId);
  }

  /**
   * A heartbeat lists what each lane holds. A session this hub holds on that link that no lane
   * lists has ended on the worker (a session_closed lost, or never sent): freed here too. Frames
   * keep their order on a link, and a worker lists a session from before its open reply, so a
   * heartbeat never misses a session that is still open. (A worker that lists no session ids
   * at all, an older agent, is left alone.)
   */
  onHeartbeat(link: WorkerLink, lanes: ReadonlyArray<{ session_id?: string | null }>): void {
    if (this.local.size === 0 || lanes.some((l) => l.session_id === undefined)) return;
    const listed = new Set(lanes.map((l) => l.session_id));
    for (const [id, s] of this.local) {
      if (s.link !== link || listed.has(id)) continue;
      this.log.warn({ session_id: id, worker_id: link.worker_id }, "session missing from its worker's heartbeat; its lane freed");
      this.forget(id);
    }
  }

  /** The link dropped: its sessions are gone with it, and pending requests fail now. */
  onLinkClosed(link: WorkerLink): void {
    for (const [id, p] of this.pending) {
      if (p.link !== link) continue;
      this.onReply(id, { ok: false, error: 'worker link closed' });
    }
    for (const [id, s] of this.local) if (s.link === link) this.forget(id);
  }

  private forget(sessionId: string): void {
    const s = this.local.get(sessionId);
    if (!s) return;
    this.local.delete(sessionId);
    this.lanes.release(s.link, sessionId);
    void this.registry.deleteSession(sessionId).catch(() => {});
    this.events.workersChanged();
  }

  private request(link: WorkerLink, build: (requestId: string) => Extract<HubMessageBody, { type: 'session_open' | 'session_command' | 'session_close' }>): Promise<{ ok: boolean; result?: unknown; error?: string }> {
    const requestId = randomUUID();
    return new Promise((resolve) => {
      const cancelTimer = this.clock.setTimer(this.config.forwardTimeoutS * 1000, () => this.onReply(requestId, { ok: false, error: 'worker did not answer in time' }));
      this.pending.set(requestId, { link, resolve, cancelTimer });
      link.sessionRequest(build(requestId)).catch((err: unknown) => this.onReply(requestId, { ok: false, error: `send failed: ${String(err)}` }));
    });
  }

  stop(): void {
    for (const id of [...this.pending.keys()]) this.onReply(id, { ok: false, error: 'hub stopping' });
  }
}
