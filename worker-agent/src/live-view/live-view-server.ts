// The agent's live-view server: GET /lanes/:i/view is a page that shows lane i's screen;
// /lanes/:i/stream is the WebSocket that page reads (binary JPEG frames, text {"type":"idle"}).
// No login of its own: bind it to the worker's LAN address only, never to a public one.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { followLaneScreen } from './screencast.ts';
import { viewPageHtml } from './view-page.ts';
import type { ViewableLane } from './viewable-lane.ts';

export interface LiveViewOptions {
  host: string;
  port: number;
  /** The lanes, or a getter: the pool may be built after the server (its view URLs need our port). */
  lanes: readonly ViewableLane[] | (() => readonly ViewableLane[]);
  /** The address viewers use, when it differs from `host` (e.g. bound to 0.0.0.0). */
  publicHost?: string;
}

export interface LiveView {
  /** `http://host:port`: pass it to chromePool as `viewBase`. */
  readonly baseUrl: string;
  readonly port: number;
  /** The view page of lane i (what the lane reports as its view URL). */
  url(laneIndex: number): string;
  stop(): Promise<void>;
}

/** Frames waiting in a viewer's socket beyond this are dropped: a slow viewer sees fewer frames, not old ones. */
const MAX_BUFFERED_BYTES = 2 * 1024 * 1024;
const VIEW_PATH = /^\/lanes\/(\d+)\/view$/;
const STREAM_PATH = /^\/lanes\/(\d+)\/stream$/;

export async function startLiveView(o: LiveViewOptions): Promise<LiveView> {
  const laneAt = (i: number) => (typeof o.lanes === 'function' ? o.lanes() : o.lanes).find((l) => l.index === i);
  const laneFromPath = (url: string | undefined, pattern: RegExp) => {
    const m = pattern.exec(new URL(url ?? '/', 'http://x').pathname);
    return m ? laneAt(Number(m[1])) : undefined;
  };

  const server = http.createServer((req, res) => {
    const lane = req.method === 'GET' ? laneFromPath(req.url, VIEW_PATH) : undefined;
    if (!lane) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not_found' }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(viewPageHtml(lane.index));
  });

  const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 });
  server.on('upgrade', (req, socket, head) => {
    const lane = laneFromPath(req.url, STREAM_PATH);
    if (!lane) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => streamTo(ws, lane));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = o.publicHost ?? o.host;
  const baseUrl = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

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

function streamTo(ws: WebSocket, lane: ViewableLane): void {
  const stopFollowing = followLaneScreen(lane, {
    frame: (jpeg) => ws.send(jpeg, { binary: true }),
    idle: () => ws.send(JSON.stringify({ type: 'idle', lane: lane.index })),
    congested: () => ws.readyState !== ws.OPEN || ws.bufferedAmount > MAX_BUFFERED_BYTES,
  });
  ws.on('close', stopFollowing);
  ws.on('error', () => ws.terminate());
}
