// The hub's end of every worker link: each upgraded socket gets a challenge, its frames are
// parsed at this edge (a malformed one gets an error reply and a log line, never an
// exception that could take the hub down; before the hello, or past a budget, it closes the
// link) and handled one at a time, in order. stop() closes
// every link and awaits each close handler, so a stopping hub releases its owner keys.
import { randomBytes } from 'node:crypto';
import type { RawData, WebSocket } from 'ws';
import { LINK_CEILING_BYTES, MAX_FRAME_BYTES, parseWorkerMessage, PROTOCOL_VERSION } from '../wire/protocol.ts';
import { corkPerTurn, UNCORKED, type Corkable } from '../wire/turn-writes.ts';
import { withDeadline, type Clock } from '../ports/clock.ts';
import { LinkHandshake, sendChallenge, sendError } from './link-handshake.ts';
import { LinkMessages } from './link-messages.ts';
import { frameBytes, oversizedFrameReply, sessionReplyRequestId, unreadableResultReply } from './frame-refusals.ts';
import type { LinkDeps } from './link-deps.ts';
import { HelloAdmission } from './hello-admission.ts';
import type { Admission, HelloSlot } from './pending-hellos.ts';
import type { LinkSocket, WorkerLink, WorkerStatus } from './worker-link.ts';

export { LINK_ID_IN_USE, LINK_UNAUTHORIZED } from './link-handshake.ts';
export type { LinkDeps } from './link-deps.ts';

const HELLO_TIMEOUT_MS = 10_000;
/**
 * Malformed frames a linked worker may send in a burst, and per second after it. A worker of
 * another version may now and then send a message this hub does not know; hundreds a second
 * are not a worker, and answering and logging each one held the whole hub (a flood from one
 * socket made /healthz answer 503 and the log grow by a quarter of a gigabyte).
 */
const BAD_FRAME_BURST = 20;
const BAD_FRAMES_PER_S = 1;
/** Close code for a link that did not speak the protocol (WebSocket: policy violation). */
const LINK_PROTOCOL_VIOLATION = 1008;
/** How long stop() waits for links to close before cutting them. */
const STOP_CLOSE_MS = 2_000;
/**
 * Frames a link may have parsed and waiting in its queue, and their bytes: past either the hub
 * stops reading the socket (TCP pushes back on the worker) until the queue is down to a quarter.
 * Unbounded, one worker that sent results and never read the answers grew a hub by 65 MB/s
 * until V8 ran out of heap (each answer waits for its write, which a peer that reads nothing
 * never lets finish).
 */
export const LINK_QUEUE_MAX_FRAMES = 256;
export const LINK_QUEUE_MAX_BYTES = 64 * 1024 * 1024;
/**
 * Largest frame before the hello: a hello lists at most 1,024 held jobs and 4,096 pending
 * results (about 0.5 MB). Until it, the socket's limit is this, not the link's 64 MB, so a
 * holder of the shared worker token cannot make the hub buffer and parse 64 MB per socket.
 */
export const PRE_HELLO_MAX_BYTES = 1024 * 1024;
/**
 * A socket closed before it linked (no hello, a bad one, a refused or failed one) is cut this
 * long after its close frame: ws otherwise waits 30 s for a peer's close that a hostile peer
 * never sends, the socket still read meanwhile and holding its slot among those awaiting a hello.
 */
const UNLINKED_CLOSE_GRACE_MS = 1_000;

/** ws keeps its frame limit on the receiver; it is read per frame, so it may change on an open socket. */
function setMaxPayload(ws: WebSocket, bytes: number): void {
  const receiver = (ws as unknown as { _receiver?: { _maxPayload?: number } })._receiver;
  if (receiver && typeof receiver._maxPayload === 'number') receiver._maxPayload = bytes;
}


function socketOf(ws: WebSocket, raw: Corkable | undefined): LinkSocket {
  const writes = raw ? corkPerTurn(raw) : UNCORKED;
  return {
    send: (text) =>
      new Promise((resolve, reject) => {
        if (ws.readyState !== ws.OPEN) return reject(new Error('link is not open'));
        writes.hold();
        ws.send(text, (err) => (err ? reject(err) : resolve()));
      }),
    close: (code, reason) => ws.close(code, reason),
    terminate: () => ws.terminate(),
    answersPing: (ms) =>
      new Promise((resolve) => {
        if (ws.readyState !== ws.OPEN) return resolve(false);
        const done = (alive: boolean) => {
          clearTimeout(timer);
          ws.off('pong', onPong);
          resolve(alive);
        };
        const onPong = () => done(true);
        const timer = setTimeout(() => done(false), ms);
        ws.on('pong', onPong);
        ws.ping();
      }),
    get open() {
      return ws.readyState === ws.OPEN;
    },
  };
}

export class LinkService {
  private readonly handshake: LinkHandshake;
  private readonly messages: LinkMessages;
  /** Every accepted socket → its close handling, settled once that has run. */
  private readonly closed = new Map<WebSocket, Promise<void>>();
  private stopped = false;
  private readonly hellos: HelloAdmission;

  constructor(private readonly d: LinkDeps) {
    this.handshake = new LinkHandshake(d);
    this.messages = new LinkMessages(d);
    this.hellos = new HelloAdmission(d);
  }

  /** Before a link's upgrade: its slot among the sockets awaiting a hello (hello-admission.ts). */
  admit(remote: string | undefined, cut: () => void): Admission {
    return this.hellos.admit(remote, cut);
  }

  /** Sockets upgraded (or upgrading) whose hello has not been answered yet. */
  get waitingForHello(): number {
    return this.hellos.waiting;
  }

  /**
   * Takes over an upgraded socket for `workerId`. The worker token (checked by the HTTP layer)
   * only let it in: the hello must prove the id for this link's nonce before anything of that
   * worker — its current link, jobs or status — is touched.
   */
  accept(ws: WebSocket, workerId: string, remote?: string, raw?: Corkable, slot: HelloSlot = { heard: () => {}, ending: () => {}, release: () => {} }): void {
    const releaseSlot = slot.release;
    if (this.stopped) {
      releaseSlot();
      ws.close(1001, 'hub stopping');
      return;
    }
    const socket = socketOf(ws, raw);
    /** Ends a socket that never linked: its close frame, then cut after a grace whether or not the peer answers. */
    const endUnlinked = (code?: number, reason?: string): void => {
      slot.ending(); // the first to cut should a newcomer need its slot
      if (code !== undefined) ws.close(code, reason);
      this.d.clock.setTimer(UNLINKED_CLOSE_GRACE_MS, () => ws.terminate());
    };
    let link: WorkerLink | undefined;
    let refused = false;
    let queue = Promise.resolve();
    let helloSeen = false;
    let badCredit = BAD_FRAME_BURST;
    let lastBadAt = this.d.clock.now();
    /** A frame that did not parse, or a first frame that was not a hello: answered while within the budget, the link closed past it. */
    const badFrame = (error: string, details?: unknown, data?: RawData): void => {
      if (refused) return;
      if (!helloSeen) {
        // Before the hello nothing is owed to the socket: a frame that is not a valid hello ends it (only a worker token got it this far).
        refused = true;
        this.d.log.warn({ worker_id: workerId, remote, error }, 'first frame on a worker link was not a valid hello; closing it');
        endUnlinked(LINK_PROTOCOL_VIOLATION, `expected a valid hello: ${error}`.slice(0, 120));
        return;
      }
      const now = this.d.clock.now();
      badCredit = Math.min(BAD_FRAME_BURST, badCredit + ((now - lastBadAt) / 1000) * BAD_FRAMES_PER_S) - 1;
      lastBadAt = now;
      if (badCredit < 0) {
        refused = true;
        this.d.log.warn({ worker_id: workerId, error }, 'worker link sent malformed frames past its budget; closing it');
        if (link) ws.close(LINK_PROTOCOL_VIOLATION, 'too many malformed frames');
        else endUnlinked(LINK_PROTOCOL_VIOLATION, 'too many malformed frames');
        return;
      }
      this.d.log.warn({ worker_id: workerId, error, details }, 'bad message from worker');
      const refusal = data === undefined ? undefined : unreadableResultReply(data, details);
      if (refusal) socket.send(refusal).catch(() => {});
      else void sendError(socket, error, details);
    };
    let closeDone!: () => void;
    this.closed.set(ws, new Promise<void>((resolve) => (closeDone = resolve)));
    const nonce = randomBytes(32).toString('hex');
    const cancelHelloTimer = this.d.clock.setTimer(HELLO_TIMEOUT_MS, () => {
      if (!link) endUnlinked(4000, 'no hello');
    });
    sendChallenge(socket, nonce);
    setMaxPayload(ws, PRE_HELLO_MAX_BYTES);
    let queuedFrames = 0;
    let queuedBytes = 0;
    /** Frames parsed and not yet handled: reading stops past the bounds, and starts again at a quarter of them. */
    const enqueued = (bytes: number): (() => void) => {
      queuedFrames++;
      queuedBytes += bytes;
      if (!ws.isPaused && (queuedFrames >= LINK_QUEUE_MAX_FRAMES || queuedBytes >= LINK_QUEUE_MAX_BYTES)) ws.pause();
      return () => {
        queuedFrames--;
        queuedBytes -= bytes;
        if (ws.isPaused && queuedFrames <= LINK_QUEUE_MAX_FRAMES / 4 && queuedBytes <= LINK_QUEUE_MAX_BYTES / 4) ws.resume();
      };
    };

    /** A session command's reply the hub cannot take: its client is answered now, not after PAPRIKA_FORWARD_TIMEOUT_S. */
    const failSessionRequest = (requestId: string, error: string): void => {
      queue = queue
        .then(() => (link ? this.messages.onMessage(link, { type: 'session_reply', v: PROTOCOL_VERSION, request_id: requestId, ok: false, error }) : undefined))
        .catch((err: unknown) => this.d.log.warn({ worker_id: workerId, err: String(err) }, 'session reply refusal failed'));
    };
    ws.on('message', (data, isBinary) => {
      if (refused) return;
      // Alive as of now, even if this frame waits behind a database write (a stalled Postgres must not make the fleet look silent).
      link?.heard(this.d.clock.now());
      const bytes = frameBytes(data);
      if (bytes > MAX_FRAME_BYTES) {
        if (!helloSeen) return badFrame(`a frame of ${bytes} bytes`);
        const reply = oversizedFrameReply(data, bytes);
        this.d.log.warn({ worker_id: workerId, bytes, type: reply.type, job_id: reply.jobId }, 'frame over the limit refused');
        socket.send(reply.text).catch(() => {});
        // A session command's reply that never arrives would keep its client waiting PAPRIKA_FORWARD_TIMEOUT_S.
        if (reply.requestId) failSessionRequest(reply.requestId, `result too large: ${reply.reason}`);
        return;
      }
      const parsed = parseWorkerMessage(isBinary ? data : data.toString());
      if (!parsed.ok) {
        const requestId = helloSeen ? sessionReplyRequestId(data) : undefined;
        if (requestId) failSessionRequest(requestId, `the reply is not valid as sent: ${parsed.error}`.slice(0, 2000));
        return badFrame(parsed.error, parsed.details, data);
      }
      if (!helloSeen) {
        if (parsed.value.type !== 'hello') {
          // What an agent older than the hub's link protocol sends: it cannot read the challenge.
          const older = parsed.value.type === 'error' ? `the worker could not answer this hub's challenge (an agent older than this hub? upgrade it, README: Upgrading): ${parsed.value.message}` : undefined;
          return badFrame(older ?? `got ${parsed.value.type}`);
        }
        if (parsed.value.worker_id !== workerId) return badFrame(`hello for ${parsed.value.worker_id} on the link of ${workerId}`);
        helloSeen = true;
        slot.heard(); // its hello is being checked: never cut to make room for a newcomer
      }
      // Thumbnails are lossy and replaced every second: taken at once, never queued behind a
      // database write (a wall of 16 lanes filled the queue in 16 s of a Postgres stall, the hub
      // stopped reading, and with it answering the worker's pings: the link was dropped as silent).
      if (parsed.value.type === 'thumb' && link) {
        const l = link;
        const thumb = parsed.value;
        void Promise.resolve()
          .then(() => this.messages.onMessage(l, thumb))
          .catch((err: unknown) => this.d.log.debug({ worker_id: workerId, err: String(err) }, 'thumbnail dropped'));
        return;
      }
      const handled = enqueued(bytes);
      // One message at a time per link, in order: a result never overtakes its job_started.
      queue = queue
        .then(async () => {
          const msg = parsed.value;
          if (refused) return;
          if (!link) {
            if (msg.type !== 'hello') throw new Error(`expected hello first, got ${msg.type}`);
            if (msg.worker_id !== workerId) throw new Error(`hello for ${msg.worker_id} on the link of ${workerId}`);
            cancelHelloTimer();
            // Proven, it is a worker's, no stranger's: its slot among the sockets awaiting a hello
            // goes back before any wait for the id's current link (one take-over check per id).
            const outcome = await this.handshake.hello(socket, workerId, nonce, msg, remote, (l) => (link = l), releaseSlot);
            if (outcome === 'linked') {
              // Its slot among the sockets awaiting a hello, and the link's own limit, only once the
              // hello proved the worker (a hello without a proof parses too). Refused or failed, the
              // handshake sent its close: the slot stays held until the socket is gone.
              releaseSlot();
              setMaxPayload(ws, LINK_CEILING_BYTES);
            } else {
              if (outcome === 'refused') refused = true;
              endUnlinked();
            }
            return;
          }
          await this.messages.onMessage(link, msg);
        })
        .catch((err: unknown) => {
          this.d.log.warn({ worker_id: workerId, err: String(err) }, 'worker message failed');
          void sendError(socket, String(err instanceof Error ? err.message : err));
        })
        .finally(handled);
    });
    ws.on('error', (err) => this.d.log.debug({ worker_id: workerId, err: String(err) }, 'link error'));
    ws.on('close', () => {
      releaseSlot();
      cancelHelloTimer();
      void queue
        .then(() => (link ? this.messages.onClose(link) : undefined))
        .catch((err: unknown) => this.d.log.warn({ worker_id: workerId, err: String(err) }, 'link close handling failed'))
        .finally(() => {
          this.closed.delete(ws);
          closeDone();
        });
    });
  }

  /** Close every link and wait until each close handler ran (owner keys released). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const ws of this.closed.keys()) ws.close(1001, 'hub stopping');
    if (await this.closedWithin(STOP_CLOSE_MS)) return this.settledWrites();
    // A peer that does not answer the close handshake: cut it; its close handler still runs.
    for (const ws of this.closed.keys()) ws.terminate();
    if (!(await this.closedWithin(STOP_CLOSE_MS))) this.d.log.warn({ links: this.closed.size }, 'links still closing when the hub stopped');
    await this.settledWrites();
  }

  /** Results still being written (their links may be gone) settle before the store closes. */
  private async settledWrites(): Promise<void> {
    await withDeadline(this.d.clock, STOP_CLOSE_MS, 'result writes', this.messages.settled()).catch(() => this.d.log.warn('result writes still pending when the hub stopped'));
  }

  private closedWithin(ms: number): Promise<boolean> {
    return withDeadline(this.d.clock, ms, 'links closing', Promise.all([...this.closed.values()])).then(
      () => true,
      () => false,
    );
  }

  /**
   * Drops every link this hub holds that has been silent for PAPRIKA_WORKER_TTL_S (no heartbeat,
   * no message): every hub already counts that worker dead. A link whose network died without a
   * FIN or RST (a cut cable, a NAT that forgot it, a frozen peer) otherwise stays open until the
   * kernel gives up (~15 min), and the fleet view keeps this hub's stale link over the worker's
   * live link on another hub. Called from the hub heartbeat loop; each dropped link's close
   * handler then runs as for any close.
   */
  dropSilentLinks(): void {
    const now = this.d.clock.now();
    const ttlMs = this.d.config.workerTtlS * 1000;
    for (const link of this.d.localLinks.all()) {
      if (!link.open || now - link.last_seen_ms <= ttlMs) continue;
      this.d.log.warn({ worker_id: link.worker_id, silent_s: Math.round((now - link.last_seen_ms) / 100) / 10 }, 'worker link silent for longer than PAPRIKA_WORKER_TTL_S; dropping it');
      link.terminate();
    }
  }

  /**
   * Apply an operator's status on this hub's link of the worker. False when this hub holds no
   * live link of it (none, closed, or silent past PAPRIKA_WORKER_TTL_S: the worker may have
   * re-linked elsewhere), so the caller forwards it to the worker's owner hub instead.
   */
  async pushStatus(workerId: string, status: WorkerStatus): Promise<boolean> {
    const link = this.d.localLinks.get(workerId);
    if (!link?.open || !link.aliveAt(this.d.clock.now(), this.d.config.workerTtlS * 1000)) return false;
    await link.pushStatus(status);
    this.d.publisher.mark(link);
    if (status === 'active') this.d.lanes.offer(link.freeLaneCount);
    this.d.events.workersChanged();
    return true;
  }
}
