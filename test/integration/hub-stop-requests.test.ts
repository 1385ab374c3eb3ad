// A graceful stop answers every request it received (an outside probe: 2 of 6 `POST /jobs/batch`
// sent just before a SIGTERM saw a reset and no answer). Until its links are closed the hub still
// accepts connections (peer hubs forward to its workers), each answer closing its connection;
// then it refuses new ones, and a request still being read, or sent on a keep-alive connection,
// gets a whole answer (201, or 503 `shutting_down` with Connection: close); a long poll and the
// console's event stream end at once; a client that sends headers and then nothing holds the
// stop only up to its bound, and is answered 503 too; a refused upgrade whose client never
// closes its side does not hold the stop at all.
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { openJobStore } from '../../hub-core/src/adapters/sql/sql-job-store.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { observeStore } from '../harness/observed-store.ts';
import { rawLink } from '../harness/raw-link.ts';
import { waitFor } from '../harness/wait.ts';

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One HTTP/1.1 connection written byte by byte; answers read as they come, a close without one is an error. */
class RawConnection {
  private received = '';
  private ended: string | undefined;
  private wake = () => {};

  private constructor(private readonly socket: net.Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => ((this.received += d), this.wake()));
    socket.on('error', (err: NodeJS.ErrnoException) => ((this.ended = err.code ?? err.message), this.wake()));
    socket.on('close', () => ((this.ended ??= 'closed'), this.wake()));
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1', () => resolve(new RawConnection(s)));
      s.once('error', reject);
    });
  }

  send(text: string): Promise<void> {
    return new Promise((resolve, reject) => this.socket.write(text, (err) => (err ? reject(err) : resolve())));
  }

  /** The next whole answer (status line, headers, Content-Length body); throws if the connection ends first. */
  async answer(): Promise<RawAnswer> {
    for (;;) {
      const head = this.received.indexOf('\r\n\r\n');
      if (head >= 0) {
        const [statusLine, ...lines] = this.received.slice(0, head).split('\r\n');
        const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
        const length = Number(headers['content-length'] ?? 0);
        if (this.received.length >= head + 4 + length) {
          const body = this.received.slice(head + 4, head + 4 + length);
          this.received = this.received.slice(head + 4 + length);
          return { status: Number(statusLine.split(' ')[1]), headers, body };
        }
      }
      if (this.ended) throw new Error(`the connection ended (${this.ended}) without a whole answer; got ${JSON.stringify(this.received)}`);
      await new Promise<void>((r) => (this.wake = r));
    }
  }

  /** Resolves when the hub has closed the connection. */
  async closed(): Promise<string> {
    while (!this.ended) await new Promise<void>((r) => (this.wake = r));
    return this.ended;
  }

  destroy(): void {
    this.socket.destroy();
  }
}

function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(false)));
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

const postHead = (port: number, path: string, length: number, extra = '') =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${extra}\r\n`;

/** 503 shutting_down as {error, code, details}, closing its connection. */
function expectShuttingDown(a: RawAnswer): void {
  expect(a.status).toBe(503);
  expect(a.headers.connection).toBe('close');
  expect(a.headers['retry-after']).toBeDefined();
  const body = JSON.parse(a.body);
  expect(body).toMatchObject({ error: expect.any(String), code: 'shutting_down' });
  expect(body).toHaveProperty('details');
}

describe('a hub that stops gracefully', () => {
  let th: TestHub | undefined;
  const open: RawConnection[] = [];
  afterEach(async () => {
    for (const c of open.splice(0)) c.destroy();
    await th?.stop();
    th = undefined;
  });
  const connect = async (port: number) => {
    const c = await RawConnection.open(port);
    open.push(c);
    return c;
  };

  it('answers a POST /jobs/batch whose body was still arriving when the stop began (201 and stored, or 503), never a reset', async () => {
    th = await startTestHub();
    const port = th.hub.port;
    const body = JSON.stringify({ jobs: [1, 2, 3].map((i) => ({ kind: 'sleep', spec: { ms: 1 }, idempotency_key: `stop-batch-${i}` })) });
    const c = await connect(port);
    await c.send(postHead(port, '/jobs/batch', body.length) + body.slice(0, body.length / 2));
    const stopped = th.hub.stop();
    await waitFor('the stopping hub refuses new connections', () => refusesConnections(port), 10_000, 10);
    await c.send(body.slice(body.length / 2));
    const a = await c.answer();
    if (a.status === 201) {
      for (const job of JSON.parse(a.body).jobs) expect(await th.hub.store.getJob(job.id)).toMatchObject({ id: job.id });
    } else {
      expectShuttingDown(a);
    }
    await c.closed();
    await stopped;
  });

  it('answers a request sent on a keep-alive connection during the stop, then closes that connection', async () => {
    th = await startTestHub();
    const port = th.hub.port;
    const keepAlive = await connect(port);
    await keepAlive.send(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    expect((await keepAlive.answer()).status).toBe(200);
    // A second client in the middle of its body: the stop cannot end before answering it.
    const slow = await connect(port);
    const slowBody = JSON.stringify({ kind: 'sleep', spec: { ms: 1 } });
    await slow.send(postHead(port, '/jobs', slowBody.length) + slowBody.slice(0, 5));

    const stopped = th.hub.stop();
    await waitFor('the stopping hub refuses new connections', () => refusesConnections(port), 10_000, 10);
    const job = JSON.stringify({ kind: 'sleep', spec: { ms: 1 } });
    await keepAlive.send(postHead(port, '/jobs', job.length, 'Idempotency-Key: stop-keep-alive\r\n') + job);
    expectShuttingDown(await keepAlive.answer());
    expect(await keepAlive.closed()).toBe('closed');

    await slow.send(slowBody.slice(5));
    expectShuttingDown(await slow.answer());
    await stopped;
  });

  it('answers a long poll at once with the job as it is, and ends the console event stream (1001)', async () => {
    const inner = await openJobStore({});
    const observed = observeStore(inner);
    try {
      th = await startTestHub({ PAPRIKA_ASSIGN_WAIT_S: '0' }, { store: observed.store });
      const port = th.hub.port;
      const job = await (await fetch(`${th.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'sleep', spec: { ms: 1 } }) })).json();
      expect(job.status).toBe('queued');
      const events = new WebSocket(`ws://127.0.0.1:${port}/admin/events`, ['paprika.v1']);
      const eventsClosed = new Promise<number>((resolve) => events.once('close', (code) => resolve(code)));
      await new Promise((resolve, reject) => (events.once('message', resolve), events.once('error', reject)));

      const poll = await connect(port);
      const read = observed.more('getJob', 1, 'the long poll read its job');
      await poll.send(`GET /jobs/${job.id}?wait_s=60 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
      await read;
      const t0 = Date.now();
      const stopped = th.hub.stop();
      const a = await poll.answer();
      expect(a.status).toBe(200);
      expect(JSON.parse(a.body)).toMatchObject({ id: job.id, status: 'queued' });
      expect(a.headers.connection).toBe('close');
      expect(await eventsClosed).toBe(1001);
      await stopped;
      expect(Date.now() - t0).toBeLessThan(4000);
    } finally {
      await th?.stop();
      th = undefined;
      await inner.close();
    }
  });

  it('does not wait for a client that sent headers and then nothing past its bound: it is answered 503', async () => {
    th = await startTestHub();
    const port = th.hub.port;
    const c = await connect(port);
    await c.send(postHead(port, '/jobs', 100) + '{');
    const t0 = Date.now();
    await th.hub.stop();
    const took = Date.now() - t0;
    expectShuttingDown(await c.answer());
    expect(await c.closed()).toBe('closed');
    // The stop's own bound (5 s), well under the 30 s body timeout.
    expect(took).toBeLessThan(8000);
  });

  it('still accepts and answers new connections while its links close (a peer forwarding to its workers), each answer closing its connection', async () => {
    th = await startTestHub();
    const port = th.hub.port;
    // A linked worker that never answers the hub's close holds links.stop() for its bound (2 s).
    const { ws } = await rawLink(th.url, 'w-stop-window');
    (ws as unknown as { _socket: { pause(): void } })._socket.pause();
    const stopped = th.hub.stop();
    const link = th.hub.localLinks.get('w-stop-window')!;
    await waitFor('the stop closing its links', async () => !link.open, 5000, 5);
    const c = await connect(port);
    await c.send(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    const a = await c.answer();
    expect([200, 503]).toContain(a.status);
    expect(a.headers.connection).toBe('close');
    expect(await c.closed()).toBe('closed');
    expect(th.hub.localLinks.get('w-stop-window')).toBeDefined(); // the window was real: its link not closed yet
    await stopped;
    ws.terminate();
  });

  it('ends a refused upgrade whose client never sends its FIN: the stop is not held by it', async () => {
    th = await startTestHub();
    const port = th.hub.port;
    const s = await new Promise<net.Socket>((resolve, reject) => {
      const sock = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true }, () => resolve(sock));
      sock.once('error', reject);
    });
    let got = '';
    const ended = new Promise<void>((resolve) => s.once('end', () => resolve()));
    s.on('data', (d) => (got += String(d)));
    s.on('error', () => {});
    s.write(`GET /no-such-route HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    await ended; // the hub answered and ended its side; this side never ends its own
    expect(got).toMatch(/^HTTP\/1\.1 404 /);
    const t0 = Date.now();
    await th.hub.stop();
    expect(Date.now() - t0).toBeLessThan(4000);
    s.destroy();
  });

  it('answers many long polls at once without a listener-leak warning', async () => {
    th = await startTestHub({ PAPRIKA_ASSIGN_WAIT_S: '0' });
    const job = await (await fetch(`${th.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'sleep', spec: { ms: 1 } }) })).json();
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    try {
      const polls = Array.from({ length: 30 }, () => fetch(`${th!.url}/jobs/${job.id}?wait_s=60`).then((r) => r.json()));
      await waitFor('30 long polls waiting', async () => (th!.hub.waits as unknown as { waiters: number }).waiters === 30, 10_000, 10);
      await th.hub.stop();
      expect((await Promise.all(polls)).map((j) => j.status)).toEqual(polls.map(() => 'queued'));
      await new Promise((r) => setImmediate(r)); // a warning is emitted on the next tick
      expect(warnings.filter((w) => w.includes('MaxListeners'))).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
