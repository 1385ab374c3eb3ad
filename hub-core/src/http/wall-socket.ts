// One wall socket (GET /admin/wall from a console, GET /internal/wall from a peer hub): its
// `watch` messages go to the relay, its thumbs come back. A bad message gets an error reply and
// the socket stays usable; one over WALL_MAX_MESSAGE_BYTES is closed by the server (1009).
import type { WebSocket } from 'ws';
import { parseWallClientMessage, WALL_MAX_MESSAGE_BYTES, WALL_MAX_TILES, WALL_PEER_MAX_TILES, type WallErrorJson } from '../wire/wall.ts';
import type { WallRelay, WallWatcher } from '../hub/wall-relay.ts';
import { frameBytes } from '../hub/frame-refusals.ts';

/** A console's socket holding more than this unsent gets no new thumb until it drains. */
export const WALL_MAX_BUFFERED_BYTES = 1024 * 1024;

export function acceptWallSocket(ws: WebSocket, relay: Pick<WallRelay, 'watch' | 'leave'>, localOnly: boolean): void {
  const watcher: WallWatcher = {
    localOnly,
    send: (text) => ws.send(text),
    congested: () => ws.readyState !== ws.OPEN || ws.bufferedAmount > WALL_MAX_BUFFERED_BYTES,
  };
  const refuse = (code: string, message: string) => {
    const e: WallErrorJson = { type: 'error', code, message };
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(e));
  };
  ws.on('message', (data, isBinary) => {
    // The server's limit is a peer's (WALL_PEER_MAX_MESSAGE_BYTES); a console's is smaller.
    if (!localOnly && frameBytes(data) > WALL_MAX_MESSAGE_BYTES) return ws.close(1009, 'message too big');
    if (isBinary) return refuse('bad_request', 'wall messages are JSON text');
    const parsed = parseWallClientMessage(data.toString(), localOnly ? WALL_PEER_MAX_TILES : WALL_MAX_TILES);
    if (!parsed.ok) return refuse('bad_request', `${parsed.error}${parsed.details ? `: ${JSON.stringify(parsed.details).slice(0, 500)}` : ''}`);
    relay.watch(watcher, parsed.value.tiles);
  });
  ws.on('close', () => relay.leave(watcher));
  ws.on('error', () => ws.terminate());
}
