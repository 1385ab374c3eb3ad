// A worker's link moves from hub A to hub B. Whatever order A's unregister and B's register
// happen in, paprika:worker:{id}:owner ends as B (the Lua compare-and-delete).
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encode } from '../../hub-core/src/wire/protocol.ts';
import { capturedLog } from '../harness/agents.ts';
import { realBackends, startTestHub, type TestHub } from '../harness/hub.ts';
import { waitFor } from '../harness/processes.ts';
import { enrollRaw, openRawLink, provenHello, rawLink } from '../harness/raw-link.ts';
import { ownerKeysNaming, requireServices } from '../harness/services.ts';

const caps = { max_concurrent: 1, lane_novnc_urls: ['sim://x/0'], novnc_url: null, version: 't', platform: 'test' };

const link = async (hubUrl: string, workerId: string) => (await rawLink(hubUrl, workerId, { capabilities: caps })).ws;

describe.skipIf(!requireServices(['postgres', 'redis']))('owner hand-off between hubs', () => {
  let backends: Awaited<ReturnType<typeof realBackends>>;
  let a: TestHub;
  let b: TestHub;
  const aLog = capturedLog(); // A's own account of its close handling
  beforeAll(async () => {
    backends = await realBackends();
    a = await startTestHub(backends.env, { logger: aLog.log });
    b = await startTestHub(backends.env);
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await backends?.drop();
  });

  it('keeps B as owner when A unregisters after B registered (the bad order)', async () => {
    const wsA = await link(a.url, 'w-handoff');
    expect(await a.hub.registry.getOwner('w-handoff')).toBe(a.hub.config.hubId);
    const wsB = await link(b.url, 'w-handoff'); // B registers first…
    expect(await a.hub.registry.getOwner('w-handoff')).toBe(b.hub.config.hubId);
    wsA.close(); // …then A's late unregister runs
    await waitFor('A dropped the link', async () => a.hub.localLinks.get('w-handoff') === undefined, 5000, 10);
    // A's close handler has run to its end, the owner release included.
    await waitFor("A's unregister done", async () => aLog.lines.some((l) => l.msg === 'worker unlinked' && l.worker_id === 'w-handoff'), 5000, 10);
    expect(await a.hub.registry.getOwner('w-handoff')).toBe(b.hub.config.hubId);
    wsB.close();
    await waitFor('B released it', async () => (await b.hub.registry.getOwner('w-handoff')) === undefined, 5000, 10);
  });

  it('answers a malformed frame with an error reply and keeps serving', async () => {
    const ws = await link(a.url, 'w-garbage');
    const replies: any[] = [];
    ws.on('message', (m) => replies.push(JSON.parse(String(m))));
    ws.send('{not json');
    ws.send(JSON.stringify({ type: 'job_result', v: 1, job_id: 'x' }));
    ws.send(Buffer.from([0xff, 0x00, 0x13]));
    // The job_result that is not valid is refused as a result (the worker reports the job failed instead), the others get an error.
    await waitFor('two error replies and a refusal', async () => replies.filter((r) => r.type === 'error').length >= 2 && replies.some((r) => r.type === 'result_refused' && r.job_id === 'x' && r.code === 'invalid'), 5000, 10);
    expect(ws.readyState).toBe(WebSocket.OPEN);
    expect((await fetch(`${a.url}/healthz`)).status).toBe(200);
    ws.close();
  });

  it('leaves no worker behind when a link closes in the middle of its hello (20 times)', async () => {
    for (let i = 0; i < 20; i++) {
      const secret = await enrollRaw(a.url, `w-flaky${i}`);
      const { ws, nonce } = await openRawLink(a.url, `w-flaky${i}`);
      ws.send(provenHello(`w-flaky${i}`, secret, nonce, { capabilities: caps }));
      ws.terminate();
    }
    await waitFor('no flaky link left', async () => [...Array(20).keys()].every((i) => a.hub.localLinks.get(`w-flaky${i}`) === undefined), 5000, 20);
    expect(a.hub.localLinks.all().filter((l) => l.worker_id.startsWith('w-flaky'))).toHaveLength(0);
  });

  it('releases every owner key it holds when it stops gracefully (what SIGTERM runs): none names it afterwards', async () => {
    const c = await startTestHub(backends.env);
    const prefix = backends.env.PAPRIKA_REDIS_PREFIX;
    const ids = [...Array(5).keys()].map((i) => `w-stop${i}`);
    const sockets = await Promise.all(ids.map((id) => link(c.url, id)));
    expect((await ownerKeysNaming(prefix, c.hub.config.hubId)).sort()).toEqual(ids);
    // Each release a few Redis round trips late (as on a loaded hub): a stop that did not await
    // the close handlers closed the registry first, and the keys stayed.
    const registry = c.hub.registry;
    const release = registry.releaseOwnerIfMine.bind(registry);
    registry.releaseOwnerIfMine = async (workerId, hubId) => {
      for (let i = 0; i < 3; i++) await registry.ping();
      return release(workerId, hubId);
    };
    await c.stop();
    // Nobody re-links these workers elsewhere: a key left behind would stay and name the stopped hub.
    expect(await ownerKeysNaming(prefix, c.hub.config.hubId)).toEqual([]);
    expect(sockets.every((ws) => ws.readyState === WebSocket.CLOSED || ws.readyState === WebSocket.CLOSING)).toBe(true);
  });
});
