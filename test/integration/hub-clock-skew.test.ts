// Two hubs on one Postgres and Redis, one on a host whose clock runs ten minutes ahead. Hubs
// compare each other's times (a worker's last heartbeat, a job's created_at), so before, the
// fast hub saw the other's worker as dead, failed its healthy running job `worker … lost` and
// its queued job `queued timeout`. Now each hub keeps Postgres's time.
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '../../hub-core/src/ports/clock.ts';
import { capturedLog, startSimAgent, type SimAgent } from '../harness/agents.ts';
import { json, post } from '../harness/http.ts';
import { realBackends, startTestHub, type TestHub } from '../harness/hub.ts';
import { requireServices } from '../harness/services.ts';
import { waitFor } from '../harness/wait.ts';

const AHEAD_MS = 10 * 60_000;
const aheadClock: Clock = { now: () => Date.now() + AHEAD_MS, sleep: systemClock.sleep, setTimer: systemClock.setTimer };
const ENV = { PAPRIKA_HEARTBEAT_S: '0.3', PAPRIKA_HUB_HEARTBEAT_S: '0.3', PAPRIKA_WORKER_TTL_S: '2', PAPRIKA_ORPHAN_GRACE_S: '1', PAPRIKA_RECONCILE_INTERVAL_S: '0.2', PAPRIKA_QUEUED_TIMEOUT_S: '120' };

describe.skipIf(!requireServices(['postgres', 'redis']))('a hub whose host clock is ten minutes ahead', () => {
  let backends: Awaited<ReturnType<typeof realBackends>> | undefined;
  const hubs: TestHub[] = [];
  let agent: SimAgent | undefined;
  afterEach(async () => {
    await agent?.stop();
    for (const h of hubs.splice(0)) await h.stop();
    await backends?.drop();
    agent = backends = undefined;
  });

  it("keeps Postgres's time, says so, and leaves the other hub's worker and jobs alone", async () => {
    backends = await realBackends();
    const a = await startTestHub({ ...backends.env, ...ENV });
    hubs.push(a);
    const { log, lines } = capturedLog();
    const fast = await startTestHub({ ...backends.env, ...ENV }, { hostClock: aheadClock, logger: log });
    hubs.push(fast);

    expect(Math.abs(fast.hub.clock.now() - Date.now())).toBeLessThan(2000);
    const warned = lines.find((l) => l.msg.startsWith("this host's clock is 600"));
    expect(warned?.msg).toContain("ahead of Postgres's (DATABASE_URL)");
    expect(warned?.host_ahead_ms).toBeGreaterThan(AHEAD_MS - 2000);

    agent = await startSimAgent(a.url, 1, { heartbeatS: 0.3 });
    // Running on A's worker for 3 s: the fast hub's reconciler passes every 0.2 s with a 1 s grace.
    const running = await post(`${a.url}/jobs`, { kind: 'sleep', spec: { ms: 3000 } });
    // No simulated lane runs fetch: it stays queued, created at A's (right) time.
    const queued = await post(`${a.url}/jobs`, { kind: 'fetch', spec: { url: 'http://127.0.0.1:9/' } });
    await waitFor('the fast hub shows A\'s worker alive', async () => {
      const res = await json(await fetch(`${fast.url}/admin/workers`));
      return res.workers?.find((w: { worker_id: string; alive: boolean }) => w.worker_id === agent!.workerId && w.alive);
    });
    const ended = await waitFor('the sleep job ended', async () => {
      const job = await json(await fetch(`${a.url}/jobs/${running.id}`));
      return ['succeeded', 'failed', 'canceled'].includes(job.status) && job;
    });
    expect(ended).toMatchObject({ status: 'succeeded', worker_id: agent.workerId });
    expect((await json(await fetch(`${fast.url}/jobs/${queued.id}`))).status).toBe('queued');
  });
});
