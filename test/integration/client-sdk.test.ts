// The client SDK and the hub's back-pressure: retries on 503 and refused connections with one
// idempotency key, never on 4xx; a hub killed and restarted under load loses and doubles nothing.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, PaprikaApiError, PaprikaUnavailableError, type Job } from '../../hub-core/client/index.ts';
import { startSimAgent, type SimAgent } from '../harness/agents.ts';
import { realBackends, startTestHub, type TestHub } from '../harness/hub.ts';
import { freePort, spawnHub, waitFor } from '../harness/processes.ts';
import { SteppingClock } from '../harness/clocks.ts';
import { requireServices } from '../harness/services.ts';

const countingFetch = () => {
  const calls: string[] = [];
  const f: typeof fetch = async (input, init) => {
    calls.push(`${init?.method ?? 'GET'} ${String(input)}`);
    return fetch(input, init);
  };
  return { calls, fetch: f };
};

describe('hub API edges (embedded)', () => {
  let h: TestHub;
  let agent: SimAgent;
  beforeAll(async () => {
    h = await startTestHub();
    agent = await startSimAgent(h.url, 2);
  });
  afterAll(async () => {
    await agent?.stop();
    await h?.stop();
  });

  it('returns the same job for two POSTs with the same Idempotency-Key', async () => {
    const key = randomUUID();
    const send = () => fetch(`${h.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify({ kind: 'sleep', spec: { ms: 1 } }) }).then((r) => r.json() as Promise<Job>);
    const [a, b] = [await send(), await send()];
    expect(b.id).toBe(a.id);
    const all = (await (await fetch(`${h.url}/jobs?limit=1000`)).json()) as { jobs: Job[] };
    expect(all.jobs.filter((j) => j.id === a.id)).toHaveLength(1);
  });

  it('answers 413 to a body over the limit and 400 to malformed JSON, creating nothing', async () => {
    const before = ((await (await fetch(`${h.url}/jobs?limit=1000`)).json()) as { jobs: Job[] }).jobs.length;
    const big = await fetch(`${h.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'sleep', spec: { ms: 1 }, pad: 'x'.repeat(2 * 1024 * 1024) }) });
    expect(big.status).toBe(413);
    expect(await big.json()).toMatchObject({ code: 'payload_too_large' });
    const bad = await fetch(`${h.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"kind":' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toHaveProperty('error');
    const after = ((await (await fetch(`${h.url}/jobs?limit=1000`)).json()) as { jobs: Job[] }).jobs.length;
    expect(after).toBe(before);
  });

  it('runs a job with the SDK: submit + wait', async () => {
    const client = createClient({ url: h.url });
    const job = await client.run({ kind: 'sleep', spec: { ms: 5 } }, { timeout: 5000 });
    expect(job.status).toBe('succeeded');
  });

  it('never retries a 4xx and throws a typed error with the details', async () => {
    const f = countingFetch();
    const client = createClient({ url: h.url, fetch: f.fetch });
    const err = await client.submit({ kind: 'sleep', spec: { ms: -5 } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PaprikaApiError);
    expect((err as PaprikaApiError).status).toBe(400);
    expect((err as PaprikaApiError).details).not.toBeNull();
    // The message alone names the field (a script that prints only the Error still knows what to fix).
    expect((err as Error).message).toMatch(/^Invalid job: spec\.ms: /);
    expect(f.calls).toHaveLength(1);
  });

  it('refuses a url option that is not an http(s) URL at createClient, naming the option', () => {
    for (const url of ['not a url', 'ftp://127.0.0.1/', '']) expect(() => createClient({ url })).toThrow(/createClient: option url must be the hub's \(or nginx's\) http\(s\) URL/);
  });

  it('keeps a sub-path of the base URL (a hub behind http://host/paprika)', async () => {
    const f = countingFetch();
    const client = createClient({ url: 'http://127.0.0.1:1/paprika', fetch: async (input, init) => (f.calls.push(`${init?.method} ${String(input)}`), new Response(JSON.stringify({ id: 'x', status: 'queued' }), { status: 201 })) });
    await client.submit({ kind: 'sleep', spec: { ms: 1 } });
    expect(f.calls).toEqual(['POST http://127.0.0.1:1/paprika/jobs']);
  });

  it('retries refused connections with backoff until its deadline', async () => {
    const port = await freePort();
    const f = countingFetch();
    // The client's time is a SteppingClock: its waits are counted, not spent.
    const clock = new SteppingClock();
    const client = createClient({ url: `http://127.0.0.1:${port}`, fetch: f.fetch, deadlineMs: 600, baseDelayMs: 20, clock });
    const err = await client.get(randomUUID()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PaprikaUnavailableError);
    expect(f.calls.length).toBeGreaterThan(2);
    expect((err as PaprikaUnavailableError).attempts).toBe(f.calls.length);
    // It names the hub it tried and why (undici's own message is only "fetch failed").
    expect((err as Error).message).toContain(`hub at http://127.0.0.1:${port} unavailable after`);
    expect((err as Error).message).toMatch(/fetch failed \(.*ECONNREFUSED/);
    // A wait between every two tries, each within its backoff step (20 ms doubling: half to whole)…
    expect(clock.slept).toHaveLength(f.calls.length - 1);
    clock.slept.forEach((ms, i) => {
      expect(ms).toBeGreaterThanOrEqual(10 * 2 ** i);
      expect(ms).toBeLessThanOrEqual(20 * 2 ** i);
    });
    // …and it gave up inside its deadline rather than sleep past it.
    expect(clock.now()).toBeLessThan(600);
  });
});

describe('queue limit', () => {
  it('answers 503 with Retry-After above PAPRIKA_MAX_QUEUED, and the SDK retries it with the same key', async () => {
    const h = await startTestHub({ PAPRIKA_MAX_QUEUED: '0' });
    try {
      const res = await fetch(`${h.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'sleep', spec: { ms: 1 } }) });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBeTruthy();
      expect(await res.json()).toMatchObject({ code: 'queue_full' });

      const keys: string[] = [];
      const f: typeof fetch = async (input, init) => {
        keys.push(String((init?.headers as Record<string, string>)['idempotency-key']));
        const r = await fetch(input, init);
        // Strip Retry-After so the test does not wait the hub's 5 s.
        return new Response(await r.text(), { status: r.status, headers: { 'content-type': 'application/json' } });
      };
      const client = createClient({ url: h.url, fetch: f, deadlineMs: 500, baseDelayMs: 20 });
      await expect(client.submit({ kind: 'sleep', spec: { ms: 1 } })).rejects.toBeInstanceOf(PaprikaUnavailableError);
      expect(keys.length).toBeGreaterThan(1);
      expect(new Set(keys).size).toBe(1);
      expect(((await (await fetch(`${h.url}/jobs`)).json()) as { jobs: Job[] }).jobs).toHaveLength(0);
    } finally {
      await h.stop();
    }
  });
});

describe.skipIf(!requireServices(['postgres', 'redis']))('hub on Postgres under faults', () => {
  it('answers 503 while Postgres refuses connections, and recovers', async () => {
    const backends = await realBackends();
    const h = await startTestHub(backends.env);
    const dbName = new URL(backends.env.DATABASE_URL).pathname.slice(1);
    const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/test' });
    await admin.connect();
    try {
      await admin.query(`ALTER DATABASE ${dbName} ALLOW_CONNECTIONS false`);
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [dbName]);
      const res = await fetch(`${h.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'sleep', spec: { ms: 1 } }) });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBeTruthy();
      expect(await res.json()).toMatchObject({ code: 'database_unavailable' });
      const read = await fetch(`${h.url}/jobs/${randomUUID()}`);
      expect(read.status).toBe(503);
      await admin.query(`ALTER DATABASE ${dbName} ALLOW_CONNECTIONS true`);
      const ok = await fetch(`${h.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'sleep', spec: { ms: 1 } }) });
      expect(ok.status).toBe(201);
    } finally {
      await admin.query(`ALTER DATABASE ${dbName} ALLOW_CONNECTIONS true`).catch(() => {});
      await admin.end();
      await h.stop();
      await backends.drop();
    }
  });

  it('SDK submitting 100 jobs while the hub is SIGKILLed and restarted: every call returns, exactly 100 jobs, all terminal', async () => {
    const backends = await realBackends();
    const env = { ...backends.env, PAPRIKA_HEARTBEAT_S: '0.2', PAPRIKA_WORKER_TTL_S: '1', PAPRIKA_ASSIGN_WAIT_S: '0.5', PAPRIKA_QUEUE_REDRIVE_INTERVAL_S: '0.2', PAPRIKA_REDRIVE_MIN_AGE_S: '1', PAPRIKA_RECONCILE_INTERVAL_S: '0.5', PAPRIKA_ORPHAN_GRACE_S: '2', PAPRIKA_HUB_TTL_S: '1', PAPRIKA_HUB_HEARTBEAT_S: '0.2' };
    const port = await freePort();
    let hub = await spawnHub(port, env);
    const url = `http://127.0.0.1:${port}`;
    const agents = [await startSimAgent(url, 3, { heartbeatS: 0.2 }), await startSimAgent(url, 3, { heartbeatS: 0.2 })];
    // Calls refused while the hub is down: the restart waits until the SDK has met the outage.
    let refused = 0;
    const countRefused: typeof fetch = (input, init) => fetch(input, init).catch((err: unknown) => (refused++, Promise.reject(err)));
    const client = createClient({ url, deadlineMs: 30_000, baseDelayMs: 50, maxDelayMs: 500, fetch: countRefused });
    try {
      let submitted = 0;
      const runOne = async () => {
        const job = await client.run({ kind: 'sleep', spec: { ms: 30 } }, { timeout: 30_000 });
        submitted++;
        return job;
      };
      const results: Array<Promise<Job>> = [];
      let i = 0;
      const pump = async () => {
        while (i < 100) {
          i++;
          await runOne().then((j) => results.push(Promise.resolve(j)));
        }
      };
      const pumps = Promise.all(Array.from({ length: 5 }, pump));
      await waitFor('some progress', async () => submitted >= 30, 20_000, 10);
      await hub.kill('SIGKILL');
      const refusedBefore = refused;
      await waitFor('calls refused by the killed hub', async () => refused >= refusedBefore + 5, 20_000, 10);
      hub = await spawnHub(port, env);
      await pumps;
      const jobs = await Promise.all(results);
      expect(jobs).toHaveLength(100);
      expect(jobs.every((j) => ['succeeded', 'failed', 'canceled'].includes(j.status))).toBe(true);
      const db = new pg.Client({ connectionString: backends.env.DATABASE_URL });
      await db.connect();
      const { rows } = await db.query<{ n: number; open: number }>(`SELECT count(*)::int AS n, count(*) FILTER (WHERE status IN ('queued','running'))::int AS open FROM jobs`);
      await db.end();
      expect(rows[0]).toEqual({ n: 100, open: 0 });
      expect(new Set(jobs.map((j) => j.id)).size).toBe(100);
    } finally {
      await Promise.all(agents.map((a) => a.stop()));
      await hub.kill();
      await backends.drop();
    }
  });
});
