// The statements that touch jobs by id find them through the primary key, whatever the
// planner's statistics say: none, fresh, or taken when the table looked different. A claim
// planned on a status index (or a seq scan) costs time in proportion to the backlog or the
// table's history; one bulk submit of 20,000 jobs once ran at a quarter of its speed so.
// Generic plans are the ones a prepared statement keeps, so those are the ones checked.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openJobStore, type SqlJobStore } from '../../hub-core/src/adapters/sql/sql-job-store.ts';
import { SQL } from '../../hub-core/src/adapters/sql/statements.ts';
import { createTestDatabase, requireServices } from '../harness/services.ts';

const ROWS = 20_000;

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

  /** The generic plan of `statement` run with `args`, as text. */
  async function genericPlan(statement: string, args: unknown[]): Promise<string> {
    const name = `p_${randomUUID().replace(/-/g, '')}`;
    await client.query('BEGIN');
    try {
      await client.query('SET LOCAL plan_cache_mode = force_generic_plan');
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
      claimQueuedJobs: await genericPlan(SQL.claimQueuedJobs, [claims]),
      claimQueuedJob: await genericPlan(SQL.claimQueuedJob, [ids[0], 'w1', 'h1', 0, randomUUID(), null, new Date().toISOString(), new Date().toISOString()]),
      finishJobs: await genericPlan(SQL.finishJobs, [finishes]),
      finishJob: await genericPlan(SQL.finishJob, [ids[0], randomUUID(), 'succeeded', '{"ok":true}', null, new Date().toISOString(), 'w1']),
      unclaimJob: await genericPlan(SQL.unclaimJob, [ids[0], randomUUID(), new Date().toISOString()]),
      unclaimJobOfWorker: await genericPlan(SQL.unclaimJobOfWorker, [ids[0], randomUUID(), new Date().toISOString(), 'w1']),
      cancelJob: await genericPlan(SQL.cancelJob, [ids[0], new Date().toISOString()]),
      failQueuedJob: await genericPlan(SQL.failQueuedJob, [ids[0], 'queued timeout', new Date().toISOString()]),
      failRunningJob: await genericPlan(SQL.failRunningJob, [ids[0], 'timeout', new Date().toISOString(), randomUUID()]),
      markReleased: await genericPlan(SQL.markReleased, [ids[0], new Date().toISOString()]),
      forgetIdempotencyKey: await genericPlan(SQL.forgetIdempotencyKey, [ids[0], new Date().toISOString()]),
    };
  }

  /** Looked up by idempotency key: through that key's index, never a scan of the table or of the whole index per key. */
  async function keyPlan(): Promise<string> {
    return genericPlan(SQL.jobsByIdempotencyKeys, [JSON.stringify(['k-1', 'k-2', 'k-3'])]);
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
