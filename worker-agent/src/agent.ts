// The worker agent: registers, links to a hub over a WebSocket, says hello with its lanes,
// heartbeats every HEARTBEAT_S, runs what the hub assigns on its lanes, and re-links with
// jittered backoff when the link drops — keeping its id, its running jobs and its unsent results.
import os from 'node:os';
import { WebSocket } from 'ws';
import type { Logger } from 'pino';
import { backoffMs } from '../../hub-core/src/domain/jitter.ts';
import { encode, MAX_FRAME_BYTES, parseHubMessage, type HubMessage, type WorkerMessageBody } from '../../hub-core/src/protocol.ts';
import { mathRandom, type Random } from '../../hub-core/src/ports/random.ts';
import type { Lane, LanePool } from './lanes/lane.ts';
import { HostStats } from './host-stats.ts';
import { LaneRunner } from './lane-runner.ts';

export const AGENT_VERSION = '0.1.0';
/** How long a linked agent waits for `welcome` before it drops the link and tries again. */
const WELCOME_TIMEOUT_MS = 20_000;

export interface AgentOptions {
  hubUrl: string;
  pool: LanePool;
  lanIp: string;
  hostname?: string;
  token?: string;
  heartbeatS: number;
  diskMaxPct: number;
  log: Logger;
  random?: Random;
  /** Where the agent reads disk usage (default: its working directory's filesystem). */
  diskPath?: string;
  /** Reconnect backoff bounds (ms). */
  backoff?: { baseMs: number; capMs: number };
}

type JobResult = Extract<WorkerMessageBody, { type: 'job_result' }>;

export class WorkerAgent {
  workerId: string | undefined;
  private ws: WebSocket | undefined;
  private stopped = false;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  /** The hub's period once welcomed (PAPRIKA_HEARTBEAT_S of the hub), ours until then. */
  private heartbeatS: number;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private welcomeTimer: NodeJS.Timeout | undefined;
  private attempt = 0;
  readonly runner: LaneRunner;
  private readonly stats: HostStats;
  /**
   * Results the hub has not acked yet, with when each was last sent: sent again after every
   * re-link, and on a heartbeat tick when unacked for a whole period (the hub could not
   * write it, e.g. while Postgres restarted). A repeat changes nothing at the hub.
   */
  private readonly outbox = new Map<string, { result: JobResult; sentAt: number }>();
  /** Every assignment this agent received (job id, assignment id, at), for in-process tests; processes log them ('job started'). */
  readonly received: Array<{ job_id: string; assignment_id: string; at: number }> = [];
  /**
   * Until a hub has welcomed this process once, every hello says `fresh`: the hub then fails
   * jobs an earlier process of this worker left behind. (The welcome comes after that check.)
   */
  private welcomed = false;
  private linkedOnce: (() => void) | undefined;
  readonly linked: Promise<void>;

  constructor(private readonly o: AgentOptions) {
    this.heartbeatS = o.heartbeatS;
    this.stats = new HostStats(o.diskPath ?? process.cwd(), (message) => o.log.warn(message));
    this.runner = new LaneRunner(o.pool.lanes, o.log, (msg) => this.send(msg), (r) => this.queueResult(r));
    this.linked = new Promise((resolve) => (this.linkedOnce = resolve));
  }

  get lanes(): readonly Lane[] {
    return this.o.pool.lanes;
  }

  async start(): Promise<void> {
    await this.o.pool.start();
    this.workerId = await this.register();
    this.connect();
  }

  private headers(): Record<string, string> {
    return this.o.token ? { authorization: `Bearer ${this.o.token}` } : {};
  }

  private async register(): Promise<string> {
    for (;;) {
      try {
        const res = await fetch(new URL('/workers/register', this.o.hubUrl), {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...this.headers() },
          body: JSON.stringify({ lan_ip: this.o.lanIp, hostname: this.o.hostname ?? os.hostname() }),
          signal: AbortSignal.timeout(10_000),
        });
        const body = (await res.json()) as { worker_id?: string; error?: string };
        if (res.ok && body.worker_id) return body.worker_id;
        if (res.status >= 400 && res.status < 500) throw new Error(`hub refused registration (${res.status}): ${body.error ?? 'unknown error'}`);
        this.o.log.warn({ status: res.status }, 'registration failed; retrying');
      } catch (err) {
        if (err instanceof Error && err.message.startsWith('hub refused')) throw err;
        if (this.stopped) throw new Error('agent stopped');
        this.o.log.warn({ err: String(err) }, 'hub unreachable for registration; retrying');
      }
      await new Promise((r) => setTimeout(r, backoffMs(this.attempt++, 200, 5000, this.o.random ?? mathRandom)));
    }
  }

  private connect(): void {
    if (this.stopped || !this.workerId) return;
    const url = new URL(`/workers/${this.workerId}/link`, this.o.hubUrl);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(url, { headers: this.headers(), maxPayload: MAX_FRAME_BYTES, handshakeTimeout: 10_000 });
    this.ws = ws;
    ws.on('open', () => {
      // A hub that never welcomes this link (stuck, or failed mid-hello) must not hold it forever.
      clearTimeout(this.welcomeTimer);
      this.welcomeTimer = setTimeout(() => {
        this.o.log.warn('no welcome from the hub; re-linking');
        ws.terminate();
      }, WELCOME_TIMEOUT_MS);
      // The hub picks no worker whose disk it does not know, so hello carries the host figures.
      void this.stats.sample().then((s) => {
        if (this.ws !== ws) return;
        this.send({
          type: 'hello',
          worker_id: this.workerId!,
          lan_ip: this.o.lanIp,
          hostname: this.o.hostname ?? os.hostname(),
          capabilities: this.capabilities(),
          jobs: this.runner.heldJobs(),
          sessions: this.runner.heldSessions(),
          results: [...this.outbox.values()].map(({ result }) => ({ job_id: result.job_id, assignment_id: result.assignment_id })),
          fresh: !this.welcomed,
          cpu_pct: s.cpuPct,
          mem_pct: s.memPct,
          disk_pct: s.diskPct,
        });
      });
    });
    ws.on('message', (data) => this.onMessage(data.toString()));
    ws.on('close', () => this.onClose(ws));
    ws.on('error', (err) => this.o.log.debug({ err: String(err) }, 'link error'));
  }

  capabilities() {
    const lanes = this.o.pool.lanes;
    const single = this.o.pool.singleChrome;
    return {
      max_concurrent: lanes.length,
      lane_novnc_urls: single ? [] : lanes.map((l) => l.viewUrl ?? ''),
      novnc_url: single ? (lanes[0]?.viewUrl ?? null) : null,
      version: AGENT_VERSION,
      platform: `${process.platform}-${process.arch}`,
    };
  }

  private onMessage(text: string): void {
    const parsed = parseHubMessage(text);
    if (!parsed.ok) {
      this.o.log.warn({ error: parsed.error, details: parsed.details }, 'bad message from hub');
      this.send({ type: 'error', message: parsed.error });
      return;
    }
    this.handle(parsed.value).catch((err: unknown) => this.o.log.warn({ err: String(err) }, 'hub message failed'));
  }

  private async handle(msg: HubMessage): Promise<void> {
    switch (msg.type) {
      case 'welcome':
        clearTimeout(this.welcomeTimer);
        this.attempt = 0;
        this.welcomed = true;
        this.o.log.info({ worker_id: msg.worker_id, hub_id: msg.hub_id, status: msg.status, heartbeat_s: msg.heartbeat_s }, 'linked');
        // The hub judges liveness against its own period, so its heartbeat_s wins over ours.
        if (msg.heartbeat_s !== this.heartbeatS) this.o.log.info({ hub: msg.heartbeat_s, local: this.heartbeatS }, 'heartbeat period set by the hub');
        this.heartbeatS = msg.heartbeat_s;
        if (msg.url_policy && this.o.pool.egress) {
          try {
            this.o.pool.egress.setHubLists(msg.url_policy);
          } catch (err) {
            this.o.log.error({ err: String(err) }, "the hub's egress rules do not parse here; keeping the previous ones");
          }
        }
        this.startHeartbeat();
        this.resendResults(0);
        this.linkedOnce?.();
        return;
      case 'assign': {
        this.received.push({ job_id: msg.job_id, assignment_id: msg.assignment_id, at: Date.now() });
        // Disk guard: refuse before running, and the hub puts the job back untouched.
        const disk = await this.stats.recentDiskPct();
        if (disk >= this.o.diskMaxPct) {
          this.o.log.info({ job_id: msg.job_id, assignment_id: msg.assignment_id, reason: 'disk_full', disk_pct: disk }, 'job rejected');
          return this.send({ type: 'job_rejected', job_id: msg.job_id, assignment_id: msg.assignment_id, reason: 'disk_full' });
        }
        return this.runner.assign(msg);
      }
      case 'cancel':
        return this.runner.cancel(msg.job_id, msg.reason);
      case 'result_ack':
        this.outbox.delete(msg.job_id);
        return;
      case 'session_open':
      case 'session_command':
      case 'session_close':
        return this.runner.session(msg);
      case 'status':
        this.o.log.info({ status: msg.status }, 'status set by operator');
        return;
      case 'error':
        this.o.log.warn({ message: msg.message, details: msg.details }, 'hub reported an error');
        return;
    }
  }

  private queueResult(r: JobResult): void {
    this.outbox.set(r.job_id, { result: r, sentAt: Date.now() });
    this.send(r);
  }

  /** Send again every result unacked for at least `olderThanMs`. */
  private resendResults(olderThanMs: number): void {
    const now = Date.now();
    for (const entry of this.outbox.values()) {
      if (now - entry.sentAt < olderThanMs) continue;
      entry.sentAt = now;
      this.send(entry.result);
    }
  }

  private startHeartbeat(): void {
    clearInterval(this.heartbeatTimer);
    void this.heartbeat();
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), this.heartbeatS * 1000);
  }

  private async heartbeat(): Promise<void> {
    this.resendResults(this.heartbeatS * 1000);
    const s = await this.stats.sample();
    this.send({ type: 'heartbeat', in_flight: this.runner.inFlight, cpu_pct: s.cpuPct, mem_pct: s.memPct, disk_pct: s.diskPct, lanes: this.runner.laneStates(), lane_recycles: this.o.pool.recycles?.() });
  }

  private send(msg: WorkerMessageBody): void {
    const ws = this.ws;
    if (ws?.readyState === WebSocket.OPEN) ws.send(encode(msg));
  }

  private onClose(ws: WebSocket): void {
    if (this.ws !== ws) return;
    clearInterval(this.heartbeatTimer);
    clearTimeout(this.welcomeTimer);
    if (this.stopped) return;
    const delay = this.o.backoff ? backoffMs(this.attempt++, this.o.backoff.baseMs, this.o.backoff.capMs, this.o.random ?? mathRandom) : backoffMs(this.attempt++, 250, 10_000, this.o.random ?? mathRandom);
    this.o.log.warn({ retry_in_ms: delay }, 'link closed; re-linking');
    this.reconnectTimer = setTimeout(() => this.connect(), delay);
  }

  /** Drop the link without stopping (tests: a network blip). */
  dropLink(): void {
    this.ws?.terminate();
  }

  /**
   * Graceful: no new work (assignments are refused as `shutting_down`), running jobs finish
   * (up to graceMs, then they are aborted), their results reach a hub (re-linking if the link
   * drops meanwhile, up to 5 s more), then the link closes.
   */
  async stop(graceMs = 0): Promise<void> {
    await this.runner.drain(graceMs);
    const until = Date.now() + Math.min(graceMs, 5000);
    while (this.outbox.size > 0 && !this.stopped && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    clearTimeout(this.welcomeTimer);
    clearInterval(this.heartbeatTimer);
    this.ws?.close();
    await this.runner.stop();
    await this.o.pool.stop();
  }
}
