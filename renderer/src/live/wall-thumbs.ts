// The lane wall's thumbnails: one /admin/wall socket while the wall is shown. Tiles subscribe
// as they mount (the virtualiser mounts only the rows near the viewport), and the set of
// subscribed tiles, debounced, is the watch the hub hears. Frames go straight to the tile's
// listener (it sets its <img> itself, once per animation frame): a frame never re-renders the wall. The socket re-opens
// with backoff and repeats the watch. Owns its socket and timers; stop() ends them.
import { nextReconnectDelay, parseWallMessage, thumbKey, watchToSend, WALL_RECONNECT_MIN_MS, WATCH_DEBOUNCE_MS, type WallThumb, type WallTileRef } from '../model/wall-watch.ts';

export type ThumbListener = (thumb: WallThumb) => void;

export interface WallThumbsDeps {
  url: string;
  protocols: string[];
  WebSocketImpl?: typeof WebSocket;
  debounceMs?: number;
  /** A hub error reply (bad watch): shown nowhere yet but the console log. */
  onError?: (code: string, message: string) => void;
}

interface Watched {
  ref: WallTileRef;
  listeners: Set<ThumbListener>;
  /** The latest frame, for a listener that mounts after it arrived (cleared when nobody watches). */
  last: WallThumb | null;
}

export class WallThumbs {
  private readonly watched = new Map<string, Watched>();
  private ws: WebSocket | null = null;
  private lastSent: string | null = null;
  private debounceTimer: ReturnType<typeof setTimeout> | undefined;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  private backoff = WALL_RECONNECT_MIN_MS;
  private readonly dirty = new Set<Watched>();
  private flushPending = false;
  private stopped = true;
  private readonly WS: typeof WebSocket;
  /** Sockets opened so far (the tests read it). */
  opened = 0;

  constructor(private readonly deps: WallThumbsDeps) {
    this.WS = deps.WebSocketImpl ?? WebSocket;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.open();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.debounceTimer);
    clearTimeout(this.reconnectTimer);
    this.debounceTimer = this.reconnectTimer = undefined;
    this.dirty.clear();
    const ws = this.ws;
    this.ws = null;
    ws?.close();
  }

  /** A tile wants its lane's frames; returns the unsubscribe. */
  subscribe(workerId: string, lane: number, listener: ThumbListener): () => void {
    const key = thumbKey(workerId, lane);
    let w = this.watched.get(key);
    if (!w) {
      this.watched.set(key, (w = { ref: { worker_id: workerId, lane }, listeners: new Set(), last: null }));
      this.scheduleWatch();
    }
    w.listeners.add(listener);
    if (w.last) listener(w.last);
    const entry = w;
    return () => {
      entry.listeners.delete(listener);
      if (entry.listeners.size === 0 && this.watched.get(key) === entry) {
        this.watched.delete(key);
        this.scheduleWatch();
      }
    };
  }

  /** Tiles currently watched (after the debounce, what the hub is told). */
  get watchedCount(): number {
    return this.watched.size;
  }

  private scheduleWatch(): void {
    if (this.debounceTimer !== undefined) return;
    this.debounceTimer = setTimeout(() => {
      this.debounceTimer = undefined;
      this.sendWatch();
    }, this.deps.debounceMs ?? WATCH_DEBOUNCE_MS);
  }

  private sendWatch(): void {
    const ws = this.ws;
    if (!ws || ws.readyState !== this.WS.OPEN) return;
    const text = watchToSend(
      [...this.watched.values()].map((w) => w.ref),
      this.lastSent,
    );
    if (text === null) return;
    ws.send(text);
    this.lastSent = text;
  }

  /**
   * Frames are written to the tiles once per animation frame, all together: 200 tiles at a
   * frame a second would otherwise be 200 separate DOM writes and style passes a second. A
   * hidden tab runs no animation frame, and only each tile's latest frame is kept meanwhile.
   */
  private scheduleFlush(): void {
    if (this.flushPending) return;
    this.flushPending = true;
    const flush = () => {
      this.flushPending = false;
      const dirty = [...this.dirty];
      this.dirty.clear();
      for (const w of dirty) if (w.last && this.watched.get(thumbKey(w.ref.worker_id, w.ref.lane)) === w) for (const l of w.listeners) l(w.last);
    };
    if (typeof requestAnimationFrame === 'function') requestAnimationFrame(flush);
    else setTimeout(flush, 0);
  }

  private open(): void {
    if (this.stopped) return;
    let ws: WebSocket;
    try {
      ws = new this.WS(this.deps.url, this.deps.protocols);
    } catch {
      this.closed();
      return;
    }
    this.ws = ws;
    this.opened++;
    this.lastSent = null;
    ws.onopen = () => {
      if (this.ws !== ws) return;
      this.backoff = WALL_RECONNECT_MIN_MS;
      // A new socket starts with an empty watch at the hub: tell it the whole set at once.
      clearTimeout(this.debounceTimer);
      this.debounceTimer = undefined;
      this.sendWatch();
    };
    ws.onmessage = (ev: MessageEvent) => {
      if (this.ws !== ws) return;
      const msg = parseWallMessage(ev.data);
      if (!msg) return;
      if (msg.type === 'error') return this.deps.onError?.(msg.code, msg.message);
      const w = this.watched.get(thumbKey(msg.worker_id, msg.lane));
      if (!w) return;
      // Latest wins: a frame older than the one shown (a reconnect's cached copy) is dropped.
      if (w.last && w.last.at > msg.at) return;
      w.last = msg;
      this.dirty.add(w);
      this.scheduleFlush();
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.closed();
    };
    ws.onerror = () => ws.close();
  }

  private closed(): void {
    if (this.stopped) return;
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => this.open(), this.backoff);
    this.backoff = nextReconnectDelay(this.backoff);
  }
}
