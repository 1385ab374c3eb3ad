// The hub's wall relay with fakes around it: which `thumbs` a link is sent as watches change,
// backpressure (a congested watcher misses a frame, never gets it later), the latest-frame
// cache (sent at once to a new watcher, dropped when nobody watches), and the pace a worker
// cannot force. Sockets and the registry are fakes; the relay and WorkerLink are the real ones.
import { EventEmitter } from 'node:events';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { WallRelay, type WallWatcher } from '../../../hub-core/src/hub/wall-relay.ts';
import { WorkerLink, type LinkSocket } from '../../../hub-core/src/hub/worker-link.ts';
import { ManualClock } from '../../../hub-core/src/ports/clock.ts';
import { mathRandom } from '../../../hub-core/src/wire/random.ts';
import { parseHubMessage } from '../../../hub-core/src/wire/protocol.ts';

function setup() {
  const clock = new ManualClock(1_000_000);
  const sent: any[] = [];
  const socket: LinkSocket = { send: async (t) => void sent.push(parseHubMessage(t)), close: () => {}, terminate: () => {}, open: true };
  const link = new WorkerLink('w1', socket, { max_concurrent: 3, lane_novnc_urls: [], novnc_url: null, version: 't', platform: 't' }, { lanIp: '', hostname: '', hubId: 'h1' }, 'active', clock.now());
  const links = new Map([['w1', link]]);
  const relay = new WallRelay({
    config: { hubId: 'h1', forwardTimeoutS: 5, hubTtlS: 15, peerToken: undefined },
    localLinks: { get: (id: string) => links.get(id) },
    registry: { getOwner: async () => undefined, listHubs: async () => [] },
    events: new EventEmitter() as never,
    clock,
    random: mathRandom,
    log: pino({ level: 'silent' }),
  });
  const thumbsSent = () => sent.filter((p) => p.ok && p.value.type === 'thumbs').map((p) => p.value.lanes);
  const watcher = (congested = () => false) => {
    const got: any[] = [];
    const w: WallWatcher = { localOnly: false, congested, send: (t) => got.push(JSON.parse(t)) };
    return { w, got };
  };
  const thumb = (lane: number, at: number) => relay.onLinkThumb(link, { type: 'thumb', v: 1, lane, at, jpeg: '/9j/' });
  return { clock, relay, link, thumbsSent, watcher, thumb };
}

describe('WallRelay', () => {
  it("asks the link for the union of watched lanes within its lane count, and [] when nobody watches", () => {
    const { relay, thumbsSent, watcher } = setup();
    const a = watcher();
    const b = watcher();
    relay.watch(a.w, [{ worker_id: 'w1', lane: 0 }, { worker_id: 'w1', lane: 9 }]);
    relay.watch(b.w, [{ worker_id: 'w1', lane: 2 }, { worker_id: 'w1', lane: 0 }]);
    relay.watch(b.w, [{ worker_id: 'w1', lane: 0 }, { worker_id: 'w1', lane: 2 }]); // same set: nothing sent
    relay.leave(a.w);
    relay.leave(b.w);
    expect(thumbsSent()).toEqual([[0], [0, 2], []]);
  });

  it('relays thumbs of asked lanes only, at most one per half interval, and caches the latest for a new watcher', () => {
    const { clock, relay, watcher, thumb } = setup();
    const a = watcher();
    relay.watch(a.w, [{ worker_id: 'w1', lane: 1 }]);
    thumb(1, 1);
    thumb(0, 2); // not asked
    clock.advance(100);
    thumb(1, 3); // too soon: held until half an interval after the last one
    expect(a.got.map((t) => t.at)).toEqual([1]);
    clock.advance(400);
    expect(a.got.map((t) => t.at)).toEqual([1, 3]);
    clock.advance(500);
    thumb(1, 4);
    expect(a.got.map((t) => t.at)).toEqual([1, 3, 4]);
    const late = watcher();
    relay.watch(late.w, [{ worker_id: 'w1', lane: 1 }]);
    expect(late.got).toEqual([{ type: 'thumb', worker_id: 'w1', lane: 1, at: 4, jpeg: '/9j/' }]);
    relay.leave(a.w);
    relay.leave(late.w);
    const again = watcher();
    relay.watch(again.w, [{ worker_id: 'w1', lane: 1 }]);
    expect(again.got).toEqual([]); // the cache went with the last watcher
  });

  it('an early frame is held, not dropped: of frames arriving within half an interval only the newest goes out; an idle goes at once and replaces a held frame', () => {
    const { clock, relay, link, watcher, thumb } = setup();
    const a = watcher();
    relay.watch(a.w, [{ worker_id: 'w1', lane: 0 }]);
    thumb(0, 1);
    clock.advance(50);
    thumb(0, 2);
    clock.advance(50);
    thumb(0, 3); // replaces 2
    clock.advance(399);
    expect(a.got.map((t) => t.at)).toEqual([1]);
    clock.advance(1);
    expect(a.got.map((t) => t.at)).toEqual([1, 3]);
    clock.advance(100);
    thumb(0, 4); // held
    relay.onLinkThumb(link, { type: 'thumb', v: 1, lane: 0, at: 5, idle: true }); // the job ended: its page is gone
    expect(a.got.at(-1)).toEqual({ type: 'thumb', worker_id: 'w1', lane: 0, at: 5, idle: true });
    clock.advance(5000);
    expect(a.got.map((t) => t.at)).toEqual([1, 3, 5]); // the held frame 4 never follows the idle
  });

  it('a frame cached from a peer hub is never served to another peer (one hop)', () => {
    const { relay, watcher } = setup();
    const consoleA = watcher();
    relay.watch(consoleA.w, [{ worker_id: 'far', lane: 0 }]);
    (relay as unknown as { publish(t: unknown, fromPeer: boolean): void }).publish({ type: 'thumb', worker_id: 'far', lane: 0, at: 7, jpeg: '/9j/' }, true);
    expect(consoleA.got.map((t) => t.at)).toEqual([7]);
    const peer = { got: [] as any[] };
    relay.watch({ localOnly: true, congested: () => false, send: (t) => peer.got.push(JSON.parse(t)) }, [{ worker_id: 'far', lane: 0 }]);
    expect(peer.got).toEqual([]);
    const consoleB = watcher();
    relay.watch(consoleB.w, [{ worker_id: 'far', lane: 0 }]);
    expect(consoleB.got.map((t) => t.at)).toEqual([7]);
    relay.stop();
  });

  it('a congested watcher misses frames (and is not sent them later); the others get them', () => {
    const { clock, relay, watcher, thumb } = setup();
    let behind = true;
    const slow = watcher(() => behind);
    const fast = watcher();
    relay.watch(slow.w, [{ worker_id: 'w1', lane: 0 }]);
    relay.watch(fast.w, [{ worker_id: 'w1', lane: 0 }]);
    thumb(0, 1);
    clock.advance(1000);
    behind = false;
    thumb(0, 2);
    expect(fast.got.map((t) => t.at)).toEqual([1, 2]);
    expect(slow.got.map((t) => t.at)).toEqual([2]);
  });

  it('drops a thumb from a link that is no longer the worker’s current one', () => {
    const { relay, link, watcher } = setup();
    const a = watcher();
    relay.watch(a.w, [{ worker_id: 'w1', lane: 0 }]);
    link.supersede();
    relay.onLinkThumb(link, { type: 'thumb', v: 1, lane: 0, at: 1, idle: true });
    expect(a.got).toEqual([]);
  });
});
