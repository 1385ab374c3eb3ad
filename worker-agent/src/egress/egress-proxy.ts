// A lane's egress proxy: its Chrome runs with `--proxy-server` pointing here (loopback included,
// `<-loopback>`), so every HTTP request and every tunnel (HTTPS, and WebSockets, which Chrome
// always opens with CONNECT through a proxy) of every page, frame, worker and service worker
// passes this check — which CDP request interception cannot promise (it never sees WebSocket
// handshakes). The upstream connection goes to the very address that was checked, so a name
// that re-resolves between check and connect (DNS rebinding) cannot slip through.
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { EgressGuard } from './egress-guard.ts';

/** Response header on a refused plain-HTTP request: the lane reads it to fail a denied navigation. */
export const DENIED_HEADER = 'x-paprika-denied';
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade']);
const RECENT_MAX = 200;

export interface Denial {
  /** `http://host:port/path` for a request, `host:port` for a tunnel. */
  target: string;
  rule: string;
}

const BODILESS = new Set(['GET', 'HEAD', 'OPTIONS']);

export class EgressProxy {
  private server: http.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  /** Recent refusals by `host:port`, newest last: explains a navigation that failed on a tunnel. */
  private readonly recent = new Map<string, Denial>();
  /** Upstream connections opened (tests prove a denied target was never contacted). */
  readonly contacted: string[] = [];
  port = 0;

  constructor(private readonly guard: EgressGuard) {}

  async start(): Promise<number> {
    const server = http.createServer((req, res) => void this.forward(req, res));
    server.on('connect', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => void this.tunnel(req, socket, head));
    // A plain-HTTP WebSocket upgrade without CONNECT: Chrome does not send one; refuse it.
    server.on('upgrade', (_req, socket: net.Socket) => socket.destroy());
    server.on('connection', (s: net.Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    server.on('clientError', (_err, socket) => socket.destroy());
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this.port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    this.agent.destroy();
    if (server) await new Promise((r) => server.close(r));
  }

  /** The refusal of `host:port` seen most recently, if any. */
  denialFor(host: string, port: number): Denial | undefined {
    return this.recent.get(`${host.toLowerCase()}:${port}`);
  }

  private deny(host: string, port: number, denial: Denial): void {
    const key = `${host.toLowerCase()}:${port}`;
    this.recent.delete(key);
    this.recent.set(key, denial);
    if (this.recent.size > RECENT_MAX) this.recent.delete(this.recent.keys().next().value!);
  }

  private async forward(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      // Not a proxy request (a page aiming at the proxy's own port, say): nothing to serve.
      return void res.writeHead(400).end();
    }
    if (url.protocol !== 'http:') return void res.writeHead(400).end();
    const port = url.port === '' ? 80 : Number(url.port);
    let verdict;
    try {
      verdict = await this.guard.checkTarget(url.hostname, port);
    } catch (err) {
      return void res.writeHead(502, { 'content-type': 'text/plain' }).end(`egress proxy: ${(err as Error).message}`);
    }
    if (!verdict.allowed) {
      this.deny(url.hostname, port, { target: url.href, rule: verdict.rule });
      return void res.writeHead(403, { 'content-type': 'text/plain', [DENIED_HEADER]: verdict.rule }).end(`url denied: ${url.href} (${verdict.rule})`);
    }
    this.contacted.push(`${verdict.address}:${port}`);
    const address = verdict.address;
    const bodiless = BODILESS.has(req.method ?? '') && req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined;
    const send = (agent: http.Agent | false) => {
      const upstream = http.request(
        { host: address, port, method: req.method, path: `${url.pathname}${url.search}`, headers: withoutHopByHop(req.headers), setHost: false, agent },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.statusMessage, withoutHopByHop(up.headers));
          up.pipe(res);
          up.on('error', () => res.destroy());
        },
      );
      upstream.on('error', (err: NodeJS.ErrnoException) => {
        // A kept-alive socket the server closed as it was reused (Node's server closes idle ones
        // after 5 s): the request never reached the server, so a bodiless one is sent once more
        // on a new connection instead of handing the page a 502 it never earned.
        if (agent && upstream.reusedSocket && err.code === 'ECONNRESET' && !res.headersSent && bodiless) return send(false);
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end(`egress proxy: ${err.message}`);
        else res.destroy();
      });
      if (bodiless) upstream.end();
      else req.pipe(upstream);
    };
    send(this.agent);
  }

  private async tunnel(req: http.IncomingMessage, client: net.Socket, head: Buffer): Promise<void> {
    client.on('error', () => {});
    const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(req.url ?? '');
    if (!m) return void client.end('HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n');
    const host = m[1].replace(/^\[|\]$/g, '');
    const port = Number(m[2]);
    let verdict;
    try {
      verdict = await this.guard.checkTarget(host, port);
    } catch {
      return void client.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n');
    }
    if (!verdict.allowed) {
      this.deny(host, port, { target: `${host}:${port}`, rule: verdict.rule });
      return void client.end(`HTTP/1.1 403 Forbidden\r\n${DENIED_HEADER}: ${verdict.rule}\r\ncontent-length: 0\r\n\r\n`);
    }
    this.contacted.push(`${verdict.address}:${port}`);
    const upstream = net.connect(port, verdict.address, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    this.sockets.add(upstream);
    upstream.on('close', () => this.sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
  }
}

function withoutHopByHop(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const named = new Set(String(headers.connection ?? '').toLowerCase().split(',').map((s) => s.trim()));
  const out: http.OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP_BY_HOP.has(k) && !named.has(k)) out[k] = v;
  return out;
}
