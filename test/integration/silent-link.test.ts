// A worker link whose network dies without a FIN or RST (a pulled cable, a NAT or proxy that
// forgot the flow, a frozen hub behind a proxy that keeps the TCP up) must not hold a worker
// off the fleet: the agent, whose pings go unanswered, drops the link and re-links; the hub
// drops a link silent for PAPRIKA_WORKER_TTL_S. The silence is real: a TCP relay that stops
// passing bytes both ways and closes nothing.
import { afterEach, describe, expect, it } from 'vitest';
import { capturedLog, startSimAgent, type SimAgent } from '../harness/agents.ts';
import { startBlackholeProxy, type BlackholeProxy } from '../harness/blackhole-proxy.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { waitFor } from '../harness/wait.ts';

describe('a silent worker link', () => {
  let hub: TestHub | undefined;
  let proxy: BlackholeProxy | undefined;
  let agent: SimAgent | undefined;
  afterEach(async () => {
    await agent?.kill();
    await proxy?.close();
    await hub?.stop();
    agent = proxy = hub = undefined;
  });

  it('the agent drops a link its hub stopped answering, re-links through a path that works, and runs the next job', async () => {
    hub = await startTestHub({ PAPRIKA_HEARTBEAT_S: '0.2', PAPRIKA_WORKER_TTL_S: '30' });
    proxy = await startBlackholeProxy(hub.url);
    const { log, lines } = capturedLog();
    agent = await startSimAgent(proxy.url, 1, { heartbeatS: 0.2, linkSilenceMs: 1000, log });
    const linked = () => lines.filter((l) => l.msg === 'linked').length;
    expect(linked()).toBe(1);
    proxy.cut();
    await waitFor('the agent dropped the silent link', async () => lines.some((l) => l.msg === 'the hub answered nothing on this link; dropping it and re-linking'));
    await waitFor('the agent linked again', async () => linked() === 2);
    // The hub now holds the new link (the old one's socket at the hub is still open, but superseded).
    const res = await fetch(`${hub.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'sleep', spec: { ms: 0 } }) });
    const { id } = (await res.json()) as { id: string };
    const job = await waitFor('the job succeeded', async () => {
      const j = (await (await fetch(`${hub!.url}/jobs/${id}`)).json()) as { status: string; worker_id: string };
      return j.status === 'succeeded' ? j : undefined;
    });
    expect(job.worker_id).toBe(agent.workerId);
  });

  it('the hub drops a link silent for PAPRIKA_WORKER_TTL_S', async () => {
    hub = await startTestHub({ PAPRIKA_HEARTBEAT_S: '0.2', PAPRIKA_WORKER_TTL_S: '1', PAPRIKA_HUB_HEARTBEAT_S: '0.2' });
    proxy = await startBlackholeProxy(hub.url);
    // This agent never gives up on its side (an agent of an older version, or one frozen itself).
    agent = await startSimAgent(proxy.url, 1, { heartbeatS: 0.2, linkSilenceMs: 3_600_000 });
    const link = hub.hub.localLinks.get(agent.workerId)!;
    expect(link.open).toBe(true);
    // Heartbeats flow: the link outlives several TTLs while they do.
    const lastSeen = link.last_seen_ms;
    await waitFor('two more heartbeats', async () => link.last_seen_ms > lastSeen + 300);
    expect(link.open).toBe(true);
    proxy.cut();
    await waitFor('the hub dropped the silent link', async () => !link.open && hub!.hub.localLinks.get(agent!.workerId) !== link, 10_000);
  });
});
