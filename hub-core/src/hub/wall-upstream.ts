// One WebSocket to a peer hub's GET /internal/wall: the tiles of the workers whose links that
// hub holds, watched on behalf of this hub's consoles (workers behind NAT reach only their own
// hub). The peer serves its own links only and never forwards again. The socket re-opens with
// backoff while tiles remain; setTiles([]) or close() ends it.
import type { Logger } from 'pino';
import { WebSocket } from 'ws';
import { backoffMs } from '../wire/backoff.ts';
import type { Random } from '../wire/random.ts';
import { parseWallServerMessage, WALL_PEER_MAX_TILES, type WallThumbJson, type WallTile } from '../wire/wall.ts';
import type { Clock } from '../ports/clock.ts';
import { FORWARDED_HEADER } from './forwarder.ts';

/** A peer's message is one thumb: its JPEG limit and some room for the rest. */
const UPSTREAM_MAX_PAYLOAD = 1024 * 1024;

export interface WallUpstreamDeps {
  config: { hubId: string; peerToken?: string; forwardTimeoutS: number };
  clock: Clock;
  random: Random;
  log: Logger;
}

export class WallUpstream {
  private ws: WebSocket | undefined;
  private tiles: WallTile[] = [];
  private sentKey = '';
  private attempt = 0;
  private retry: (() => void) | undefined;
  private closed = false;

  constructor(
    readonly hubUrl: string,
    private readonly d: WallUpstreamDeps,
    private readonly onThumb: (t: WallThumbJson) => void,
  ) {}

  /** Replace the tiles watched through this peer (sent at once when the socket is open). */
  setTiles(tiles: WallTile[]): void {
    if (tiles.length > WALL_PEER_MAX_TILES) this.d.log.warn({ hub_url: this.hubUrl, tiles: tiles.length, max: WALL_PEER_MAX_TILES }, 'more remote wall tiles watched than a peer takes: the rest stay blank');
    this.tiles = tiles.slice(0, WALL_PEER_MAX_TILES);
    if (this.closed) return;
    if (!this.ws && !this.retry) this.open();
    else this.sendWatch();
  }

  close(): void {
    this.closed = true;
    this.retry?.();
    this.retry = undefined;
    const ws = this.ws;
    this.ws = undefined;
    if (ws && ws.readyState !== WebSocket.CLOSED) ws.terminate();
  }

  private open(): void {
    const url = new URL('/internal/wall', this.hubUrl);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    const headers: Record<string, string> = { [FORWARDED_HEADER]: this.d.config.hubId };
    if (this.d.config.peerToken) headers.authorization = `Bearer ${this.d.config.peerToken}`;
    const ws = new WebSocket(url, { headers, maxPayload: UPSTREAM_MAX_PAYLOAD, perMessageDeflate: false, handshakeTimeout: this.d.config.forwardTimeoutS * 1000 });
    this.ws = ws;
    this.sentKey = '';
    // The backoff starts over only once the peer sent something: a peer that takes the socket and
    // closes it at once (refusing the watch) is retried at the backoff's pace, not every 250 ms.
    ws.on('open', () => this.sendWatch());
    ws.on('message', (data, isBinary) => {
      this.attempt = 0;
      if (isBinary) return;
      const parsed = parseWallServerMessage(data.toString());
      if (!parsed.ok) return this.d.log.debug({ hub_url: this.hubUrl, error: parsed.error }, 'bad wall message from peer');
      if (parsed.value.type === 'thumb') this.onThumb(parsed.value);
      else this.d.log.warn({ hub_url: this.hubUrl, code: parsed.value.code, message: parsed.value.message }, 'peer refused a wall watch');
    });
    ws.on('error', (err) => this.d.log.debug({ hub_url: this.hubUrl, err: String(err) }, 'wall upstream error'));
    ws.on('close', () => {
      if (this.ws !== ws) return;
      this.ws = undefined;
      if (this.closed || this.tiles.length === 0) return;
      const delay = backoffMs(this.attempt++, 250, 5000, this.d.random);
      this.retry = this.d.clock.setTimer(delay, () => {
        this.retry = undefined;
        if (!this.closed && this.tiles.length > 0) this.open();
      });
    });
  }

  private sendWatch(): void {
    const ws = this.ws;
    if (ws?.readyState !== WebSocket.OPEN) return;
    const key = JSON.stringify(this.tiles);
    if (key === this.sentKey) return;
    this.sentKey = key;
    ws.send(JSON.stringify({ type: 'watch', tiles: this.tiles }));
  }
}
