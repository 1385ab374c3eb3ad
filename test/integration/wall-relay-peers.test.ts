// The wall through a hub that does not hold the worker's link (issue 20: the operator's
// machine reaches only one hub): hubs A and B share Postgres and Redis, the worker links to B,
// a console on A watches its lanes and gets B's thumbs over one GET /internal/wall socket; when
// the console stops watching, the worker is told `[]`; when the worker moves to A, the watch follows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encode } from '../../hub-core/src/wire/protocol.ts';
import { startSimAgent, type SimAgent } from '../harness/agents.ts';
import { rawLink } from '../harness/raw-link.ts';
import { realBackends, startTestHub, type TestHub } from '../harness/hub.ts';
import { requireServices } from '../harness/services.ts';
import { waitFor } from '../harness/wait.ts';
import { openWall, type WallClient } from '../harness/wall-client.ts';

const ENV = { PAPRIKA_HEARTBEAT_S: '0.3', PAPRIKA_HUB_HEARTBEAT_S: '0.3', PAPRIKA_ADMIN_TOKEN: 'admin-secret', PAPRIKA_API_TOKEN: 'api-secret', PAPRIKA_WORKER_TOKEN: 'worker-secret', PAPRIKA_PEER_TOKEN: 'peer-secret' };
const ADMIN = { authorization: 'Bearer admin-secret' };

describe.skipIf(!requireServices(['postgres', 'redis']))('lane wall relayed between hubs', () => {
  let backends: Awaited<ReturnType<typeof realBackends>>;
  let a: TestHub;
  let b: TestHub;
  let agent: SimAgent;
  let wall: WallClient;

  beforeAll(async () => {
    backends = await realBackends();
    a = await startTestHub({ ...backends.env, ...ENV });
    b = await startTestHub({ ...backends.env, ...ENV });
    agent = await startSimAgent(b.url, 2, { token: 'worker-secret', heartbeatS: 0.3 });
    await waitFor('A sees B alive', async () => (await a.hub.registry.listHubs(Date.now(), 10)).some((h) => h.hub_id === b.hub.config.hubId && h.alive), 20_000);
  }, 120_000);
  afterAll(async () => {
    wall?.close();
    await agent?.stop();
    await a?.stop();
    await b?.stop();
    await backends?.drop();
  });

  it("a console on A gets the thumbs of a worker linked to B; unwatching tells the worker []", async () => {
    wall = await openWall(a.url, ADMIN);
    wall.watch([{ worker_id: agent.workerId, lane: 1 }]);
    await waitFor('worker asked for lane 1 (by B)', async () => agent.agent.thumbs.lanes.join() === '1', 20_000);
    const thumbs = await waitFor('three thumbs through A', async () => (wall.thumbs(agent.workerId, 1).length >= 3 ? wall.thumbs(agent.workerId, 1) : undefined), 20_000);
    expect(thumbs.every((t) => Buffer.from(t.jpeg, 'base64').subarray(0, 2).toString('hex') === 'ffd8')).toBe(true);
    expect(a.hub.localLinks.get(agent.workerId)).toBeUndefined(); // relayed, not linked here
    expect(b.hub.wall.tileCount).toBe(1); // A's one upstream watches the tile at B
    wall.watch([]);
    await waitFor('worker told []', async () => agent.agent.thumbs.lanes.length === 0, 20_000);
    await waitFor('B watches nothing', async () => b.hub.wall.tileCount === 0, 20_000);
  });

  it('the watch follows the worker when it re-links to the other hub', async () => {
    const caps = { max_concurrent: 1, lane_novnc_urls: ['sim://x/0'], novnc_url: null, version: 't', platform: 'test' };
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xd9]).toString('base64');
    const onB = await rawLink(b.url, 'w-wall-move', { capabilities: caps }, { token: 'worker-secret' });
    wall.watch([{ worker_id: 'w-wall-move', lane: 0 }]);
    await waitFor('B asks the worker for lane 0', async () => onB.frames.some((f) => f.type === 'thumbs' && f.lanes.join() === '0'), 20_000);
    onB.ws.send(encode({ type: 'thumb', lane: 0, at: 1, jpeg }));
    await waitFor('its thumb through A', async () => wall.thumbs('w-wall-move').some((t) => t.at === 1), 20_000);
    onB.ws.close();
    const onA = await rawLink(a.url, 'w-wall-move', { capabilities: caps }, { token: 'worker-secret' });
    await waitFor('A asks the worker (now linked to A) for lane 0', async () => onA.frames.some((f) => f.type === 'thumbs' && f.lanes.join() === '0'), 20_000);
    // Sent on every poll, as a worker sends one per interval (the hub relays at most one per half interval).
    await waitFor('its idle thumb from A', async () => wall.thumbs('w-wall-move').some((t) => t.at === 2 && t.idle === true) || void onA.ws.send(encode({ type: 'thumb', lane: 0, at: 2, idle: true })), 20_000, 200);
    await waitFor('B watches nothing', async () => b.hub.wall.tileCount === 0, 20_000);
    onA.ws.close();
  });
});
