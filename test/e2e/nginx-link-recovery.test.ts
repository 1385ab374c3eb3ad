// The generated nginx config after every hub of the links upstream failed at once: the hub
// that comes back gets every worker again within seconds. With max_fails=1 nginx recorded a
// hub's recovery only when the request that tested it ended, and a link lasts for hours: the
// hub stayed marked down while it held the one link it had let through, one more every
// fail_timeout, every other attempt 502 "no live upstreams" (an outside probe: 258 of 300
// workers off for minutes; replayed here, 22 of 100 after 60 s).
import { afterAll, describe, expect, it } from 'vitest';
import { startSimAgent, type SimAgent } from '../harness/agents.ts';
import { json } from '../harness/http.ts';
import { realBackends } from '../harness/hub.ts';
import { NGINX_BIN, startNginx, type Nginx } from '../harness/nginx.ts';
import { spawnHub, stablePort, waitFor, type HubProcess } from '../harness/processes.ts';
import { requireServices } from '../harness/services.ts';

const canRun = requireServices(['postgres', 'redis']) && (Boolean(NGINX_BIN) || process.env.CI === 'true');

describe.skipIf(!canRun)('nginx links after every hub failed at once', () => {
  const agents: SimAgent[] = [];
  let hub: HubProcess | undefined;
  let nginx: Nginx | undefined;
  let drop = async () => {};
  afterAll(async () => {
    await Promise.all(agents.map((a) => a.kill().catch(() => {})));
    await hub?.kill();
    await nginx?.stop();
    await drop();
  });

  it('gets every worker back to the hub that returns within seconds, not one per fail_timeout', async () => {
    const backends = await realBackends();
    drop = backends.drop;
    const env = { ...backends.env, PAPRIKA_HEARTBEAT_S: '0.5', PAPRIKA_WORKER_TTL_S: '2', PAPRIKA_HUB_HEARTBEAT_S: '0.3', PAPRIKA_HUB_TTL_S: '1.5', PAPRIKA_HUB_ID: 'hub-back' };
    const port = await stablePort();
    // Two more hubs in the config that never answer: every address of the upstream fails together.
    const dead = [await stablePort(), await stablePort()];
    hub = await spawnHub(port, env);
    nginx = await startNginx([port, ...dead].map((p) => `127.0.0.1:${p}`));
    for (let i = 0; i < 20; i++) agents.push(await startSimAgent(nginx.url, 1, { heartbeatS: 0.5 }));
    /** Links held by the hub process now answering (its fleet rows may outlive a killed hub's links). */
    const alive = async () => ((await fetch(`http://127.0.0.1:${port}/healthz`).then(json)) as { workers: number }).workers;
    await waitFor('20 workers linked', async () => (await alive()) === 20, 20_000);

    // The only live hub dies: every link attempt now fails on all three addresses.
    await hub.kill('SIGKILL');
    await waitFor('the agents trying to re-link', async () => agents.every((a) => (a.agent as unknown as { ws?: { readyState: number } }).ws?.readyState !== 1), 10_000);
    hub = await spawnHub(port, env);
    const back = Date.now();
    // One link per fail_timeout (5 s) would take 100 s; the wait's own bound is the assertion.
    await waitFor('all 20 back on the hub', async () => (await alive()) === 20, 20_000);
    console.log(`nginx links: 20 workers back on the returning hub ${Date.now() - back} ms after it answered`);
    expect(await alive()).toBe(20);
  });
});
