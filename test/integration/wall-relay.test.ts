// The lane wall's relay on one hub (issue 20 item 1): a console watching tiles gets each lane's
// thumbnail about once a second, relayed by the hub from simulated lanes; the worker is told
// exactly the watched lanes and `[]` when nobody watches; only an admin gets in; and whatever a
// worker sends that it was not asked for, or cannot send, is dropped with the hub and link up.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encode } from '../../hub-core/src/wire/protocol.ts';
import { startSimAgent, type SimAgent } from '../harness/agents.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { rawLink } from '../harness/raw-link.ts';
import { waitFor } from '../harness/wait.ts';
import { openWall, upgradeStatus, type WallClient } from '../harness/wall-client.ts';

const ADMIN = { authorization: 'Bearer admin-secret' };
const TOKENS = { PAPRIKA_ADMIN_TOKEN: 'admin-secret', PAPRIKA_API_TOKEN: 'api-secret', PAPRIKA_WORKER_TOKEN: 'worker-secret', PAPRIKA_PEER_TOKEN: 'peer-secret', PAPRIKA_HEARTBEAT_S: '0.5' };
const isJpeg = (b64: string) => Buffer.from(b64, 'base64').subarray(0, 2).toString('hex') === 'ffd8';

describe('lane wall relay (one hub, simulated lanes)', () => {
  let h: TestHub;
  let agent: SimAgent;
  const walls: WallClient[] = [];
  const wall = async () => {
    const w = await openWall(h.url, ADMIN);
    walls.push(w);
    return w;
  };

  beforeAll(async () => {
    h = await startTestHub(TOKENS);
    agent = await startSimAgent(h.url, 3, { token: 'worker-secret' });
  }, 120_000); // an embedded hub's first start (PGlite) is slow on a loaded machine
  afterAll(async () => {
    for (const w of walls) w.close();
    await agent?.stop();
    await h?.stop();
  });

  it('lets in an admin only (header or subprotocol bearer); no token or the API token is refused', async () => {
    const url = `${h.url.replace('http', 'ws')}/admin/wall`;
    expect(await upgradeStatus(url)).toBe(401);
    expect(await upgradeStatus(url, { authorization: 'Bearer api-secret' })).toBe(401);
    expect(await upgradeStatus(url, {}, ['paprika.v1', `bearer.${Buffer.from('api-secret').toString('base64url')}`])).toBe(401);
    expect(await upgradeStatus(url, ADMIN)).toBe(101);
    expect(await upgradeStatus(url, {}, ['paprika.v1', `bearer.${Buffer.from('admin-secret').toString('base64url')}`])).toBe(101);
    // The peer route wants the peer token: an admin's does not open it.
    const peerUrl = `${h.url.replace('http', 'ws')}/internal/wall`;
    expect(await upgradeStatus(peerUrl, ADMIN)).toBe(401);
    expect(await upgradeStatus(peerUrl, { authorization: 'Bearer peer-secret' })).toBe(101);
  });

  it('watched lanes send JPEG thumbs about once a second; unwatched lanes send none; stop tells the worker []', async () => {
    const w = await wall();
    w.watch([{ worker_id: agent.workerId, lane: 0 }, { worker_id: agent.workerId, lane: 2 }]);
    await waitFor('worker asked for lanes 0 and 2', async () => agent.agent.thumbs.lanes.join() === '0,2');
    const four = await waitFor('four thumbs of lane 0', async () => (w.thumbs(agent.workerId, 0).length >= 4 ? w.thumbs(agent.workerId, 0) : undefined), 20_000);
    expect(four.every((t) => isJpeg(t.jpeg))).toBe(true);
    // Synthetic frames change every time: consecutive thumbs differ.
    expect(new Set(four.map((t) => t.jpeg)).size).toBeGreaterThan(1);
    const gaps = four.slice(1).map((t, i) => t.at - four[i]!.at);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(900); // never faster than the interval
    expect(gaps.reduce((a, b) => a + b, 0) / gaps.length).toBeLessThan(2500); // and about once a second
    expect(w.thumbs(agent.workerId, 2).length).toBeGreaterThan(0);
    expect(w.thumbs(agent.workerId, 1)).toEqual([]);

    // A second console watching lane 0 gets its latest frame at once (from the cache), not a second later.
    const late = await wall();
    const before = Date.now();
    late.watch([{ worker_id: agent.workerId, lane: 0 }]);
    const first = await waitFor('cached thumb', async () => late.thumbs(agent.workerId, 0)[0], 5000, 5);
    expect(Date.now() - before).toBeLessThan(500);
    expect(first.worker_id).toBe(agent.workerId);

    late.watch([]);
    w.watch([{ worker_id: agent.workerId, lane: 2 }]);
    await waitFor('worker asked for lane 2 only', async () => agent.agent.thumbs.lanes.join() === '2');
    w.watch([]);
    await waitFor('worker told []', async () => agent.agent.thumbs.lanes.length === 0);
    expect(h.hub.wall.tileCount).toBe(0);
  });

  it('a closed console counts as watching nothing', async () => {
    const w = await wall();
    w.watch([{ worker_id: agent.workerId, lane: 1 }]);
    await waitFor('worker asked for lane 1', async () => agent.agent.thumbs.lanes.join() === '1');
    w.close();
    await waitFor('worker told []', async () => agent.agent.thumbs.lanes.length === 0);
  });

  it('a bad watch gets an error and the socket stays usable; a message over 1 MB closes it (1009)', async () => {
    const w = await wall();
    w.ws.send('not json');
    w.ws.send(JSON.stringify({ type: 'watch', tiles: [{ worker_id: 'x', lane: -1 }] }));
    w.ws.send(JSON.stringify({ type: 'watch', tiles: Array.from({ length: 1001 }, (_, i) => ({ worker_id: 'x', lane: i % 10 })) }));
    w.ws.send(JSON.stringify({ type: 'subscribe' }));
    await waitFor('four errors', async () => w.messages.filter((m) => m.type === 'error').length === 4);
    expect(w.messages.every((m) => m.type === 'error' && m.code === 'bad_request' && typeof m.message === 'string')).toBe(true);
    w.watch([{ worker_id: agent.workerId, lane: 1 }]);
    await waitFor('a thumb after the errors', async () => w.thumbs(agent.workerId, 1).length > 0);
    w.ws.send('x'.repeat(1024 * 1024 + 1));
    expect(await w.closed).toBe(1009);
    await waitFor('worker told []', async () => agent.agent.thumbs.lanes.length === 0);
  });

  it("drops a worker's thumb for a lane not asked for, beyond its lanes, oversized or malformed; hub and link stay up", async () => {
    const { ws: link, frames } = await rawLink(h.url, 'w-wall-raw', { capabilities: { max_concurrent: 2, lane_novnc_urls: ['a', 'b'], novnc_url: null, version: 't', platform: 't' } }, { token: 'worker-secret' });
    const w = await wall();
    w.watch([{ worker_id: 'w-wall-raw', lane: 0 }, { worker_id: 'w-wall-raw', lane: 7 }]);
    // Lane 7 is beyond its 2 lanes: only lane 0 is asked for.
    const asked = await waitFor('thumbs frame', async () => frames.find((f) => f.type === 'thumbs'));
    expect(asked).toMatchObject({ lanes: [0], interval_ms: 1000 });
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xd9]).toString('base64');
    const errorsBefore = frames.filter((f) => f.type === 'error').length;
    link.send(encode({ type: 'thumb', lane: 1, at: Date.now(), jpeg })); // not asked for
    link.send(encode({ type: 'thumb', lane: 7, at: Date.now(), jpeg })); // beyond its lanes
    link.send(encode({ type: 'thumb', lane: 0, at: Date.now(), jpeg: 'A'.repeat(262_148) })); // oversized
    link.send(JSON.stringify({ type: 'thumb', v: 1, lane: 0, at: 'now', jpeg })); // malformed
    link.send(JSON.stringify({ type: 'thumb', v: 1, lane: 0, at: Date.now(), jpeg: '<not base64>' })); // malformed
    await waitFor('three error replies', async () => frames.filter((f) => f.type === 'error').length === errorsBefore + 3);
    link.send(encode({ type: 'thumb', lane: 0, at: 12345, jpeg }));
    const got = await waitFor('the good thumb', async () => w.thumbs('w-wall-raw')[0]);
    expect(got).toEqual({ type: 'thumb', worker_id: 'w-wall-raw', lane: 0, at: 12345, jpeg });
    link.send(encode({ type: 'thumb', lane: 0, at: 12346, idle: true }));
    expect(w.thumbs('w-wall-raw')).toHaveLength(1); // the hub relays at most one per half interval
    expect(link.readyState).toBe(link.OPEN);
    expect((await fetch(`${h.url}/healthz`)).status).toBe(200);
    w.watch([]);
    await waitFor('raw link told []', async () => frames.filter((f) => f.type === 'thumbs').at(-1)?.lanes.length === 0);
    link.close();
  });
});
