// The agent's live-view server: GET /lanes/:i/view is a page that shows lane i's screen;
// /lanes/:i/stream is the WebSocket that page reads (binary JPEG frames, text {"type":"idle"}).
// Both need a short-lived token the hub signs for admin callers (?vt=, view-access.ts), so a
// job running in another lane, or anyone else on the network, sees nothing.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { PaprikaError } from 'paprika/wire';
import { followLaneScreen } from './screencast.ts';
import { authorizeView, type ViewKeyring } from './view-access.ts';
import { viewPageHeaders, viewPageHtml } from './view-page.ts';
import type { ViewableLane } from './viewable-lane.ts';

export interface LiveViewOptions {
  host: string;
  port: number;
  /** The lanes, or a getter: the pool may be built after the server (its view URLs need our port). */
  lanes: readonly ViewableLane[] | (() => readonly ViewableLane[]);
  /** The current link's view key (set by the agent on welcome). */
  keys: ViewKeyring;
  /** The address viewers use, when it differs from `host` (e.g. bound to 0.0.0.0). */
  publicHost?: string;
  /** Injected for tests; epoch ms. */
  now?: () => number;
  /** How long an opened stream may run before the viewer needs a new token (default STREAM_MAX_MS). */
  streamMaxMs?: number;
}

export interface LiveView {
  /** `http://host:port`: pass it to chromePool as `viewBase`. */
  readonly baseUrl: string;
  readonly port: number;
  /** The view page of lane i (what the lane reports as its view URL); it opens with a token only. */
  url(laneIndex: number): string;
  stop(): Promise<void>;
}

/** Frames waiting in a viewer's socket beyond this are dropped: a slow viewer sees fewer frames, not old ones. */
const MAX_BUFFERED_BYTES = 2 * 1024 * 1024;
/** A token is checked when a stream opens; an open stream ends after this, so a leaked view does not last. */
export const STREAM_MAX_MS = 10 * 60_000;
/** The close code a viewer gets when its stream reached STREAM_MAX_MS (the page then asks for a new link). */
export const STREAM_EXPIRED_CLOSE = 4001;
const VIEW_PATH = /^\/lanes\/(\d+)\/view$/;
const STREAM_PATH = /^\/lanes\/(\d+)\/stream$/;

export async function startLiveView(o: LiveViewOptions): Promise<LiveView> {
  const now = o.now ?? Date.now;
  const laneAt = (i: number) => (typeof o.lanes === 'function' ? o.lanes() : o.lanes).find((l) => l.index === i);
  const laneFromPath = (url: string | undefined, pattern: RegExp) => {
    const m = pattern.exec(new URL(url ?? '/', 'http://x').pathname);
    return m ? laneAt(Number(m[1])) : undefined;
  };
  let ownOrigins: string[] = [];

  const server = http.createServer((req, res) => {
    const lane = req.method === 'GET' ? laneFromPath(req.url, VIEW_PATH) : undefined;
    try {
      if (!lane) throw new PaprikaError('not_found', { path: req.url?.split('?')[0] ?? '/' });
      authorizeView(req, lane.index, o.keys, now(), ownOrigins);
    } catch (err) {
      const e = err instanceof PaprikaError ? err : new PaprikaError('internal');
      res.writeHead(e.status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(e.toBody()));
      return;
    }
    const nonce = randomBytes(16).toString('base64');
    res.writeHead(200, viewPageHeaders(nonce)).end(viewPageHtml(lane.index, nonce));
  });

  const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 });
  const streamMaxMs = o.streamMaxMs ?? STREAM_MAX_MS;
  server.on('upgrade', (req, socket, head) => {
    const lane = laneFromPath(req.url, STREAM_PATH);
    try {
      if (!lane) throw new PaprikaError('not_found', { path: req.url?.split('?')[0] ?? '/' });
      authorizeView(req, lane.index, o.keys, now(), ownOrigins);
    } catch (err) {
      refuseUpgrade(socket, err instanceof PaprikaError ? err : new PaprikaError('internal'));
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => streamTo(ws, lane, streamMaxMs));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = o.publicHost ?? o.host;
  const baseUrl = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  // The view page is served from here, and its script opens the stream with this Origin.
  ownOrigins = [new URL(baseUrl).origin];

  return {
    baseUrl,
    port,
    url: (i) => `${baseUrl}/lanes/${i}/view`,
    async stop() {
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Answer before switching protocols: the client sees the status and the JSON body. */
function refuseUpgrade(socket: Duplex, e: PaprikaError): void {
  const body = JSON.stringify(e.toBody());
  socket.end(`HTTP/1.1 ${e.status} ${http.STATUS_CODES[e.status] ?? ''}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

function streamTo(ws: WebSocket, lane: ViewableLane, maxMs: number): void {
  const stopFollowing = followLaneScreen(lane, {
    frame: (jpeg) => ws.send(jpeg, { binary: true }),
    idle: () => ws.send(JSON.stringify({ type: 'idle', lane: lane.index })),
    congested: () => ws.readyState !== ws.OPEN || ws.bufferedAmount > MAX_BUFFERED_BYTES,
  });
  const limit = setTimeout(() => ws.close(STREAM_EXPIRED_CLOSE, 'view time limit reached'), maxMs);
  ws.on('close', () => {
    clearTimeout(limit);
    stopFollowing();
  });
  ws.on('error', () => ws.terminate());
}
