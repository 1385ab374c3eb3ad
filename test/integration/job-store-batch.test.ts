// The batch statements on both databases (real Postgres and embedded PGlite): many jobs
// claimed in one statement by concurrent claimers, many results written in one statement
// while some of them no longer match, and a batch inserted partly running.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqlJobStore } from '../../hub-core/src/adapters/sql/sql-job-store.ts';
import type { Claim, Finish, NewJob } from '../../hub-core/src/ports/job-store.ts';
import { openBackendJobStore } from '../harness/job-stores.ts';
import { requireServices } from '../harness/services.ts';

const t0 = new Date('2026-01-01T00:00:00Z');
const at = (s: number) => new Date(t0.getTime() + s * 1000);
const newJob = (key: string | null = null): NewJob => ({ id: randomUUID(), kind: 'sleep', spec: { ms: 1 }, hubId: 'h1', idempotencyKey: key, now: t0 });
const claimFor = (worker: string, lane: number): Claim => ({ workerId: worker, hubId: 'h1', lane, assignmentId: randomUUID(), novncUrl: null, now: at(1), deadlineAt: at(181) });
const done = (claim: Claim, extra: Partial<Finish> = {}): Finish => ({ assignmentId: claim.assignmentId, workerId: claim.workerId, status: 'succeeded', result: { ok: true }, error: null, now: at(3), ...extra });

for (const backend of ['pglite', 'postgres'] as const) {
  const run = backend === 'pglite' || requireServices(['postgres']);
  describe.skipIf(!run)(`job store batches on ${backend}`, () => {
    let store: SqlJobStore;
    let drop = async () => {};

    beforeAll(async () => {
      ({ store, drop } = await openBackendJobStore(backend));
    });
    afterAll(async () => {
      await store?.close();
      await drop();
    });

    const queued = async (n: number) => store.insertBatch(Array.from({ length: n }, () => newJob()));

    it('claims many queued jobs in one statement, each with its own lane and assignment', async () => {
      const jobs = await queued(5);
      const claims = jobs.map((j, i) => ({ id: j.id, claim: claimFor('w1', i) }));
      const rows = await store.claimQueuedJobs(claims);
      expect(rows).toHaveLength(5);
      for (const c of claims) {
        const row = await store.getJob(c.id);
        expect(row).toMatchObject({ status: 'running', worker_id: 'w1', lane: c.claim.lane, session_id: c.claim.assignmentId, attempts: 1, hub_id: 'h1' });
        expect(row?.deadline_at?.getTime()).toBe(at(181).getTime());
      }
    });

    it('never claims a job twice: concurrent claimers of the same jobs split them, every job won exactly once', async () => {
      for (let round = 0; round < 3; round++) {
        const jobs = await queued(40);
        const claimers = ['wA', 'wB', 'wC', 'wD'];
        const won = await Promise.all(claimers.map((w) => store.claimQueuedJobs(jobs.map((j, i) => ({ id: j.id, claim: claimFor(w, i) })))));
        const all = won.flatMap((rows) => rows.map((r) => r.id));
        expect(new Set(all).size).toBe(all.length); // nobody won a job another won
        // What each claimer was told is what the database holds.
        for (const [i, rows] of won.entries()) for (const r of rows) expect((await store.getJob(r.id))?.worker_id).toBe(claimers[i]);
        // Skipped rows were locked by a winner, so no job is left queued.
        expect(all).toHaveLength(40);
      }
    });

    it('leaves out jobs no longer queued (running, canceled) and claims the rest', async () => {
      const [a, b, c] = await queued(3);
      await store.claimQueuedJob(a.id, claimFor('w-first', 0));
      await store.cancelJob(b.id, at(1));
      const rows = await store.claimQueuedJobs([a, b, c].map((j, i) => ({ id: j.id, claim: claimFor('w2', i) })));
      expect(rows.map((r) => r.id)).toEqual([c.id]);
      expect((await store.getJob(a.id))?.worker_id).toBe('w-first');
      expect((await store.getJob(b.id))?.status).toBe('canceled');
    });

    it('writes many results in one statement; a result that no longer matches (canceled meanwhile, another run) is left out, the others stored', async () => {
      const jobs = await queued(4);
      const claims = jobs.map((j, i) => claimFor('w1', i));
      await store.claimQueuedJobs(jobs.map((j, i) => ({ id: j.id, claim: claims[i] })));
      await store.cancelJob(jobs[1].id, at(2));
      const finished = await store.finishJobs([
        { id: jobs[0].id, finish: done(claims[0]) },
        { id: jobs[1].id, finish: done(claims[1]) },
        { id: jobs[2].id, finish: done(claims[2], { assignmentId: randomUUID() }) },
        { id: jobs[3].id, finish: done(claims[3], { status: 'failed', result: null, error: 'boom' }) },
      ]);
      expect(finished.map((r) => r.id).sort()).toEqual([jobs[0].id, jobs[3].id].sort());
      expect(await store.getJob(jobs[0].id)).toMatchObject({ status: 'succeeded', result: { ok: true }, error: null });
      expect((await store.getJob(jobs[0].id))?.finished_at?.getTime()).toBe(at(3).getTime());
      expect(await store.getJob(jobs[1].id)).toMatchObject({ status: 'canceled', result: null });
      expect(await store.getJob(jobs[2].id)).toMatchObject({ status: 'running' });
      expect(await store.getJob(jobs[3].id)).toMatchObject({ status: 'failed', error: 'boom', result: null });
    });

    it("takes a late success over the reconciler's guess in a batch too, keeping the guess's finished_at", async () => {
      const [job] = await queued(1);
      const claim = claimFor('w1', 0);
      await store.claimQueuedJob(job.id, claim);
      await store.failJobIf(job.id, { status: 'running', assignmentId: claim.assignmentId }, 'timeout', at(5));
      const [other] = await queued(1);
      const c2 = claimFor('w1', 1);
      await store.claimQueuedJob(other.id, c2);
      const rows = await store.finishJobs([{ id: job.id, finish: done(claim, { now: at(9) }) }, { id: other.id, finish: done(c2, { now: at(9) }) }]);
      expect(rows).toHaveLength(2);
      const late = await store.getJob(job.id);
      expect(late).toMatchObject({ status: 'succeeded', result: { ok: true } });
      expect(late?.finished_at?.getTime()).toBe(at(5).getTime());
    });

    it('inserts a batch partly running (the rows given a lane) and partly queued and released; a held key is skipped', async () => {
      const key = `k-${randomUUID()}`;
      await store.insertBatch([newJob(key)]);
      const claim = claimFor('w1', 0);
      const running = { ...newJob(), claim };
      const plain = newJob();
      const dup = newJob(key);
      const rows = await store.insertBatch([running, plain, dup]);
      expect(rows.map((r) => r.id).sort()).toEqual([running.id, plain.id].sort());
      const r = await store.getJob(running.id);
      expect(r).toMatchObject({ status: 'running', worker_id: 'w1', lane: 0, session_id: claim.assignmentId, attempts: 1, released_at: null });
      expect(r?.assigned_at?.getTime()).toBe(t0.getTime());
      const q = await store.getJob(plain.id);
      expect(q).toMatchObject({ status: 'queued', worker_id: null, attempts: 0 });
      expect(q?.released_at?.getTime()).toBe(t0.getTime());
    });
  });
}
