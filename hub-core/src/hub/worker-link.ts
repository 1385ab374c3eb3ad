// One worker whose WebSocket this hub holds: what it declared in hello, what its heartbeats
// say, and which of its lanes this hub has handed work to. Its socket is private: the typed
// verbs below are the only way to write to the worker, and its state changes only through
// named methods. `in_flight` is the hub's own count, raised the moment a lane is held (seed:
// "+1 at once"), so that the next pick in the same pass already sees it.
import type { RunnableJob } from '../wire/job-spec.ts';
import type { SchedulableWorker } from '../domain/pick-worker.ts';
import { newViewKey } from '../wire/view-token.ts';
import { encode, type Capabilities, type HubMessageBody, type LaneState } from '../wire/protocol.ts';
import type { WorkerSnapshot } from '../ports/registry.ts';

export interface LaneHold {
  kind: 'job' | 'session' | 'cdp';
  id: string;
  assignmentId: string | null;
  /** Epoch ms the hold began (shown for CDP clients: how long they have held the lane). */
  since?: number;
}

export interface LinkSocket {
  send(text: string): Promise<void>;
  close(code?: number, reason?: string): void;
  /** Drop the connection without a close handshake (a peer that stopped answering never completes one). */
  terminate(): void;
  /** True when the other end answers a WebSocket ping within ms (a live process, not a half-open socket). */
  answersPing?(ms: number): Promise<boolean>;
  /** False once the socket closes (or starts closing). */
  readonly open: boolean;
}

export type WorkerStatus = 'active' | 'drain' | 'standby';
type Frame<T extends HubMessageBody['type']> = Omit<Extract<HubMessageBody, { type: T }>, 'type'>;

export class WorkerLink implements SchedulableWorker {
  private _status: string;
  private _disk_pct = 0;
  /** A link whose disk is unknown is not picked: 0 % would pass any PAPRIKA_DISK_MAX_PCT. */
  private diskKnown = false;
  /** A newer link of this worker said hello: whatever this hub sends here is never read. */
  private _superseded = false;
  private _cpu_pct = 0;
  private _mem_pct = 0;
  private _last_seen_ms: number;
  /** When the worker said goodbye (a graceful stop): offline fleet-wide from then on. */
  private _left_at_ms: number | null = null;
  /** Signs this link's live-view tokens; sent in welcome, so it dies with the link. */
  readonly view_key = newViewKey();
  /** The work its lanes run (hello's `kinds`); null: not declared, taken as any. */
  readonly kinds: readonly string[] | null;
  /** The agent process behind this link (hello's `instance`); null from an agent that does not say. */
  readonly instance: string | null;
  private readonly holds: Array<LaneHold | null>;
  private busy = 0;
  /** What the scheduler reads: frozen, rebuilt after any change. */
  private view: Readonly<SchedulableWorker> | undefined;
  /** The lanes this link was last asked to thumbnail (`thumbs`), as sent; a new link asks for none. */
  private thumbLanes: readonly number[] = [];
  /** Told after any change the scheduler reads (the local fleet re-files the link in its pick index). */
  onSchedulingChange: ((link: WorkerLink) => void) | undefined;

  constructor(
    readonly worker_id: string,
    private readonly socket: LinkSocket,
    readonly capabilities: Capabilities,
    readonly meta: { lanIp: string; hostname: string; hubId: string },
    status: string,
    now: number,
    declared: { kinds?: readonly string[] | null; instance?: string | null } = {},
  ) {
    this.kinds = declared.kinds ?? null;
    this.instance = declared.instance ?? null;
    this._status = status;
    this._last_seen_ms = now;
    this.holds = Array.from({ length: capabilities.max_concurrent }, () => null);
  }

  get status(): string {
    return this._status;
  }
  get disk_pct(): number {
    return this._disk_pct;
  }
  get cpu_pct(): number {
    return this._cpu_pct;
  }
  get mem_pct(): number {
    return this._mem_pct;
  }
  get last_seen_ms(): number {
    return this._last_seen_ms;
  }
  get superseded(): boolean {
    return this._superseded;
  }
  get left_at_ms(): number | null {
    return this._left_at_ms;
  }
  get ready(): boolean {
    return this.diskKnown && !this._superseded;
  }
  get in_flight(): number {
    return this.busy;
  }
  get max_concurrent(): number {
    return this.capabilities.max_concurrent;
  }
  get lane_novnc_urls(): readonly string[] {
    return this.capabilities.lane_novnc_urls;
  }
  get novnc_url(): string | null {
    return this.capabilities.novnc_url;
  }
  /** The socket is open (false once it closes or starts closing). */
  get open(): boolean {
    return this.socket.open;
  }
  /** Whether this link is the one on `socket` (a hello on the same socket is not a newer link). */
  isOn(socket: LinkSocket): boolean {
    return this.socket === socket;
  }
  /** Lanes a pick may take now, ignoring whether the worker takes work at all. */
  get freeLaneCount(): number {
    return this.max_concurrent - this.busy;
  }

  viewUrl(lane: number): string | null {
    return this.capabilities.lane_novnc_urls[lane] ?? this.capabilities.novnc_url ?? null;
  }

  /** The scheduler's view of this link: an immutable snapshot. */
  schedulable(): Readonly<SchedulableWorker> {
    this.view ??= Object.freeze({
      worker_id: this.worker_id,
      status: this._status,
      in_flight: this.busy,
      max_concurrent: this.max_concurrent,
      lane_novnc_urls: this.capabilities.lane_novnc_urls,
      novnc_url: this.capabilities.novnc_url,
      disk_pct: this._disk_pct,
      ready: this.ready,
      last_seen_ms: this._last_seen_ms,
      kinds: this.kinds,
      left_at_ms: this._left_at_ms,
    });
    return this.view;
  }

  private changed(): void {
    this.view = undefined;
    this.onSchedulingChange?.(this);
  }

  // ---- state, by name ----

  /** What every hub counts as alive: heard from within ttlMs, and no goodbye. */
  aliveAt(now: number, ttlMs: number): boolean {
    return this._left_at_ms === null && now - this._last_seen_ms <= ttlMs;
  }

  /**
   * A frame arrived on the socket (before its turn in the link's queue, which may wait for the
   * database): the worker is alive. Only the time: what the frame says is applied in its turn.
   */
  heard(now: number): void {
    this._last_seen_ms = Math.max(this._last_seen_ms, now);
  }

  /** A frame was handled: the worker is alive. */
  seen(now: number): void {
    this._last_seen_ms = now;
    this.changed();
  }

  /** Host figures from hello or a heartbeat. */
  report(s: { cpu_pct?: number; mem_pct?: number; disk_pct?: number }): void {
    if (s.cpu_pct !== undefined) this._cpu_pct = s.cpu_pct;
    if (s.mem_pct !== undefined) this._mem_pct = s.mem_pct;
    if (s.disk_pct !== undefined) {
      this._disk_pct = s.disk_pct;
      this.diskKnown = true;
    }
    this.changed();
  }

  /** The worker said its disk is full: skipped until a heartbeat says otherwise. */
  markDiskFull(limitPct: number): void {
    this._disk_pct = Math.max(this._disk_pct, limitPct);
    this.changed();
  }

  /** A newer link of this worker said hello: this one takes no more work. */
  supersede(): void {
    this._superseded = true;
    this.changed();
  }

  /** The worker said goodbye: not alive from now on, whatever its last heartbeat. */
  leave(now: number): void {
    this._left_at_ms = now;
    this.view = undefined;
  }

  /** Status as this hub applies it (an operator's change, or a worker shutting down). */
  setStatus(status: string): void {
    this._status = status;
    this.changed();
  }

  // ---- lanes: called by the lane book only (lane-book.ts wakes waiters) ----

  /** Hold a free lane for a job or session; undefined when every lane is held. */
  holdLane(hold: LaneHold): number | undefined {
    const lane = this.holds.indexOf(null);
    if (lane < 0) return undefined;
    this.holds[lane] = hold;
    this.busy++;
    this.changed();
    return lane;
  }

  /** Mark a lane held by work the worker already runs (it re-linked holding it). */
  adoptLane(lane: number, hold: LaneHold): boolean {
    if (lane >= this.holds.length || this.holds[lane] !== null) return false;
    this.holds[lane] = hold;
    this.busy++;
    this.changed();
    return true;
  }

  /** Free the lane held by this job or session id (and assignment, when given); returns the lane, or undefined if none. */
  freeLane(id: string, assignmentId?: string): number | undefined {
    for (let i = 0; i < this.holds.length; i++) {
      const hold = this.holds[i];
      if (hold?.id === id && (assignmentId === undefined || hold.assignmentId === assignmentId)) {
        this.holds[i] = null;
        this.busy--;
        this.changed();
        return i;
      }
    }
    return undefined;
  }

  holding(id: string): LaneHold | undefined {
    return this.holds.find((h) => h?.id === id) ?? undefined;
  }

  lanes(): LaneState[] {
    return this.holds.map((h, index) => ({
      index,
      view_url: this.viewUrl(index),
      busy: h !== null,
      job_id: h?.kind === 'job' ? h.id : null,
      session_id: h?.kind === 'session' ? h.id : null,
      cdp_id: h?.kind === 'cdp' ? h.id : null,
      since_ms: h?.since ?? null,
    }));
  }

  // ---- verbs: the only writes to the worker ----

  /** The welcome ends a hello; rejects when the link is gone (the hello then fails). */
  welcome(body: Frame<'welcome'>): Promise<void> {
    return this.socket.send(encode({ type: 'welcome', ...body }));
  }

  /** Hands a job to a lane; rejects when the frame could not be sent (the claim is undone). */
  assign(a: { jobId: string; assignmentId: string; lane: number; deadline: number; runnable: RunnableJob }): Promise<void> {
    return this.socket.send(encode({ type: 'assign', job_id: a.jobId, assignment_id: a.assignmentId, lane: a.lane, deadline: a.deadline, ...a.runnable }));
  }

  /** Tells the worker to stop a job; false when the frame could not be sent. */
  cancel(jobId: string, reason: string): Promise<boolean> {
    return this.quietly({ type: 'cancel', job_id: jobId, reason });
  }

  /** The result is stored: the worker stops resending it. */
  async ack(jobId: string): Promise<void> {
    await this.quietly({ type: 'result_ack', job_id: jobId });
  }

  /** The result will not be stored as sent (too large, or refused by the database): the worker reports or gives up. */
  async refuseResult(jobId: string, code: 'too_large' | 'not_stored', reason: string): Promise<void> {
    await this.quietly({ type: 'result_refused', job_id: jobId, code, reason });
  }

  /** Applies a status change here and tells the worker (drain keeps running jobs). */
  async pushStatus(status: WorkerStatus): Promise<void> {
    this.setStatus(status);
    await this.quietly({ type: 'status', status });
  }

  /** An error reply (a refused or malformed message). */
  async error(message: string, details?: unknown): Promise<void> {
    await this.quietly({ type: 'error', message, ...(details === undefined ? {} : { details }) });
  }

  /** A session request (open, command, close); rejects when the frame could not be sent. */
  sessionRequest(body: Extract<HubMessageBody, { type: 'session_open' | 'session_command' | 'session_close' }>): Promise<void> {
    return this.socket.send(encode(body));
  }

  /** A CDP client holds `lane`: the worker starts a fresh browser and dials the tunnel; rejects when the frame could not be sent. */
  cdpOpen(body: Frame<'cdp_open'>): Promise<void> {
    return this.socket.send(encode({ type: 'cdp_open', ...body }));
  }

  /** The client left (or timed out): the worker ends its browser and reports cdp_closed. */
  async cdpClose(cdpId: string, reason: string): Promise<void> {
    await this.quietly({ type: 'cdp_close', cdp_id: cdpId, reason });
  }

  /** Replace-set of the lanes the worker thumbnails for the wall (`[]` stops all); false when the frame could not be sent. */
  async thumbs(lanes: readonly number[], intervalMs: number): Promise<boolean> {
    const before = this.thumbLanes;
    const asked = [...lanes];
    this.thumbLanes = asked;
    const sent = await this.quietly({ type: 'thumbs', lanes: asked, interval_ms: intervalMs });
    // Not sent: the worker still has the set before, and the relay's next pass (it differs now) asks again.
    if (!sent && this.thumbLanes === asked) this.thumbLanes = before;
    return sent;
  }

  /** The lanes last asked of this link (what a `thumb` must be for). */
  get thumbsAsked(): readonly number[] {
    return this.thumbLanes;
  }

  close(code: number, reason: string): void {
    this.socket.close(code, reason);
  }

  /** Drop the link at once: its close handler runs as for any close. */
  terminate(): void {
    this.socket.terminate();
  }

  /** True when the worker answers a WebSocket ping within ms (its process runs; the socket is not half-open). */
  answersPing(ms: number): Promise<boolean> {
    return this.socket.answersPing?.(ms) ?? Promise.resolve(false);
  }

  private quietly(body: HubMessageBody): Promise<boolean> {
    return this.socket.send(encode(body)).then(
      () => true,
      () => false,
    );
  }

  snapshot(): WorkerSnapshot {
    return {
      worker_id: this.worker_id,
      hub_id: this.meta.hubId,
      lan_ip: this.meta.lanIp,
      hostname: this.meta.hostname,
      status: this._status,
      in_flight: this.in_flight,
      max_concurrent: this.max_concurrent,
      lane_novnc_urls: [...this.capabilities.lane_novnc_urls],
      novnc_url: this.capabilities.novnc_url,
      disk_pct: this._disk_pct,
      cpu_pct: this._cpu_pct,
      mem_pct: this._mem_pct,
      last_seen_ms: this._last_seen_ms,
      version: this.capabilities.version,
      platform: this.capabilities.platform,
      lanes: this.lanes(),
      kinds: this.kinds ? [...this.kinds] : null,
      left_at_ms: this.left_at_ms,
    };
  }
}
