// The lane wall's thumbnail socket (/admin/wall), as plain data: which tiles to watch, whether
// that changed, what the hub's frames say, and how long to wait before opening it again.
// The hub relays the frames (workers may sit behind NAT), so the console names tiles by worker id
// and lane only, never by a worker URL.
import type { WallError, WallThumb, WallTileRef } from '../api/types.ts';

export type { WallError, WallThumb, WallTileRef };

/** The hub takes at most this many tiles in one watch (its WALL_MAX_TILES). */
export const MAX_WATCH_TILES = 1000;
/** Scrolling mounts and unmounts rows quickly: the watch is sent once the wall holds still this long. */
export const WATCH_DEBOUNCE_MS = 200;
export const WALL_RECONNECT_MIN_MS = 1000;
export const WALL_RECONNECT_MAX_MS = 15_000;

/** Same key as a wall tile's (LaneTile.key). */
export const thumbKey = (workerId: string, lane: number): string => `${workerId}/${lane}`;

/** The watch message for these tiles, in a stable order (so equal sets serialise equally), capped. */
export function watchMessage(tiles: Iterable<WallTileRef>): { type: 'watch'; tiles: WallTileRef[] } {
  const sorted = [...tiles].sort((a, b) => (a.worker_id < b.worker_id ? -1 : a.worker_id > b.worker_id ? 1 : a.lane - b.lane));
  return { type: 'watch', tiles: sorted.slice(0, MAX_WATCH_TILES).map((t) => ({ worker_id: t.worker_id, lane: t.lane })) };
}

/** The text to send when the watched set differs from what the socket last heard, else null. */
export function watchToSend(tiles: Iterable<WallTileRef>, lastSent: string | null): string | null {
  const text = JSON.stringify(watchMessage(tiles));
  return text === lastSent ? null : text;
}

const isLane = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0;

/** One /admin/wall frame; anything unexpected is dropped rather than trusted. */
export function parseWallMessage(data: unknown): WallThumb | WallError | null {
  if (typeof data !== 'string') return null;
  let msg: Record<string, unknown>;
  try {
    msg = JSON.parse(data) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (!msg || typeof msg !== 'object') return null;
  if (msg.type === 'error') return { type: 'error', code: String(msg.code ?? ''), message: String(msg.message ?? '') };
  if (msg.type !== 'thumb' || typeof msg.worker_id !== 'string' || !isLane(msg.lane) || typeof msg.at !== 'number') return null;
  const thumb: WallThumb = { type: 'thumb', worker_id: msg.worker_id, lane: msg.lane, at: msg.at };
  // base64 only: the text becomes a data: URL in an <img>, nothing else may ride in it.
  if (typeof msg.jpeg === 'string' && /^[A-Za-z0-9+/]+={0,2}$/.test(msg.jpeg)) thumb.jpeg = msg.jpeg;
  else if (msg.idle === true) thumb.idle = true;
  else return null;
  return thumb;
}

/** Backoff after a closed socket: doubles from the minimum up to the maximum. */
export function nextReconnectDelay(current: number): number {
  return Math.min(WALL_RECONNECT_MAX_MS, Math.max(WALL_RECONNECT_MIN_MS, current * 2));
}

export const thumbSrc = (jpeg: string): string => `data:image/jpeg;base64,${jpeg}`;
