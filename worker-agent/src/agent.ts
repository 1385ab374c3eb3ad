// The worker agent: enrolls once (its credential kept in its data dir), links to a hub over a
// WebSocket, answers the hub's challenge with a hello that proves its id and lists its lanes,
// heartbeats every HEARTBEAT_S, runs what the hub assigns on its lanes, and re-links with
// jittered backoff when the link drops — keeping its id, its running jobs and its unsent results.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { WebSocket } from 'ws';
import type { Logger } from 'pino';
import { backoffMs, boundedError, corkPerTurn, encode, type HubMessage, linkProof, mathRandom, MAX_FRAME_BYTES, parseHubMessage, PACKAGE_VERSION, type Random, secretVerifier, type TurnWrites, UNCORKED, type WorkerMessageBody } from 'paprika/wire';
import { poolCapabilities, type Lane, type LanePool } from './lanes/lane.ts';
import { HostStats } from './host-stats.ts';
import { LaneRunner } from './lane-runner.ts';
import { CdpTunnel } from './cdp/cdp-tunnel.ts';
import { CredentialFile } from './credential-file.ts';
import { ResultOutbox } from './result-outbox.ts';
import { CredentialRejectedError, obtainCredential, resetHint, type EnrollOptions } from './enrollment.ts';
import type { ViewKeyring } from './live-view/view-access.ts';
import { Thumbnailer } from './live-view/thumbnailer.ts';
import { describeRefusal, readRefusal, type LinkRefusal } from './link-refusal.ts';

/** How many assignments `received` remembers. */
export const RECEIVED_KEPT = 1000;
/** How long a linked agent waits for `welcome` before it drops the link and tries again. */
const WELCOME_TIMEOUT_MS = 20_000;
/** PAPRIKA_MAX_RESULT_BYTES when the options name none. */
export const DEFAULT_MAX_RESULT_BYTES = 8 * 1024 * 1024;
/** Thumbnails are dropped while the link holds more than this unsent (a result or a slow hub comes first). */
const THUMB_MAX_BUFFERED_BYTES = 1024 * 1024;
/** A link that answered nothing (no frame, no pong) for this many heartbeat periods is dead. */
const LINK_SILENCE_PERIODS = 3;
/** ...but never sooner than this: a hub busy for a moment under a scaled-down heartbeat is not dead. */
const LINK_SILENCE_FLOOR_MS = 5_000;
/** The hub's close code for a hello that did not prove the id (hub-core LINK_UNAUTHORIZED). */
const LINK_UNAUTHORIZED = 4401;
/** The hub's close code for a hello whose id another running agent holds (hub-core LINK_ID_IN_USE). */
const LINK_ID_IN_USE = 4409;

export interface AgentOptions {
  hubUrl: string;
  pool: LanePool;
  /** The live view's keyring (buildPool makes it): set from each welcome, cleared when the link closes. */
  viewKeys?: ViewKeyring;
  lanIp: string;
  hostname?: string;
  /** An explicit worker id (`--worker-id`) instead of the one the hub derives from lanIp. */
  workerId?: string;
  /** Where the credential file lives (PAPRIKA_DATA_DIR / --data-dir). */
  dataDir: string;
  token?: string;
  heartbeatS: number;
  diskMaxPct: number;
  log: Logger;
  random?: Random;
  /** Where the agent reads disk usage (default: its working directory's filesystem). */
  diskPath?: string;
  /** Reconnect backoff bounds (ms). */
  backoff?: { baseMs: number; capMs: number };
  /** PAPRIKA_MAX_RESULT_BYTES: a bigger result is reported `failed: result too large` (default 8 MB). */
  maxResultBytes?: number;
  /** A CDP client whose browser profile passes this many bytes on disk is ended (PAPRIKA_CDP_MAX_DISK_MB; unset: no cap). */
  cdpMaxDiskBytes?: number;
  /** How long the hub may leave a ping unanswered before the link counts as dead (default: 3 heartbeat periods, at least 5 s). */
  linkSilenceMs?: number;
  /** How long a link's WebSocket handshake may take (default 10 s; tests shorten it). */
  handshakeTimeoutMs?: number;
  /** The hub refused this agent for good (its credential, or its id is another agent's): the process should exit (main.ts does). */
  onFatal?: (err: Error) => void;
}

export class WorkerAgent {
  workerId: string | undefined;
  /** This process, in every hello: the hub refuses a second process that claims a live link's id. */
  readonly instance = randomBytes(16).toString('hex');
  /** sha256 of this worker's secret: the key of every link's proof. */
  private verifier: string | undefined;
  private readonly credentialFile: CredentialFile;
  private ws: WebSocket | undefined;
  /** The current link's writes, sent together at the end of each turn (see corkPerTurn). */
  private writes: TurnWrites = UNCORKED;
  private stopped = false;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  /** The hub's period once welcomed (PAPRIKA_HEARTBEAT_S of the hub), ours until then. */
  private heartbeatS: number;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private welcomeTimer: NodeJS.Timeout | undefined;
  private attempt = 0;
  /** The `hop` the current link was dialled with (connect()). */
  private linkHop = 0;
  /** When this link's oldest unanswered ping went out (undefined: the hub answered since). */
  private unansweredSince: number | undefined;
  /** What the hub answered when it refused the current link's upgrade (read before the close). */
  private refusal: LinkRefusal | undefined;
  readonly runner: LaneRunner;
  /** The lanes the hub's last `thumbs` asked for (none on a new link). */
  readonly thumbs: Thumbnailer;
  private readonly stats: HostStats;
  /** Results no hub has acked yet: sent again after every re-link and every unacked heartbeat period. */
  private readonly outbox: ResultOutbox;
  /**
   * The last RECEIVED_KEPT assignments this agent received (job id, assignment id, at), oldest
   * first, for in-process tests; processes log them ('job started'). Bounded: a worker runs for months.
   */
  readonly received: Array<{ job_id: string; assignment_id: string; at: number }> = [];
  /**
   * Until a hub has welcomed this process once, every hello says `fresh`: the hub then fails
   * jobs an earlier process of this worker left behind. (The welcome comes after that check.)
   */
  private welcomed = false;
  /** This link was welcomed: results go out only then (before it, the hub takes frames of 1 MB at most). */
  private linkReady = false;
  private linkedOnce: (() => void) | undefined;
  private linkFailed: ((err: Error) => void) | undefined;
  /** Resolves at the first welcome; rejects if the hub refuses this agent's credential. */
  readonly linked: Promise<void>;

  constructor(private readonly o: AgentOptions) {
    this.heartbeatS = o.heartbeatS;
    this.stats = new HostStats(o.diskPath ?? process.cwd(), (message) => o.log.warn(message));
    const maxResultBytes = o.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;
    this.credentialFile = new CredentialFile(o.dataDir, o.hubUrl, o.workerId ?? o.lanIp);
    this.outbox = new ResultOutbox({ maxResultBytes, log: o.log, transmit: (frame, sent) => (this.linkReady ? this.transmit(frame, sent) : false), spoolDir: `${this.credentialFile.path}.results` });
    this.runner = new LaneRunner(o.pool.lanes, o.log, (msg) => this.send(msg), (r) => this.outbox.add(r), maxResultBytes);
    this.thumbs = new Thumbnailer({
      lanes: o.pool.lanes,
      send: (t) => this.send({ type: 'thumb', ...t }),
      congested: () => this.ws?.readyState !== WebSocket.OPEN || this.ws.bufferedAmount > THUMB_MAX_BUFFERED_BYTES,
    });
    this.linked = new Promise((resolve, reject) => {
      this.linkedOnce = resolve;
      this.linkFailed = reject;
    });
    this.linked.catch(() => {}); // its rejection is also reported through onFatal
  }

  get lanes(): readonly Lane[] {
    return this.o.pool.lanes;
  }

  async start(): Promise<void> {
    await this.o.pool.start();
    this.useCredential(await obtainCredential(this.credentialFile, this.enrollOptions()));
    this.connect();
  }

  private useCredential(c: { worker_id: string; secret: string }): void {
    this.workerId = c.worker_id;
    this.verifier = secretVerifier(c.secret);
  }

  private enrollOptions(): EnrollOptions {
    const o = this.o;
    return { hubUrl: o.hubUrl, lanIp: o.lanIp, hostname: o.hostname ?? os.hostname(), workerId: o.workerId, headers: this.headers(), log: o.log, random: o.random ?? mathRandom, backoff: o.backoff ?? { baseMs: 200, capMs: 5000 }, stopped: () => this.stopped };
  }

  private headers(): Record<string, string> {
    return this.o.token ? { authorization: `Bearer ${this.o.token}` } : {};
  }

  private connect(): void {
    if (this.stopped || !this.workerId) return;
    const url = new URL(`/workers/${this.workerId}/link`, this.o.hubUrl);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    // From the second attempt after a lost link on, a different `hop`: behind the generated nginx
    // config (hash on the worker id and hop) it lands on another hub, so a hub that is up but
    // frozen (its kernel accepts, nothing answers) cannot hold the worker off the fleet. A hub
    // reached directly ignores it.
    this.linkHop = Math.max(0, this.attempt - 1);
    if (this.linkHop > 0) url.searchParams.set('hop', String(this.linkHop));
    const ws = new WebSocket(url, { headers: this.headers(), maxPayload: MAX_FRAME_BYTES, handshakeTimeout: this.o.handshakeTimeoutMs ?? 10_000 });
    this.ws = ws;
    this.linkReady = false;
    this.writes = UNCORKED;
    // The link's own TCP socket: frames sent within one turn leave in one write.
    ws.on('upgrade', (res) => {
      if (this.ws === ws) this.writes = corkPerTurn(res.socket);
    });
    // Refused in plain HTTP (a wrong worker token, a full or stopping hub): keep what it said for the re-link's log line.
    ws.on('unexpected-response', (_req, res) => {
      void readRefusal(res).then((refusal) => {
        if (this.ws === ws) this.refusal = refusal;
        ws.terminate();
      });
    });
    ws.on('open', () => {
      this.unansweredSince = undefined;
      // A hub that never welcomes this link (stuck, or failed mid-hello) must not hold it forever.
      clearTimeout(this.welcomeTimer);
      this.welcomeTimer = setTimeout(() => {
        this.o.log.warn('no welcome from the hub; re-linking');
        ws.terminate();
      }, WELCOME_TIMEOUT_MS);
      // hello waits for the hub's challenge: it must carry the proof for that nonce.
    });
    ws.on('message', (data) => {
      this.unansweredSince = undefined;
      this.onMessage(data.toString());
    });
    ws.on('pong', () => (this.unansweredSince = undefined));
    ws.on('close', (code, reason) => this.onClose(ws, code, reason.toString()));
    ws.on('error', (err) => this.o.log.debug({ err: String(err) }, 'link error'));
  }

  /** The hub picks no worker whose disk it does not know, so hello carries the host figures. */
  private async hello(nonce: string): Promise<void> {
    const ws = this.ws;
    const s = await this.stats.sample();
    if (this.ws !== ws) return;
    this.send({
      type: 'hello',
      worker_id: this.workerId!,
      lan_ip: this.o.lanIp,
      hostname: this.o.hostname ?? os.hostname(),
      capabilities: poolCapabilities(this.o.pool, PACKAGE_VERSION),
      jobs: this.runner.heldJobs(),
      results: this.outbox.pending(),
      fresh: !this.welcomed,
      instance: this.instance,
      kinds: [...this.o.pool.kinds],
      cpu_pct: s.cpuPct, mem_pct: s.memPct, disk_pct: s.diskPct,
      proof: linkProof(this.verifier!, nonce, this.workerId!),
    });
  }

  private onMessage(text: string): void {
    const parsed = parseHubMessage(text);
    if (!parsed.ok) {
      this.o.log.warn({ error: parsed.error, details: parsed.details }, 'bad message from hub');
      this.send({ type: 'error', message: boundedError(parsed.error) });
      return;
    }
    this.handle(parsed.value).catch((err: unknown) => this.o.log.warn({ err: String(err) }, 'hub message failed'));
  }

  private async handle(msg: HubMessage): Promise<void> {
    switch (msg.type) {
      case 'challenge':
        return this.hello(msg.nonce);
      case 'welcome':
        clearTimeout(this.welcomeTimer);
        this.attempt = 0;
        this.welcomed = true;
        this.linkReady = true;
        this.o.log.info({ worker_id: msg.worker_id, hub_id: msg.hub_id, status: msg.status, heartbeat_s: msg.heartbeat_s }, 'linked');
        // The hub judges liveness against its own period, so its heartbeat_s wins over ours.
        if (msg.heartbeat_s !== this.heartbeatS) this.o.log.info({ hub: msg.heartbeat_s, local: this.heartbeatS }, 'heartbeat period set by the hub');
        this.heartbeatS = msg.heartbeat_s;
        if (msg.view_key) this.o.viewKeys?.set(msg.worker_id, msg.view_key);
        else if (this.o.viewKeys) this.o.log.warn('the hub sent no live-view key (an older hub?): lane views refuse every viewer');
        if (msg.url_policy && this.o.pool.egress) {
          try {
            this.o.pool.egress.setHubLists(msg.url_policy);
          } catch (err) {
            this.o.log.error({ err: String(err) }, "the hub's egress rules do not parse here; keeping the previous ones");
          }
        }
        this.startHeartbeat();
        this.outbox.resend(0);
        this.linkedOnce?.();
        return;
      case 'assign': {
        if (this.received.length >= RECEIVED_KEPT) this.received.shift();
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
        return this.outbox.acked(msg.job_id);
      case 'result_refused':
        return this.outbox.refused(msg);
      case 'session_open':
      case 'session_command':
      case 'session_close':
        return this.runner.session(msg);
      case 'cdp_open':
        return this.openCdp(msg);
      case 'cdp_close':
        return this.runner.closeCdp(msg.cdp_id, msg.reason);
      case 'status':
        this.o.log.info({ status: msg.status }, 'status set by operator');
        return;
      case 'thumbs':
        this.thumbs.set(msg.lanes, msg.interval_ms);
        return;
      case 'error': {
        this.o.log.warn({ message: msg.message, details: msg.details }, 'hub reported an error');
        // "job … is not yours": the job is another worker's now, or unknown to the hub's
        // database; its result can never be stored, so it is not sent again (nor kept on disk).
        const d = msg.details as { refused?: unknown; job_id?: unknown } | undefined;
        if (d?.refused === 'job_result' && typeof d.job_id === 'string') this.outbox.disowned(d.job_id, msg.message);
        return;
      }
    }
  }

  /** A CDP client holds a lane: a fresh browser, and a tunnel dialed out to the hub that asked. */
  private openCdp(msg: Extract<HubMessage, { type: 'cdp_open' }>): void {
    const ended = (reason: string) => {
      this.runner.freeCdp(msg.cdp_id);
      this.o.log.info({ cdp_id: msg.cdp_id, reason }, 'CDP client ended');
      this.send({ type: 'cdp_closed', cdp_id: msg.cdp_id, reason: reason.slice(0, 200) });
    };
    let tunnel: CdpTunnel | undefined;
    const held = this.runner.holdCdp(msg.cdp_id, msg.lane, (reason) => tunnel?.close(reason));
    if ('error' in held) return this.send({ type: 'cdp_closed', cdp_id: msg.cdp_id, reason: held.error });
    this.o.log.info({ cdp_id: msg.cdp_id, lane: held.lane }, 'CDP client started');
    tunnel = new CdpTunnel({ hubUrl: this.o.hubUrl, hop: this.linkHop, workerId: this.workerId!, cdpId: msg.cdp_id, tunnelToken: msg.tunnel_token, headers: this.headers(), maxS: msg.max_s, maxDiskBytes: this.o.cdpMaxDiskBytes, browser: held.browser, onEnd: ended });
    void tunnel.start();
  }

  private startHeartbeat(): void {
    clearInterval(this.heartbeatTimer);
    void this.heartbeat();
    this.heartbeatTimer = setInterval(() => {
      void this.heartbeat();
      // After this turn's I/O: a pong already in the socket counts before the link is judged.
      setImmediate(() => this.watchLink());
    }, this.heartbeatS * 1000);
  }

  /**
   * A link whose network died without a FIN or RST (a cut cable, a NAT or proxy that forgot
   * it, a frozen hub behind a proxy that keeps the TCP up) looks open forever: writes go into
   * the kernel's buffer and nothing comes back. So every heartbeat tick pings the hub, and a
   * ping unanswered (no pong, no frame) for linkSilenceMs drops the link; the agent then
   * re-links like after any close, to whichever hub answers, with its jobs and results.
   */
  private watchLink(): void {
    const ws = this.ws;
    if (ws?.readyState !== WebSocket.OPEN) return;
    const now = Date.now();
    const limitMs = this.o.linkSilenceMs ?? Math.max(LINK_SILENCE_PERIODS * this.heartbeatS * 1000, LINK_SILENCE_FLOOR_MS);
    if (this.unansweredSince !== undefined && now - this.unansweredSince >= limitMs) {
      this.o.log.warn({ silent_ms: now - this.unansweredSince }, 'the hub answered nothing on this link; dropping it and re-linking');
      ws.terminate();
      return;
    }
    this.unansweredSince ??= now;
    ws.ping();
  }

  private async heartbeat(): Promise<void> {
    this.outbox.resend(this.heartbeatS * 1000);
    const s = await this.stats.sample();
    this.send({ type: 'heartbeat', in_flight: this.runner.inFlight, cpu_pct: s.cpuPct, mem_pct: s.memPct, disk_pct: s.diskPct, lanes: this.runner.laneStates(), lane_recycles: this.o.pool.recycles?.() });
  }

  private send(msg: WorkerMessageBody): void {
    this.transmit(encode(msg));
  }

  /** Write a frame on the open link, if there is one (see corkPerTurn: it leaves with the turn's other frames). */
  private transmit(frame: string, sent?: () => void): boolean {
    const ws = this.ws;
    if (ws?.readyState !== WebSocket.OPEN) return false;
    this.writes.hold();
    ws.send(frame, sent);
    return true;
  }

  private onClose(ws: WebSocket, code: number, reason: string): void {
    if (this.ws !== ws) return;
    this.linkReady = false;
    // Tokens are signed with this link's key: they die with it (the next welcome brings a new one).
    this.o.viewKeys?.clear();
    // A new link starts with no thumbnails asked for.
    this.thumbs.stop();
    // The hub freed the lanes of this link's CDP clients: their browsers end now, clean for the next link.
    this.runner.closeCdp(undefined, 'worker link closed');
    clearInterval(this.heartbeatTimer);
    clearTimeout(this.welcomeTimer);
    if (this.stopped) return;
    if (code === LINK_UNAUTHORIZED) return void this.onRefused(reason);
    if (code === LINK_ID_IN_USE) return this.fail(new WorkerIdInUseError(this.workerId ?? this.o.lanIp, this.o.hubUrl));
    // 1009: the hub closed on a frame past its ceiling.
    if (code === 1009) this.outbox.closedOnOversize();
    const delay = this.o.backoff ? backoffMs(this.attempt++, this.o.backoff.baseMs, this.o.backoff.capMs, this.o.random ?? mathRandom) : backoffMs(this.attempt++, 250, 10_000, this.o.random ?? mathRandom);
    const refusal = this.refusal;
    this.refusal = undefined;
    if (!refusal) this.o.log.warn({ retry_in_ms: delay, close_code: code, reason: reason || undefined }, 'link closed; re-linking');
    // A wrong token does not fix itself: said at error level, on every attempt.
    else this.o.log[refusal.status === 401 ? 'error' : 'warn']({ retry_in_ms: delay, status: refusal.status, code: refusal.code }, describeRefusal(refusal));
    this.reconnectTimer = setTimeout(() => this.connect(), delay);
  }

  /**
   * The hub refused the stored credential. A wrong proof means another secret holds this id:
   * stop, and say the operator must reset it (re-enrolling by itself would hide a takeover).
   * No credential at all (an operator reset it, or the hub's database is new): enroll again,
   * loudly; the hub refuses that too if someone else enrolled the id meanwhile.
   */
  private async onRefused(code: string): Promise<void> {
    const id = this.workerId ?? this.o.lanIp;
    if (code === 'worker_not_enrolled') {
      this.o.log.warn({ worker_id: id }, 'the hub has no credential for this worker (reset by an operator, or a new hub database); enrolling again');
      try {
        this.useCredential(await obtainCredential(this.credentialFile, this.enrollOptions(), { renew: true }));
        return this.connect();
      } catch (err) {
        return this.fail(err instanceof CredentialRejectedError ? err : new CredentialRejectedError(String(err)));
      }
    }
    this.fail(new CredentialRejectedError(`the hub refused worker ${id}'s credential (${code || 'refused'}); its secret in ${this.credentialFile.path} does not match the hub's. ${resetHint(id)}`));
  }

  private fail(err: Error): void {
    if (this.stopped) return;
    this.stopped = true;
    this.o.log.error({ err: err.message }, err instanceof WorkerIdInUseError ? 'worker id in use by another agent; stopping' : 'worker credential refused; stopping');
    this.linkFailed?.(err);
    this.o.onFatal?.(err);
  }

  /** Drop the link without stopping (tests: a network blip). */
  dropLink(): void {
    this.ws?.terminate();
  }

  /**
   * Graceful: no new work (assignments are refused as `shutting_down`), running jobs finish
   * (up to graceMs, then they are aborted), their results reach a hub (re-linking if the link
   * drops meanwhile, up to 5 s more), then a goodbye and the link closes.
   */
  /**
   * Finish running jobs within graceMs, say goodbye, end the lanes. A second call while the
   * first runs waits for it (a start that gave up and a signal both stop the agent; the second
   * used to return before the lanes ended, and the process exited with their profiles left).
   */
  stop(graceMs = 0): Promise<void> {
    this.stopping ??= this.stopOnce(graceMs);
    return this.stopping;
  }

  private stopping: Promise<void> | undefined;

  private async stopOnce(graceMs: number): Promise<void> {
    await this.runner.drain(graceMs);
    const until = Date.now() + Math.min(graceMs, 5000);
    while (this.outbox.size > 0 && !this.stopped && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    clearTimeout(this.welcomeTimer);
    clearInterval(this.heartbeatTimer);
    this.thumbs.stop();
    // Said before the close, so every hub shows this worker offline now, not after WORKER_TTL.
    this.send({ type: 'goodbye', reason: 'stopping' });
    this.ws?.close();
    this.writes.flush(); // the process may exit before this turn ends
    await this.runner.stop();
    await this.o.pool.stop();
  }
}

/** Another running agent holds a live link for this id: re-linking would knock it off, and it this one, forever. */
export class WorkerIdInUseError extends Error {
  constructor(workerId: string, hubUrl: string) {
    super(
      `worker id ${workerId} is already linked to ${hubUrl} by another running agent (two agents with the same --lan-ip, or the same --worker-id). ` +
        'To run several agents on one host, give each its own --worker-id and its own --data-dir; or stop the other agent.',
    );
    this.name = 'WorkerIdInUseError';
  }
}
