// The statements that touch jobs by id find them through the primary key, whatever the
// planner's statistics say: none, fresh, or taken when the table looked different. A claim
// planned on a status index (or a seq scan) costs time in proportion to the backlog or the
// table's history; one bulk submit of 20,000 jobs once ran at a quarter of its speed so.
// Generic plans are the ones a prepared statement keeps, so those are the ones checked; and
// the hub's own connections plan every run afresh, so a plan made while the table was empty
// is never the one a full table runs (the last block).
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../hub-core/src/adapters/sql/migrate.ts';
import { pgClient } from '../../hub-core/src/adapters/sql/pg-client.ts';
import { openJobStore, SqlJobStore } from '../../hub-core/src/adapters/sql/sql-job-store.ts';
import { SQL } from '../../hub-core/src/adapters/sql/statements.ts';
import { createTestDatabase, requireServices } from '../harness/services.ts';

const ROWS = 20_000;

/** Arguments for the one-job claim and result write, on job `id`: each block asks for their plans. */
const ONE_JOB_ARGS = {
  claimQueuedJob: (id: string) => [id, 'w1', 'h1', 0, randomUUID(), null, new Date().toISOString(), new Date().toISOString()],
  finishJob: (id: string) => [id, randomUUID(), 'succeeded', '{"ok":true}', null, new Date().toISOString(), 'w1'],
};

describe.skipIf(!requireServices(['postgres']))('job statements by id use the primary key alone (by idempotency key, that index)', () => {
  let store: SqlJobStore;
  let client: pg.Client;
  let drop = async () => {};

  beforeAll(async () => {
    const db = await createTestDatabase();
    drop = db.drop;
    store = await openJobStore({ databaseUrl: db.url }); // runs the migrations
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
    // Statistics change only when this test says so.
    await client.query('ALTER TABLE jobs SET (autovacuum_enabled = false)');
    await client.query(`INSERT INTO jobs (id, kind, spec, status, created_at) SELECT gen_random_uuid(), 'sleep', '{}', 'queued', now() FROM generate_series(1, ${ROWS})`);
  });
  afterAll(async () => {
    await client?.end();
    await store?.close();
    await drop();
  });

  /** The plan of `statement` run with `args`, as text: the generic one a prepared statement keeps, or (`force_custom_plan`) the one made for these args. */
  async function planOf(statement: string, args: unknown[], mode: 'force_generic_plan' | 'force_custom_plan' = 'force_generic_plan'): Promise<string> {
    const name = `p_${randomUUID().replace(/-/g, '')}`;
    await client.query('BEGIN');
    try {
      await client.query(`SET LOCAL plan_cache_mode = ${mode}`);
      await client.query(`PREPARE ${name} AS ${statement}`);
      const literals = args.map((a) => (a === null ? 'NULL' : client.escapeLiteral(String(a))));
      const rows = (await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE ${name}(${literals.join(', ')})`)).rows;
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    } finally {
      await client.query('ROLLBACK');
    }
  }

  async function plans(): Promise<Record<string, string>> {
    const ids = (await client.query<{ id: string }>('SELECT id FROM jobs LIMIT 8')).rows.map((r) => r.id);
    const claims = JSON.stringify(ids.map((id, lane) => ({ id, worker_id: 'w1', hub_id: 'h1', lane, session_id: randomUUID(), novnc_url: null, assigned_at: new Date(), deadline_at: new Date() })));
    const finishes = JSON.stringify(ids.map((id) => ({ id, session_id: randomUUID(), worker_id: 'w1', status: 'succeeded', result: { ok: true }, error: null, finished_at: new Date() })));
    return {
      claimQueuedJobs: await planOf(SQL.claimQueuedJobs, [claims]),
      claimQueuedJob: await planOf(SQL.claimQueuedJob, ONE_JOB_ARGS.claimQueuedJob(ids[0])),
      finishJobs: await planOf(SQL.finishJobs, [finishes]),
      finishJob: await planOf(SQL.finishJob, ONE_JOB_ARGS.finishJob(ids[0])),
      unclaimJob: await planOf(SQL.unclaimJob, [ids[0], randomUUID(), new Date().toISOString()]),
      unclaimJobOfWorker: await planOf(SQL.unclaimJobOfWorker, [ids[0], randomUUID(), new Date().toISOString(), 'w1']),
      cancelJob: await planOf(SQL.cancelJob, [ids[0], new Date().toISOString()]),
      failQueuedJob: await planOf(SQL.failQueuedJob, [ids[0], 'queued timeout', new Date().toISOString()]),
      failRunningJob: await planOf(SQL.failRunningJob, [ids[0], 'timeout', new Date().toISOString(), randomUUID()]),
      markReleased: await planOf(SQL.markReleased, [ids[0], new Date().toISOString()]),
      forgetIdempotencyKey: await planOf(SQL.forgetIdempotencyKey, [ids[0], new Date().toISOString()]),
    };
  }

  /** Looked up by idempotency key: through that key's index, never a scan of the table or of the whole index per key. */
  async function keyPlan(): Promise<string> {
    return planOf(SQL.jobsByIdempotencyKeys, [JSON.stringify(['k-1', 'k-2', 'k-3'])]);
  }

  function expectKeyIndex(plan: string): void {
    expect(plan).not.toContain('Seq Scan');
    expect(plan).toMatch(/Index Cond: \(idempotency_key = ANY/);
  }

  function expectKeyOnly(all: Record<string, string>): void {
    for (const [name, plan] of Object.entries(all)) {
      expect({ name, seqScan: plan.includes('Seq Scan on jobs') }).toEqual({ name, seqScan: false });
      expect({ name, otherIndex: plan.match(/jobs_(?!pkey)[a-z_]+/)?.[0] ?? null }).toEqual({ name, otherIndex: null });
      expect(plan).toContain('jobs_pkey');
    }
  }

  it('keeps no index on jobs that another one makes redundant (a leading prefix of it, same predicate): each costs every insert and status update an entry', async () => {
    const defs = (await client.query<{ name: string; def: string; uniq: boolean }>(`SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS def, i.indisunique AS uniq FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = 'jobs'::regclass`)).rows;
    const parsed = defs.map((d) => {
      const m = /USING btree \((.*?)\)(?: WHERE (.*))?$/.exec(d.def);
      return { name: d.name, uniq: d.uniq, cols: m ? m[1].split(', ') : [], where: m?.[2] ?? '' };
    });
    expect(parsed.map((p) => p.name)).toContain('jobs_status_created_id');
    const redundant = parsed.filter((a) => !a.uniq && a.cols.length > 0 && parsed.some((b) => b !== a && b.where === a.where && b.cols.length > a.cols.length && a.cols.every((c, i) => b.cols[i] === c)));
    expect(redundant.map((r) => r.name)).toEqual([]);
    // A page of one status is still served by an index, newest first (a plan for the status
    // asked: the generic one cannot drop the statement's `$1 IS NULL OR`, and Postgres keeps the custom one).
    const plan = await planOf(SQL.listJobs, ['succeeded', null, null, 50], 'force_custom_plan');
    expect(plan).toContain('jobs_status_created_id');
  });

  it(`with no statistics on ${ROWS} queued jobs`, async () => {
    expectKeyOnly(await plans());
  });

  it(`with statistics that count ${ROWS} queued jobs`, async () => {
    await client.query('ANALYZE jobs');
    expectKeyOnly(await plans());
  });

  it('with statistics taken while every job was queued, after one worker ran them all', async () => {
    await client.query('ANALYZE jobs');
    await client.query(`UPDATE jobs SET status = 'succeeded', worker_id = 'w1', session_id = gen_random_uuid()::text, finished_at = now()`);
    expectKeyOnly(await plans());
    // and once the statistics catch up: most rows finished, few queued.
    await client.query('ANALYZE jobs');
    expectKeyOnly(await plans());
  });

  it('looks jobs up by idempotency key through its index, with no keys in the statistics and with every row keyed', async () => {
    expectKeyIndex(await keyPlan());
    await client.query(`UPDATE jobs SET idempotency_key = 'k-' || id`);
    expectKeyIndex(await keyPlan());
    await client.query('ANALYZE jobs');
    expectKeyIndex(await keyPlan());
  });
});

describe.skipIf(!requireServices(['postgres']))("the hub's connection, its statements first run on an empty jobs table", () => {
  // Postgres keeps a named statement's generic plan from its sixth run on, and until
  // autovacuum's first ANALYZE nothing replaces it: one made on an empty table scanned the
  // whole table for every batch claim and result write, ~3x Postgres's CPU a job on a bulk
  // submit of 10,000, and sorted the whole table for every page of GET /jobs or of a worker's
  // jobs. Those statements are planned at every run (PLANNED_PER_RUN, sql-client.ts); the
  // ones on one id keep theirs, which must be the primary key.
  it('keeps no plan for a list of jobs, and finds them through the primary key once the table holds 20,000 rows', async () => {
    const db = await createTestDatabase();
    const sql = pgClient(db.url, { max: 1 }); // one connection: the one that ran the statements is the one asked
    const filler = new pg.Client({ connectionString: db.url });
    try {
      await migrate(sql);
      await filler.connect();
      // Before the statements run: an ALTER TABLE would drop the plans they keep.
      await filler.query('ALTER TABLE jobs SET (autovacuum_enabled = false)');
      const store = new SqlJobStore(sql);
      const now = new Date();
      const claim = { workerId: 'w1', hubId: 'h1', lane: 0, assignmentId: randomUUID(), novncUrl: null, now, deadlineAt: now };
      const finish = { assignmentId: randomUUID(), workerId: 'w1', status: 'succeeded' as const, result: { ok: true }, error: null, now };
      const single = randomUUID();
      for (let i = 0; i < 8; i++) {
        expect(await store.claimQueuedJobs([randomUUID(), randomUUID()].map((id) => ({ id, claim })))).toEqual([]);
        expect(await store.finishJobs([randomUUID(), randomUUID()].map((id) => ({ id, finish })))).toEqual([]);
        expect(await store.jobsByIdempotencyKeys(['k-1', 'k-2'])).toEqual([]);
        expect(await store.claimQueuedJob(single, claim)).toBeUndefined();
        expect(await store.finishJob(single, finish)).toBeUndefined();
        expect(await store.listJobs({ limit: 50 })).toEqual([]);
        expect(await store.workerRecord.jobsOf('w1', 50)).toEqual([]);
      }
      await filler.query(`INSERT INTO jobs (id, kind, spec, status, created_at) SELECT gen_random_uuid(), 'sleep', '{}', 'queued', now() FROM generate_series(1, 20000)`);
      const ids = (await filler.query<{ id: string }>('SELECT id FROM jobs LIMIT 9')).rows.map((r) => r.id);
      // What the session keeps: the one-id statements, each with its generic plan.
      const kept = await sql.query<{ name: string; statement: string; generic_plans: number }>('SELECT name, statement, generic_plans::int AS generic_plans FROM pg_prepared_statements WHERE generic_plans > 0');
      expect(kept.filter((k) => /jsonb_to_recordset|jsonb_array_elements|ORDER BY created_at DESC, id DESC/.test(k.statement)).map((k) => k.name)).toEqual([]);
      expect(kept.map((k) => k.name)).toEqual(expect.arrayContaining(['claimQueuedJob', 'finishJob']));
      for (const name of ['claimQueuedJob', 'finishJob'] as const) {
        const args = ONE_JOB_ARGS[name](ids[8]);
        const plan = (await sql.query<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE "${name}"(${args.map((a) => (a === null ? 'NULL' : filler.escapeLiteral(String(a)))).join(', ')})`)).map((r) => r['QUERY PLAN']).join('\n');
        expect({ name, seqScan: plan.includes('Seq Scan on jobs') }).toEqual({ name, seqScan: false });
      }
      // And the list statements, run now, still claim and finish what they are given.
      const claimed = await store.claimQueuedJobs(ids.slice(0, 8).map((id, lane) => ({ id, claim: { ...claim, lane, assignmentId: `a-${id}` } })));
      expect(claimed.map((r) => r.id).sort()).toEqual(ids.slice(0, 8).sort());
      const finished = await store.finishJobs(ids.slice(0, 8).map((id) => ({ id, finish: { ...finish, assignmentId: `a-${id}` } })));
      expect(finished.map((r) => r.status)).toEqual(Array(8).fill('succeeded'));
    } finally {
      await filler.end().catch(() => {});
      await sql.close();
      await db.drop();
    }
  });
});
