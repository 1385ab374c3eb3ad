// The wall's thumbnail socket against a small fake hub on loopback (real WebSockets): the
// debounced watch follows the mounted tiles, frames reach only their tile's listener (latest
// wins), and a lost socket re-opens and repeats the watch.
import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { WallThumbs } from '../../../renderer/src/live/wall-thumbs.ts';
import type { WallThumb } from '../../../renderer/src/model/wall-watch.ts';
import { nextEvent, waitFor } from '../../harness/wait.ts';

interface FakeHub {
  url: string;
  events: EventEmitter;
  sockets: WebSocket[];
  protocols: string[][];
  close(): Promise<void>;
}

async function fakeHub(): Promise<FakeHub> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0, handleProtocols: (p) => (p.has('paprika.v1') ? 'paprika.v1' : false) });
  await new Promise<void>((r) => server.once('listening', () => r()));
  const events = new EventEmitter();
  const sockets: WebSocket[] = [];
  const protocols: string[][] = [];
  server.on('connection', (ws, req) => {
    sockets.push(ws);
    protocols.push(String(req.headers['sec-websocket-protocol'] ?? '').split(/,\s*/));
    events.emit('connection', ws);
    ws.on('message', (m) => events.emit('watch', JSON.parse(String(m)) as { type: string; tiles: Array<{ worker_id: string; lane: number }> }, ws));
  });
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/admin/wall`,
    events,
    sockets,
    protocols,
    close: () => new Promise<void>((r) => (server.clients.forEach((c) => c.terminate()), server.close(() => r()))),
  };
}

const thumb = (worker_id: string, lane: number, at: number, jpeg = 'AAAA') => JSON.stringify({ type: 'thumb', worker_id, lane, at, jpeg });

describe('lane wall thumbnail socket', () => {
  let hub: FakeHub;
  let thumbs: WallThumbs;

  beforeEach(async () => {
    hub = await fakeHub();
    thumbs = new WallThumbs({ url: hub.url, protocols: ['paprika.v1', 'bearer.YWRt'], WebSocketImpl: WebSocket as unknown as typeof globalThis.WebSocket, debounceMs: 50 });
  });
  afterEach(async () => {
    thumbs.stop();
    await hub.close();
  });

  it('watches the mounted tiles in one debounced message, follows unmounts, and hands each frame to its tile only', async () => {
    const connected = nextEvent<WebSocket>(hub.events, 'connection', 'the wall socket');
    thumbs.start();
    const ws = await connected;
    expect(hub.protocols[0]).toEqual(['paprika.v1', 'bearer.YWRt']);
    const a: WallThumb[] = [];
    const b: WallThumb[] = [];
    const firstWatch = nextEvent<{ tiles: unknown[] }>(hub.events, 'watch', 'the first watch');
    const offA = thumbs.subscribe('w1', 0, (t) => a.push(t));
    thumbs.subscribe('w1', 1, (t) => b.push(t));
    thumbs.subscribe('w2', 0, () => {});
    expect((await firstWatch).tiles).toEqual([
      { worker_id: 'w1', lane: 0 },
      { worker_id: 'w1', lane: 1 },
      { worker_id: 'w2', lane: 0 },
    ]);
    ws.send(thumb('w1', 0, 100));
    ws.send(thumb('w9', 0, 100)); // not watched: dropped
    ws.send(thumb('w1', 0, 50)); // older than the one shown: dropped
    ws.send(JSON.stringify({ type: 'thumb', worker_id: 'w1', lane: 1, at: 120, idle: true }));
    ws.send('{"type":"thumb","worker_id":"w1","lane":1,"at":130,"jpeg":"<img>"}'); // not base64: dropped
    await waitFor('the frames', async () => a.length === 1 && b.length === 1, 5000, 10);
    expect(a).toEqual([{ type: 'thumb', worker_id: 'w1', lane: 0, at: 100, jpeg: 'AAAA' }]);
    expect(b).toEqual([{ type: 'thumb', worker_id: 'w1', lane: 1, at: 120, idle: true }]);
    // A second tile view of the same lane mounting later sees the latest frame at once, and shares the watch.
    const late: WallThumb[] = [];
    const offLate = thumbs.subscribe('w1', 0, (t) => late.push(t));
    expect(late.map((t) => t.at)).toEqual([100]);
    const afterUnmount = nextEvent<{ tiles: unknown[] }>(hub.events, 'watch', 'the watch after an unmount');
    offA();
    offLate();
    expect((await afterUnmount).tiles).toEqual([
      { worker_id: 'w1', lane: 1 },
      { worker_id: 'w2', lane: 0 },
    ]);
    expect(thumbs.watchedCount).toBe(2);
  });

  it('re-opens a lost socket and repeats the watch; stop() ends it for good', async () => {
    const connected = nextEvent<WebSocket>(hub.events, 'connection', 'the wall socket');
    thumbs.start();
    const first = await connected;
    const watched = nextEvent(hub.events, 'watch', 'the watch');
    thumbs.subscribe('w3', 2, () => {});
    await watched;
    const again = nextEvent<{ tiles: unknown[] }>(hub.events, 'watch', 'the watch on the new socket', (_m, ws) => ws !== first);
    first.terminate();
    expect((await again).tiles).toEqual([{ worker_id: 'w3', lane: 2 }]);
    expect(thumbs.opened).toBe(2);
    thumbs.stop();
    await waitFor('the socket closed', async () => hub.sockets.every((s) => s.readyState === WebSocket.CLOSED), 5000, 10);
    expect(thumbs.opened).toBe(2);
  });

  it('sends nothing until a tile mounts, and an unchanged set is not sent twice', async () => {
    const connected = nextEvent<WebSocket>(hub.events, 'connection', 'the wall socket');
    thumbs.start();
    await connected;
    const seen: unknown[] = [];
    hub.events.on('watch', (m) => seen.push(m));
    const watched = nextEvent(hub.events, 'watch', 'the watch');
    const off = thumbs.subscribe('w1', 0, () => {});
    await watched;
    // Unmount and remount within the debounce (a scroll jitter): the same set, nothing new sent.
    off();
    thumbs.subscribe('w1', 0, () => {});
    const marker = nextEvent(hub.events, 'watch', 'the next different watch');
    thumbs.subscribe('w1', 1, () => {});
    await marker;
    expect(seen.map((m) => (m as { tiles: unknown[] }).tiles.length)).toEqual([1, 2]);
  });
});
