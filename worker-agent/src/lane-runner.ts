// The agent's bookkeeping of its lanes: which job or session each holds, deadlines, cancels.
// The lane implementations only run work; everything about "who holds what" lives here.
import type { Logger } from 'pino';
import { boundedError, NO_SUCH_SESSION, type HubMessage, type LaneState, type WorkerMessageBody } from 'paprika/wire';
import type { JobOutcome, Lane } from './lanes/lane.ts';
import { capSessionReply } from './result-cap.ts';

type Assign = Extract<HubMessage, { type: 'assign' }>;
type SessionMsg = Extract<HubMessage, { type: 'session_open' | 'session_command' | 'session_close' }>;
type JobResult = Extract<WorkerMessageBody, { type: 'job_result' }>;

/** The abort reason of a job still running when the agent's stop gave up waiting for it. */
const STOP_ABORT = 'worker_stopping';

interface Slot {
  job?: { id: string; assignmentId: string; abort: AbortController; done: Promise<void> };
  session?: { id: string; idleTimer: NodeJS.Timeout | undefined; idleS: number };
  /** A CDP client's browser (cdp/cdp-tunnel.ts); `close` ends it. */
  cdp?: { id: string; close: (reason: string) => void };
}

export class LaneRunner {
  private readonly slots: Slot[];
  private closing = false;
  /** The grace the stop gave running jobs (drain), named in the error of a job it cut off. */
  private stopGraceMs = 0;

  constructor(
    private readonly lanes: readonly Lane[],
    private readonly log: Logger,
    private readonly send: (msg: WorkerMessageBody) => void,
    private readonly result: (r: JobResult) => void,
    /** PAPRIKA_MAX_RESULT_BYTES: a macro's result fails at the step that passes it; a session command's reply over it is answered as an error. */
    private readonly maxResultBytes: number,
  ) {
    this.slots = lanes.map(() => ({}));
  }

  get inFlight(): number {
    return this.slots.filter((s) => s.job || s.session || s.cdp).length;
  }

  heldJobs() {
    return this.slots.flatMap((s, lane) => (s.job ? [{ job_id: s.job.id, lane, assignment_id: s.job.assignmentId }] : []));
  }

  laneStates(): LaneState[] {
    return this.lanes.map((l, i) => ({ index: i, view_url: l.viewUrl, busy: Boolean(this.slots[i].job || this.slots[i].session || this.slots[i].cdp), job_id: this.slots[i].job?.id ?? null, session_id: this.slots[i].session?.id ?? null, cdp_id: this.slots[i].cdp?.id ?? null }));
  }

  private freeLane(preferred: number): number | undefined {
    const free = (i: number) => i >= 0 && i < this.slots.length && !this.slots[i].job && !this.slots[i].session && !this.slots[i].cdp;
    if (free(preferred)) return preferred;
    const i = this.slots.findIndex((_, k) => free(k));
    return i < 0 ? undefined : i;
  }

  assign(msg: Assign): void {
    if (this.slots.some((s) => s.job?.id === msg.job_id)) return; // a repeat of a job it already runs
    const lane = this.closing ? undefined : this.freeLane(msg.lane);
    if (lane === undefined) {
      const reason = this.closing ? 'shutting_down' : 'busy';
      this.log.info({ job_id: msg.job_id, assignment_id: msg.assignment_id, reason }, 'job rejected');
      this.send({ type: 'job_rejected', job_id: msg.job_id, assignment_id: msg.assignment_id, reason });
      return;
    }
    const abort = new AbortController();
    const slot = this.slots[lane];
    const deadlineTimer = setTimeout(() => abort.abort('timeout'), Math.max(0, msg.deadline - Date.now()));
    // The start and end of every run are logged: an operator's (and the chaos run's) record of
    // which worker ran which assignment when.
    this.log.info({ job_id: msg.job_id, assignment_id: msg.assignment_id, lane }, 'job started');
    this.send({ type: 'job_started', job_id: msg.job_id, assignment_id: msg.assignment_id, lane });
    const done = this.lanes[lane]
      .runJob(msg, { jobId: msg.job_id, deadline: msg.deadline, signal: abort.signal, maxResultBytes: this.maxResultBytes })
      .catch((err: unknown): JobOutcome => ({ status: 'failed', error: `lane error: ${String(err)}` }))
      .then((outcome) => {
        clearTimeout(deadlineTimer);
        slot.job = undefined;
        let { status, error } = outcome;
        if (abort.signal.aborted && abort.signal.reason === 'timeout' && status !== 'succeeded') {
          status = 'failed';
          error = 'timeout';
        } else if (abort.signal.aborted && abort.signal.reason === STOP_ABORT && status !== 'succeeded') {
          // No one canceled it: the worker stopped under it (it was stored `canceled`).
          status = 'failed';
          error = this.stopGraceMs > 0 ? `the worker stopped before this job ended: aborted after the ${this.stopGraceMs / 1000} s a stop gives running jobs` : 'the worker stopped before this job ended: aborted by a stop that gives running jobs no time';
        }
        this.log.info({ job_id: msg.job_id, assignment_id: msg.assignment_id, lane, status, error }, 'job finished');
        this.result({ type: 'job_result', job_id: msg.job_id, assignment_id: msg.assignment_id, status, result: outcome.result, error, assets: outcome.assets });
      });
    slot.job = { id: msg.job_id, assignmentId: msg.assignment_id, abort, done };
  }

  cancel(jobId: string, reason: string): void {
    const slot = this.slots.find((s) => s.job?.id === jobId);
    if (!slot?.job) return;
    this.log.info({ job_id: jobId, reason }, 'job canceled by hub');
    slot.job.abort.abort('canceled');
  }

  async session(msg: SessionMsg): Promise<void> {
    const reply = (ok: boolean, result?: unknown, error?: string) => this.send(capSessionReply({ type: 'session_reply', request_id: msg.request_id, ok, result, error: error === undefined ? undefined : boundedError(error) }, this.maxResultBytes));
    if (msg.type === 'session_open') {
      const lane = this.closing ? undefined : this.freeLane(msg.lane);
      if (lane === undefined) return reply(false, undefined, 'no free lane');
      const slot = this.slots[lane];
      // Held while it opens; idle only once open (an idle timer that fired mid-open freed the slot and then answered ok).
      const session = { id: msg.session_id, idleS: msg.idle_timeout_s, idleTimer: undefined as NodeJS.Timeout | undefined };
      slot.session = session;
      try {
        await this.lanes[lane].openSession(msg.session_id);
        if (slot.session !== session) return reply(false, undefined, 'session ended while it opened');
        session.idleTimer = this.idleTimer(lane, msg.session_id, msg.idle_timeout_s);
        return reply(true, { lane });
      } catch (err) {
        this.endSession(lane);
        return reply(false, undefined, String(err instanceof Error ? err.message : err));
      }
    }
    const lane = this.slots.findIndex((s) => s.session?.id === msg.session_id);
    if (lane < 0) return reply(false, undefined, NO_SUCH_SESSION);
    if (msg.type === 'session_close') {
      await this.lanes[lane].closeSession().catch(() => {});
      this.endSession(lane);
      return reply(true, { closed: true });
    }
    const s = this.slots[lane].session!;
    clearTimeout(s.idleTimer);
    s.idleTimer = this.idleTimer(lane, s.id, s.idleS);
    try {
      const result = await this.lanes[lane].sessionCommand(msg.command, AbortSignal.timeout(120_000));
      return reply(true, result);
    } catch (err) {
      return reply(false, undefined, String(err instanceof Error ? err.message : err));
    }
  }

  private idleTimer(lane: number, sessionId: string, idleS: number): NodeJS.Timeout {
    return setTimeout(() => {
      if (this.slots[lane].session?.id !== sessionId) return;
      void this.lanes[lane].closeSession().catch(() => {});
      this.endSession(lane);
      this.send({ type: 'session_closed', session_id: sessionId, reason: 'idle timeout' });
    }, idleS * 1000);
  }

  private endSession(lane: number): void {
    const s = this.slots[lane].session;
    if (s) clearTimeout(s.idleTimer);
    this.slots[lane].session = undefined;
  }

  /**
   * Hold a lane for a CDP client: the lane the hub named, else any free one that serves CDP.
   * Returns the lane and its browser options, or the reason it cannot.
   */
  holdCdp(cdpId: string, preferred: number, close: (reason: string) => void): { lane: number; browser: { chromePath: string; proxyPort?: number } } | { error: string } {
    if (this.closing) return { error: 'shutting_down' };
    if (this.slots.some((s) => s.cdp?.id === cdpId)) return { error: 'duplicate cdp_id' };
    const lane = this.freeLane(preferred);
    if (lane === undefined) return { error: 'busy' };
    const browser = this.lanes[lane].cdpBrowser?.();
    if (!browser) return { error: 'this lane runs no browser for CDP clients' };
    this.slots[lane].cdp = { id: cdpId, close };
    return { lane, browser };
  }

  /** The CDP client's browser is gone and its profile removed: the lane is free. */
  freeCdp(cdpId: string): void {
    const slot = this.slots.find((s) => s.cdp?.id === cdpId);
    if (slot) slot.cdp = undefined;
  }

  /** End one CDP client (the hub's cdp_close), or all of them (the link dropped: the hub freed their lanes). */
  closeCdp(cdpId: string | undefined, reason: string): void {
    for (const s of this.slots) if (s.cdp && (cdpId === undefined || s.cdp.id === cdpId)) s.cdp.close(reason);
  }

  /** Stop taking work; wait up to graceMs for running jobs, then abort what is left. */
  async drain(graceMs: number): Promise<void> {
    this.closing = true;
    this.stopGraceMs = graceMs;
    const running = this.slots.flatMap((s) => (s.job ? [s.job] : []));
    const all = Promise.all(running.map((j) => j.done));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([all, new Promise((r) => (timer = setTimeout(r, graceMs)))]);
    clearTimeout(timer);
    for (const j of running) j.abort.abort(STOP_ABORT);
    await all;
  }

  async stop(): Promise<void> {
    this.closeCdp(undefined, 'worker stopping');
    for (let i = 0; i < this.slots.length; i++) this.endSession(i);
  }
}
