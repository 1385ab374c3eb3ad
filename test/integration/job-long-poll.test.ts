// GET /jobs/:id?wait_s=: the answer comes when the job ends (on this hub or on another one
// sharing the database), or as the job is when the wait is over; the SDK's wait() uses it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Job } from '../../hub-core/client/index.ts';
import { startSimAgent, type SimAgent } from '../harness/agents.ts';
import { realBackends, startTestHub, type TestHub } from '../harness/hub.ts';
import { requireServices } from '../harness/services.ts';
import { ManualClock } from '../../hub-core/src/ports/clock.ts';

const submit = async (url: string, ms: number) =>
  (await (await fetch(`${url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'sleep', spec: { ms } }) })).json()) as Job;

describe('long poll on one hub', () => {
  let h: TestHub;
  let agent: SimAgent;
  beforeAll(async () => {
    h = await startTestHub();
    agent = await startSimAgent(h.url, 1);
  });
  afterAll(async () => {
    await agent?.stop();
    await h?.stop();
  });

  it('answers one request with the finished job', async () => {
    const job = await submit(h.url, 400);
    expect(job.status).not.toBe('succeeded');
    const res = await fetch(`${h.url}/jobs/${job.id}?wait_s=30`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as Job).status).toBe('succeeded');
  });

  it('answers with the job as it is when the wait is over', async () => {
    const blocker = await submit(h.url, 5000); // holds the only lane
    const queued = await submit(h.url, 1);
    const res = await fetch(`${h.url}/jobs/${queued.id}?wait_s=0.2`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as Job).status).toBe('queued');
    await fetch(`${h.url}/jobs/${blocker.id}/cancel`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  });

  it.each([['-1'], ['61'], ['abc'], ['1e9'], ['']])('refuses wait_s=%s with 400 and no change', async (v) => {
    const job = await submit(h.url, 1);
    const res = await fetch(`${h.url}/jobs/${job.id}?wait_s=${v}`);
    // An empty value is no wait at all (coerced to 0), never a hang.
    if (v === '') return expect(res.status).toBe(200);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'bad_request' });
  });

  it('refuses unknown query fields, and says 404 for an unknown job at once', async () => {
    const job = await submit(h.url, 1);
    expect((await fetch(`${h.url}/jobs/${job.id}?wait_s=1&other=1`)).status).toBe(400);
    expect((await fetch(`${h.url}/jobs/00000000-0000-4000-8000-000000000000?wait_s=30`)).status).toBe(404);
  });

  it('SDK wait() makes one request for a job that ends within the long poll', async () => {
    const calls: string[] = [];
    const client = createClient({ url: h.url, fetch: async (input, init) => (calls.push(`${init?.method ?? 'GET'} ${String(input)}`), fetch(input, init)) });
    const job = await client.submit({ kind: 'sleep', spec: { ms: 600 } });
    calls.length = 0;
    const done = await client.wait(job.id, { timeout: 60_000 });
    expect(done.status).toBe('succeeded');
    expect(calls).toEqual([`GET ${h.url}/jobs/${job.id}?wait_s=25`]);
  });
});

describe.skipIf(!requireServices(['postgres', 'redis']))('long poll across hubs', () => {
  it('answers on hub B when the job ends on hub A', async () => {
    const backends = await realBackends();
    const a = await startTestHub(backends.env);
    const b = await startTestHub(backends.env);
    const agent = await startSimAgent(a.url, 1);
    try {
      const job = await submit(a.url, 800);
      const res = await fetch(`${b.url}/jobs/${job.id}?wait_s=30`);
      expect(((await res.json()) as Job).status).toBe('succeeded');
    } finally {
      await agent.stop();
      await Promise.all([a.stop(), b.stop()]);
      await backends.drop();
    }
  });

  it("wakes hub B's waiter by A's announcement, not by B's re-read: B's clock stands still, so its timers never fire", async () => {
    const backends = await realBackends();
    const a = await startTestHub(backends.env);
    const b = await startTestHub(backends.env, { clock: new ManualClock(Date.now()) });
    const agent = await startSimAgent(a.url, 1);
    try {
      const job = await submit(a.url, 300);
      const res = await fetch(`${b.url}/jobs/${job.id}?wait_s=30`, { signal: AbortSignal.timeout(20_000) });
      expect(((await res.json()) as Job).status).toBe('succeeded');
    } finally {
      await agent.stop();
      await Promise.all([a.stop(), b.stop()]);
      await backends.drop();
    }
  });
});
