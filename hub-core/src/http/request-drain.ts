// A graceful stop of the HTTP server: every request whose bytes arrived gets an answer.
// Fastify's forceCloseConnections destroyed every connection at close, with it a request still
// being read: 2 of 6 `POST /jobs/batch` sent just before a SIGTERM saw a reset and no answer (an
// outside probe). From the stop's start every answer closes its connection; new connections are
// accepted until close() (peer hubs still reach the hub's workers), then refused; a request on
// an open connection is served as usual (a stopping hub answers new jobs 503 `shutting_down`);
// idle keep-alive connections are closed; at the bound a request still being read gets a 503 of
// its own, and one whose handler still runs a last FLUSH_MS before its connection is cut.
import net, { type Socket } from 'node:net';
import type { Server, ServerResponse } from 'node:http';
import type { Clock } from '../ports/clock.ts';
import { PaprikaError } from '../wire/errors.ts';
import { FLUSH_MS, rawAnswer } from './raw-answer.ts';

export class RequestDrain {
  /** Every HTTP connection (a WebSocket's leaves at its upgrade: its server owns it). */
  private readonly sockets = new Set<Socket>();
  /** The answer each connection owes, while it owes one. */
  private readonly owed = new Map<Socket, ServerResponse>();
  /** Connections that have had an answer: between requests they are idle keep-alive connections. */
  private readonly served = new WeakSet<Socket>();
  private listenerClosed: Promise<void> | undefined;
  private stopping = false;
  /** Re-checks what close() waits for; set while it waits. */
  private changed: (() => void) | undefined;

  constructor(
    private readonly server: Server,
    private readonly clock: Clock,
  ) {
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.forget(socket));
    });
    server.on('upgrade', (_req, socket: Socket) => this.forget(socket));
    server.on('request', (req, res: ServerResponse) => {
      const socket = req.socket;
      this.owed.set(socket, res);
      res.once('close', () => {
        this.served.add(socket);
        if (this.owed.get(socket) === res) this.owed.delete(socket);
        this.changed?.();
      });
    });
  }

  /** True from beginStop() on: every answer then closes its connection. */
  get closing(): boolean {
    return this.stopping;
  }

  /**
   * The hub's stop begins: answers close their connections (a client's next request opens one
   * elsewhere, or here while the hub still accepts), but new connections are still accepted
   * until close(): peer hubs forward cancels and session commands for this hub's workers until
   * its links are closed.
   */
  beginStop(): void {
    this.stopping = true;
  }

  /**
   * New connections are refused from now on (a load balancer or the SDK goes to another hub).
   * Open ones stay: a request already sent on one, or sent on a keep-alive connection while the
   * hub stops, is answered (Node's own close drops idle keep-alive connections at once, and with
   * them a request in flight on one).
   */
  private stopAccepting(): void {
    this.stopping = true;
    // After one more turn of the event loop: a connection the kernel completed before the stop
    // (its request may be on its way) is accepted and answered, not reset with the listener.
    this.listenerClosed ??= new Promise((resolve) =>
      setImmediate(() =>
        setImmediate(() => {
          net.Server.prototype.close.call(this.server);
          resolve();
        }),
      ),
    );
  }

  /**
   * Waits up to `boundMs` for every request to be answered (each connection closes after its
   * answer; an idle keep-alive connection still carries a request sent meanwhile), then closes
   * the idle connections; at the bound, a request still being read is answered 503 and one
   * whose handler runs gets FLUSH_MS more (refuse()). Both waits are on the injected clock: a
   * test on a manual clock with a request in flight advances it past each, or the stop waits.
   */
  async close(boundMs: number): Promise<void> {
    this.stopAccepting();
    await this.listenerClosed;
    const until = this.clock.now() + boundMs;
    await this.waitUntil(() => [...this.sockets].every((s) => this.looksIdle(s)), boundMs);
    this.server.closeIdleConnections();
    // Connected but never sent a byte (a browser's preconnect): no request to answer.
    for (const socket of this.sockets) if (socket.bytesRead === 0 && !this.owed.has(socket)) socket.destroy();
    if (await this.waitUntil(() => this.sockets.size === 0, until - this.clock.now())) return;
    for (const socket of this.sockets) this.refuse(socket);
    if (!(await this.waitUntil(() => this.sockets.size === 0, FLUSH_MS))) for (const socket of this.sockets) socket.destroy();
  }

  /** Owes nothing and is between requests (or never sent one); Node's parser has the last word. */
  private looksIdle(socket: Socket): boolean {
    return !this.owed.has(socket) && (socket.bytesRead === 0 || this.served.has(socket));
  }

  private forget(socket: Socket): void {
    this.sockets.delete(socket);
    this.owed.delete(socket);
    this.changed?.();
  }

  /** Resolves true once `done()` holds, false after `ms`. */
  private async waitUntil(done: () => boolean, ms: number): Promise<boolean> {
    if (done()) return true;
    if (ms <= 0) return false;
    const held = await new Promise<boolean>((resolve) => {
      const cancel = this.clock.setTimer(ms, () => resolve(false));
      this.changed = () => {
        if (!done()) return;
        cancel();
        resolve(true);
      };
    });
    this.changed = undefined;
    return held;
  }

  /**
   * The bound passed. A request still being read (or not begun) is answered 503: no handler
   * ran, so a retry elsewhere is safe. One read whole has a handler still running, which may
   * yet commit (a batch without idempotency keys would be made twice by a retry the 503
   * invited): it keeps the flush's second to answer, then its connection is cut like a crash's.
   */
  private refuse(socket: Socket): void {
    const res = this.owed.get(socket);
    if (res && (res.req.complete || res.headersSent)) return;
    const body = new PaprikaError('shutting_down', { reason: 'the hub stopped before this request was complete' }).toBody();
    if (res) {
      const text = JSON.stringify(body);
      res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), connection: 'close', 'retry-after': '1' });
      res.end(text);
    } else if (socket.writable) {
      socket.write(rawAnswer(503, body, { 'Retry-After': '1' })); // no request parsed on it yet
    }
    socket.destroySoon(); // close() destroys what is left after FLUSH_MS
  }
}
