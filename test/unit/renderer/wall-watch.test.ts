import { describe, expect, it } from 'vitest';
import { MAX_WATCH_TILES, nextReconnectDelay, parseWallMessage, watchMessage, watchToSend, WALL_RECONNECT_MAX_MS, WALL_RECONNECT_MIN_MS } from '../../../renderer/src/model/wall-watch.ts';

describe('lane wall watch set', () => {
  it('serialises equal sets equally whatever the mount order, so an unchanged set is not sent again', () => {
    const a = [
      { worker_id: 'w2', lane: 1 },
      { worker_id: 'w1', lane: 3 },
      { worker_id: 'w1', lane: 0 },
    ];
    const first = watchToSend(a, null);
    expect(first).not.toBeNull();
    expect(JSON.parse(first!)).toEqual({ type: 'watch', tiles: [{ worker_id: 'w1', lane: 0 }, { worker_id: 'w1', lane: 3 }, { worker_id: 'w2', lane: 1 }] });
    expect(watchToSend([...a].reverse(), first)).toBeNull();
    // One tile scrolled out: the new set is sent.
    expect(JSON.parse(watchToSend(a.slice(1), first)!).tiles).toEqual([{ worker_id: 'w1', lane: 0 }, { worker_id: 'w1', lane: 3 }]);
    // Every tile gone: an empty watch (the hub stops the screencasts).
    expect(JSON.parse(watchToSend([], first)!)).toEqual({ type: 'watch', tiles: [] });
  });

  it('caps the watch at the hub limit and keeps only the tile fields', () => {
    const many = Array.from({ length: MAX_WATCH_TILES + 50 }, (_, i) => ({ worker_id: `w${String(i).padStart(5, '0')}`, lane: 0, extra: 1 }));
    const msg = watchMessage(many);
    expect(msg.tiles).toHaveLength(MAX_WATCH_TILES);
    expect(Object.keys(msg.tiles[0])).toEqual(['worker_id', 'lane']);
  });
});

describe('lane wall frames', () => {
  it('takes a JPEG frame or an idle note, and drops anything else', () => {
    expect(parseWallMessage(JSON.stringify({ type: 'thumb', worker_id: 'w1', lane: 2, at: 5, jpeg: '/9j/4AAQ+w==' }))).toEqual({ type: 'thumb', worker_id: 'w1', lane: 2, at: 5, jpeg: '/9j/4AAQ+w==' });
    expect(parseWallMessage(JSON.stringify({ type: 'thumb', worker_id: 'w1', lane: 0, at: 5, idle: true }))).toEqual({ type: 'thumb', worker_id: 'w1', lane: 0, at: 5, idle: true });
    expect(parseWallMessage(JSON.stringify({ type: 'error', code: 'bad_message', message: 'tiles: too many' }))).toEqual({ type: 'error', code: 'bad_message', message: 'tiles: too many' });
    for (const bad of [
      'not json',
      '42',
      'null',
      JSON.stringify({ type: 'thumb', worker_id: 'w1', lane: -1, at: 5, idle: true }),
      JSON.stringify({ type: 'thumb', worker_id: 'w1', lane: 0.5, at: 5, idle: true }),
      JSON.stringify({ type: 'thumb', worker_id: 'w1', lane: 0, at: 5 }),
      // Not base64: it would end up inside a data: URL.
      JSON.stringify({ type: 'thumb', worker_id: 'w1', lane: 0, at: 5, jpeg: '"><script>' }),
      JSON.stringify({ type: 'thumb', lane: 0, at: 5, idle: true }),
      JSON.stringify({ type: 'snapshot' }),
    ])
      expect(parseWallMessage(bad), bad).toBeNull();
    expect(parseWallMessage(new ArrayBuffer(4))).toBeNull();
  });

  it('backs off from one second, doubling, up to the maximum', () => {
    const delays = [WALL_RECONNECT_MIN_MS];
    for (let i = 0; i < 6; i++) delays.push(nextReconnectDelay(delays[delays.length - 1]));
    expect(delays).toEqual([1000, 2000, 4000, 8000, 15_000, 15_000, 15_000]);
    expect(nextReconnectDelay(0)).toBe(WALL_RECONNECT_MIN_MS);
    expect(nextReconnectDelay(WALL_RECONNECT_MAX_MS)).toBe(WALL_RECONNECT_MAX_MS);
  });
});
