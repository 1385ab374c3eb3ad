// One suite, two databases: the same SQL on real Postgres (pg) and on embedded PGlite.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqlJobStore } from '../../hub-core/src/adapters/sql/sql-job-store.ts';
import { migrate } from '../../hub-core/src/adapters/sql/migrate.ts';
import { openBackendJobStore } from '../harness/job-stores.ts';
import { requireServices } from '../harness/services.ts';

const t0 = new Date('2026-01-01T00:00:00Z');
const at = (s: number) => new Date(t0.getTime() + s * 1000);

for (const backend of ['pglite', 'postgres'] as const) {
  const run = backend === 'pglite' || requireServices(['postgres']);
  describe.skipIf(!run)(`job store on ${backend}`, () => {
    let store: SqlJobStore;
    let drop = async () => {};

    beforeAll(async () => {
      ({ store, drop } = await openBackendJobStore(backend));
    });
    afterAll(async () => {
      await store?.close();
      await drop();
    });

    const insert = async (key: string | null = null, now = t0) =>
      (await store.insertJob({ id: randomUUID(), kind: 'sleep', spec: { ms: 1 }, hubId: 'h1', idempotencyKey: key, now })).job;
    const claim = (id: string, worker = 'w1', assignmentId = randomUUID()) =>
      store.claimQueuedJob(id, { workerId: worker, hubId: 'h1', lane: 0, assignmentId, novncUrl: 'http://v/0', now: at(1), deadlineAt: at(181) });

    it('runs the migrations once: a second run applies nothing', async () => {
      expect(await migrate(store.db)).toEqual({ applied: [], unknown: [] });
    });

    it('inserts queued jobs and reads them back with the spec as JSON', async () => {
      const job = await insert();
      expect(job).toMatchObject({ status: 'queued', kind: 'sleep', spec: { ms: 1 }, worker_id: null, attempts: 0 });
      expect((await store.getJob(job.id))?.created_at.getTime()).toBe(t0.getTime());
    });

    it('returns the existing job for a repeated idempotency key', async () => {
      const key = `k-${randomUUID()}`;
      const a = await store.insertJob({ id: randomUUID(), kind: 'sleep', spec: { ms: 1 }, hubId: 'h1', idempotencyKey: key, now: t0 });
      const b = await store.insertJob({ id: randomUUID(), kind: 'sleep', spec: { ms: 2 }, hubId: 'h1', idempotencyKey: key, now: t0 });
      expect(a.created).toBe(true);
      expect(b.created).toBe(false);
      expect(b.job.id).toBe(a.job.id);
    });

    it('lets exactly one of many concurrent claims win', async () => {
      const job = await insert();
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => claim(job.id, `w${i}`)));
      const winners = results.filter(Boolean);
      expect(winners).toHaveLength(1);
      expect(winners[0]).toMatchObject({ status: 'running', attempts: 1, lane: 0, novnc_url: 'http://v/0' });
    });

    it('undoes a claim back to queued and released, and only for the same assignment', async () => {
      const job = await insert();
      const assignment = randomUUID();
      await claim(job.id, 'w1', assignment);
      expect(await store.unclaimJob(job.id, randomUUID(), at(2))).toBe(false);
      expect(await store.unclaimJob(job.id, assignment, at(2))).toBe(true);
      const row = await store.getJob(job.id);
      expect(row).toMatchObject({ status: 'queued', worker_id: null, session_id: null });
      expect(row?.released_at?.getTime()).toBe(at(2).getTime());
      expect(await claim(job.id)).toBeDefined();
    });

    it('finishes a run once; a stale, foreign or repeated result changes nothing', async () => {
      const job = await insert();
      const assignment = randomUUID();
      await claim(job.id, 'w1', assignment);
      expect(await store.finishJob(job.id, { assignmentId: randomUUID(), workerId: 'w1', status: 'succeeded', result: {}, error: null, now: at(3) })).toBeUndefined();
      expect(await store.finishJob(job.id, { assignmentId: assignment, workerId: 'w-intruder', status: 'failed', result: {}, error: 'evil', now: at(3) })).toBeUndefined();
      const done = await store.finishJob(job.id, { assignmentId: assignment, workerId: 'w1', status: 'succeeded', result: { ok: 1 }, error: null, now: at(3) });
      expect(done).toMatchObject({ status: 'succeeded', result: { ok: 1 } });
      expect(await store.finishJob(job.id, { assignmentId: assignment, workerId: 'w1', status: 'failed', result: null, error: 'x', now: at(4) })).toBeUndefined();
      expect((await store.getJob(job.id))?.status).toBe('succeeded');
    });

    it("takes a late success of the same run over the reconciler's guess that it was lost, and nothing else", async () => {
      for (const guess of ['worker w1 lost: no heartbeat for 31 s', 'timeout']) {
        const job = await insert();
        const assignment = randomUUID();
        await claim(job.id, 'w1', assignment);
        expect(await store.failJobIf(job.id, { status: 'running', assignmentId: assignment }, guess, at(5))).toMatchObject({ status: 'failed' });
        // Another run, another worker, or a late failure: the guess stays.
        expect(await store.finishJob(job.id, { assignmentId: randomUUID(), workerId: 'w1', status: 'succeeded', result: {}, error: null, now: at(6) })).toBeUndefined();
        expect(await store.finishJob(job.id, { assignmentId: assignment, workerId: 'w2', status: 'succeeded', result: {}, error: null, now: at(6) })).toBeUndefined();
        expect(await store.finishJob(job.id, { assignmentId: assignment, workerId: 'w1', status: 'failed', result: null, error: 'x', now: at(6) })).toBeUndefined();
        // The run's own success is the fact.
        const late = await store.finishJob(job.id, { assignmentId: assignment, workerId: 'w1', status: 'succeeded', result: { ok: 1 }, error: null, now: at(7) });
        expect(late).toMatchObject({ status: 'succeeded', result: { ok: 1 }, error: null });
        expect(new Date(late!.finished_at!).getTime()).toBe(at(5).getTime()); // terminal since the guess
      }
      // A failure the worker reported is not a guess: a success for it later changes nothing.
      const job = await insert();
      const assignment = randomUUID();
      await claim(job.id, 'w1', assignment);
      await store.finishJob(job.id, { assignmentId: assignment, workerId: 'w1', status: 'failed', result: null, error: 'step 2 (click): no element', now: at(3) });
      expect(await store.finishJob(job.id, { assignmentId: assignment, workerId: 'w1', status: 'succeeded', result: {}, error: null, now: at(4) })).toBeUndefined();
      const canceled = await insert();
      const a2 = randomUUID();
      await claim(canceled.id, 'w1', a2);
      await store.cancelJob(canceled.id, at(3));
      expect(await store.finishJob(canceled.id, { assignmentId: a2, workerId: 'w1', status: 'succeeded', result: {}, error: null, now: at(4) })).toBeUndefined();
    });

    it('cancels queued and running jobs, not finished ones', async () => {
      const q = await insert();
      expect((await store.cancelJob(q.id, at(1)))?.status).toBe('canceled');
      expect(await store.cancelJob(q.id, at(2))).toBeUndefined();
    });

    it('fails only rows still in the state the decider saw', async () => {
      const job = await insert();
      const assignment = randomUUID();
      await claim(job.id, 'w1', assignment);
      expect(await store.failJobIf(job.id, { status: 'queued' }, 'queued timeout', at(5))).toBeUndefined();
      expect(await store.failJobIf(job.id, { status: 'running', assignmentId: randomUUID() }, 'orphan', at(5))).toBeUndefined();
      expect((await store.failJobIf(job.id, { status: 'running', assignmentId: assignment }, 'orphan', at(5)))?.error).toBe('orphan');
    });

    it('lists queued jobs oldest first and counts by status', async () => {
      const late = await insert(null, at(100));
      const early = await insert(null, at(-100));
      const ids = (await store.listQueued(1000)).map((r) => r.id);
      expect(ids.indexOf(early.id)).toBeLessThan(ids.indexOf(late.id));
      const counts = await store.countByStatus();
      expect(counts.queued).toBeGreaterThanOrEqual(2);
      expect(counts.succeeded).toBeGreaterThanOrEqual(1);
    });

    it('keeps worker status durably with an audit entry per change, naming the old status (a worker never set was active)', async () => {
      await store.setWorkerStatus('w77', 'drain', 'tester', at(1));
      await store.setWorkerStatus('w77', 'standby', 'tester', at(2));
      expect(await store.getWorkerStatus('w77')).toBe('standby');
      const audit = (await store.listAudit(10)).filter((a) => a.target === 'w77');
      expect(audit.map((a) => a.details)).toEqual([{ from: 'drain', to: 'standby' }, { from: 'active', to: 'drain' }]);
    });
  });
}
