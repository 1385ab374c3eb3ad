// POST /jobs/batch on both backends: many jobs in one request and one INSERT, every item held
// to the POST /jobs checks (one bad item → 400 naming it, nothing written), an Idempotency-Key
// per item (inside one batch and across batches), and the batch size bounded.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openJobStore, type SqlJobStore } from '../../hub-core/src/adapters/sql/sql-job-store.ts';
import { PaprikaClient } from '../../hub-core/client/index.ts';
import { startSimAgents, type SimAgent } from '../harness/agents.ts';
import { realBackends, startTestHub, type TestHub } from '../harness/hub.ts';
import { requireServices } from '../harness/services.ts';

const MAX_BATCH = 60;

async function post(url: string, body: unknown) {
  const res = await fetch(`${url}/jobs/batch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as any };
}

for (const backend of ['embedded', 'postgres+redis'] as const) {
  const run = backend === 'embedded' || requireServices(['postgres', 'redis']);
  describe.skipIf(!run)(`POST /jobs/batch on ${backend}`, () => {
    let hub: TestHub;
    let store: SqlJobStore;
    let agents: SimAgent[];
    let drop = async () => {};
    const rows = async () => Object.values(await store.countByStatus()).reduce((a, b) => a + b, 0);

    beforeAll(async () => {
      let env: Record<string, string> = {};
      if (backend !== 'embedded') {
        const b = await realBackends();
        env = b.env;
        drop = b.drop;
      }
      store = await openJobStore({ databaseUrl: env.DATABASE_URL });
      hub = await startTestHub({ ...env, PAPRIKA_MAX_BATCH: String(MAX_BATCH), PAPRIKA_HEARTBEAT_S: '0.2' }, { store });
      agents = (await startSimAgents(hub.url, 2, 2, { heartbeatS: 0.2 })).agents;
    });

    afterAll(async () => {
      await Promise.all(agents?.map((a) => a.stop()) ?? []);
      await hub?.stop();
      await store?.close();
      await drop();
    });

    it('a batch of 50 sleep jobs: 201 with 50 jobs in order, all succeed (SDK runMany)', async () => {
      const client = new PaprikaClient({ url: hub.url });
      const items = Array.from({ length: 50 }, (_, i) => ({ kind: 'sleep' as const, spec: { ms: 5 + (i % 3) } }));
      const submitted = await client.submitMany(items);
      expect(submitted).toHaveLength(50);
      expect(submitted.map((j: any) => j.spec.ms)).toEqual(items.map((i) => i.spec.ms));
      expect(new Set(submitted.map((j) => j.id)).size).toBe(50);
      const done = await Promise.all(submitted.map((j) => client.wait(j.id, { timeout: 30_000 })));
      expect(done.map((j) => j.status)).toEqual(Array(50).fill('succeeded'));
      const again = await client.runMany([{ kind: 'sleep', spec: { ms: 1 } }, { kind: 'sleep', spec: { ms: 2 } }], { timeout: 30_000 });
      expect(again.map((j) => j.status)).toEqual(['succeeded', 'succeeded']);
    });

    it('one bad item → 400 naming its index and field; nothing is inserted', async () => {
      const before = await rows();
      const good = { kind: 'sleep', spec: { ms: 1 } };
      const bad = await post(hub.url, { jobs: [good, good, { kind: 'sleep', spec: { ms: 'soon' } }, good] });
      expect(bad.status).toBe(400);
      expect(bad.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ index: 2, path: 'jobs.2.spec.ms' })]));
      const badKey = await post(hub.url, { jobs: [good, { ...good, idempotency_key: 'has space' }] });
      expect(badKey.status).toBe(400);
      expect(badKey.body.details[0]).toMatchObject({ index: 1, path: 'jobs.1.idempotency_key' });
      const notObject = await post(hub.url, { jobs: [good, 'sleep'] });
      expect(notObject.status).toBe(400);
      expect(notObject.body.details[0]).toMatchObject({ index: 1, path: 'jobs.1' });
      const nul = await post(hub.url, { jobs: [{ kind: 'fetch', spec: { url: 'https://example.com/\u0000' } }] });
      expect(nul.status).toBe(400);
      const scheme = await post(hub.url, { jobs: [good, { kind: 'fetch', spec: { url: 'file:///etc/passwd' } }] });
      expect(scheme.status).toBe(400);
      expect(scheme.body.details[0]).toMatchObject({ index: 1, path: 'jobs.1.spec.url' });
      // The egress check of POST /jobs: the cloud metadata address is refused before any insert.
      const denied = await post(hub.url, { jobs: [good, { kind: 'fetch', spec: { url: 'http://169.254.169.254/latest/meta-data/' } }] });
      expect(denied.status).toBe(400);
      expect(denied.body).toMatchObject({ code: 'url_denied', details: { index: 1, field: 'jobs.1.spec.url', rule: '169.254.0.0/16' } });
      expect(await rows()).toBe(before);
    });

    it('an empty, oversized or malformed batch → 4xx; nothing is inserted', async () => {
      const before = await rows();
      expect((await post(hub.url, { jobs: [] })).status).toBe(400);
      expect((await post(hub.url, { jobs: Array(MAX_BATCH + 1).fill({ kind: 'sleep', spec: { ms: 1 } }) })).status).toBe(400);
      expect((await post(hub.url, [{ kind: 'sleep', spec: { ms: 1 } }])).status).toBe(400);
      expect((await post(hub.url, { jobs: [{ kind: 'sleep', spec: { ms: 1 } }], extra: 1 })).status).toBe(400);
      expect((await post(hub.url, '{"jobs": [')).status).toBe(400);
      const huge = await post(hub.url, { jobs: [{ kind: 'sleep', spec: { ms: 1 }, pad: 'x'.repeat(2 * 1024 * 1024) }] });
      expect(huge.status).toBe(413);
      expect(await rows()).toBe(before);
    });

    it('idempotency keys per item: repeated inside a batch and across batches → the same job; a different request → 422, nothing inserted', async () => {
      const a = { kind: 'sleep', spec: { ms: 3 }, idempotency_key: `a-${backend}` };
      const b = { kind: 'sleep', spec: { ms: 4 }, idempotency_key: `b-${backend}` };
      const first = await post(hub.url, { jobs: [a, b, a] });
      expect(first.status).toBe(201);
      expect(first.body.jobs[0].id).toBe(first.body.jobs[2].id);
      expect(first.body.jobs[0].id).not.toBe(first.body.jobs[1].id);
      const before = await rows();
      const second = await post(hub.url, { jobs: [{ ...b, spec: { ms: 4 } }, { kind: 'sleep', spec: { ms: 9 } }, a] });
      expect(second.status).toBe(201);
      expect(second.body.jobs[0].id).toBe(first.body.jobs[1].id);
      expect(second.body.jobs[2].id).toBe(first.body.jobs[0].id);
      expect(await rows()).toBe(before + 1);

      const mid = await rows();
      const inside = await post(hub.url, { jobs: [{ kind: 'sleep', spec: { ms: 1 }, idempotency_key: `c-${backend}` }, { kind: 'sleep', spec: { ms: 2 }, idempotency_key: `c-${backend}` }] });
      expect(inside.status).toBe(422);
      expect(inside.body).toMatchObject({ code: 'idempotency_key_reused', details: { index: 1, same_as_index: 0 } });
      const across = await post(hub.url, { jobs: [{ kind: 'sleep', spec: { ms: 1 } }, { ...a, spec: { ms: 99 } }] });
      expect(across.status).toBe(422);
      expect(across.body).toMatchObject({ code: 'idempotency_key_reused', details: { index: 1, job_id: first.body.jobs[0].id } });
      expect(await rows()).toBe(mid);
    });
  });
}
