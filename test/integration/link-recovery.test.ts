// What a worker's link does when things break between hello and result (found by the chaos
// run): a job the worker no longer holds at hello is failed (a fresh process) or queued again
// (a re-link of the same process); a hello the hub cannot serve closes the link so the
// worker tries again; a result the hub could not write is sent again and lands.
import type { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encode } from '../../hub-core/src/wire/protocol.ts';
import { capturedLog, startSimAgent } from '../harness/agents.ts';
import { openJobStore } from '../../hub-core/src/adapters/sql/sql-job-store.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { observeStore, type ObservedStore } from '../harness/observed-store.ts';
import { postgresBinDir, startPrivatePostgres, type PrivatePostgres } from '../harness/private-postgres.ts';
import { waitFor } from '../harness/processes.ts';
import { rawLink } from '../harness/raw-link.ts';
import { json, post } from '../harness/http.ts';

async function closed(ws: WebSocket): Promise<void> {
  if (ws.readyState === ws.CLOSED) return;
  await new Promise((r) => ws.once('close', r));
}

describe('a job the worker no longer holds when it links again', () => {
  let hub: TestHub;
  beforeAll(async () => {
    hub = await startTestHub({ PAPRIKA_REDRIVE_MIN_AGE_S: '30', PAPRIKA_QUEUE_REDRIVE_INTERVAL_S: '0.1' });
  });
  afterAll(async () => {
    await hub?.stop();
  });

  async function runningOn(workerId: string): Promise<{ job: any; assign: any; link: { ws: WebSocket; frames: any[] } }> {
    const link = await rawLink(hub.url, workerId, { fresh: true });
    const job = await post(`${hub.url}/jobs`, { kind: 'sleep', spec: { ms: 60_000 } });
    expect(job).toMatchObject({ status: 'running', worker_id: workerId });
    const assign = await waitFor('assign', async () => link.frames.find((f) => f.type === 'assign' && f.job_id === job.id), 5000, 10);
    return { job, assign, link };
  }

  it('fails it when a fresh process links (it may have been running when the old one died)', async () => {
    const { job, link } = await runningOn('w-fresh');
    link.ws.terminate();
    await closed(link.ws);
    const again = await rawLink(hub.url, 'w-fresh', { fresh: true, jobs: [] });
    const row = await fetch(`${hub.url}/jobs/${job.id}`).then(json);
    expect(row.status).toBe('failed');
    expect(row.error).toMatch(/restarted while holding this job/);
    again.ws.close();
  });

  it('queues it again on a re-link of the same process (it never started), and redrive sends it at once', async () => {
    const { job, assign, link } = await runningOn('w-relink');
    link.ws.terminate();
    await closed(link.ws);
    const again = await rawLink(hub.url, 'w-relink', { fresh: false, jobs: [] });
    // Released, so the 30 s age gate does not hold it back: the same job comes again, as a new assignment.
    const second = await waitFor('assigned again', async () => again.frames.find((f) => f.type === 'assign' && f.job_id === job.id), 5000, 10);
    expect(second.assignment_id).not.toBe(assign.assignment_id);
    // The assignment id is not in the public JSON (it is the worker's key to the run): read the row.
    const row = await hub.hub.store.getJob(job.id);
    expect(row).toMatchObject({ status: 'running', worker_id: 'w-relink', attempts: 2, session_id: second.assignment_id });
    again.ws.close();
  });

  it('keeps it when the worker lists it as held, or has its result pending', async () => {
    const { job, assign, link } = await runningOn('w-keeps');
    link.ws.terminate();
    await closed(link.ws);
    const again = await rawLink(hub.url, 'w-keeps', { fresh: true, jobs: [], results: [{ job_id: job.id, assignment_id: assign.assignment_id }] });
    expect((await fetch(`${hub.url}/jobs/${job.id}`).then(json)).status).toBe('running');
    again.ws.send(encode({ type: 'job_result', job_id: job.id, assignment_id: assign.assignment_id, status: 'succeeded', result: { slept_ms: 1 } }));
    await waitFor('result written', async () => (await fetch(`${hub.url}/jobs/${job.id}`).then(json)).status === 'succeeded', 5000, 10);
    again.ws.close();
  });
});

const havePgBinaries = Boolean(postgresBinDir());
if (!havePgBinaries) {
  if (process.env.CI === 'true') throw new Error('CI=true but the PostgreSQL server binaries are missing (apt-get install postgresql)');
  console.warn('\n!!! SKIPPING link recovery with Postgres down: no PostgreSQL server binaries !!!\n');
}

describe.skipIf(!havePgBinaries)('links while Postgres restarts (a server of the test\'s own)', () => {
  let pgServer: PrivatePostgres;
  let observed: ObservedStore;
  let hub: TestHub;
  beforeAll(async () => {
    pgServer = await startPrivatePostgres();
    observed = observeStore(await openJobStore({ databaseUrl: pgServer.url }));
    hub = await startTestHub({ DATABASE_URL: pgServer.url, PAPRIKA_HEARTBEAT_S: '0.2', PAPRIKA_JOB_TIMEOUT_S: '60' }, { store: observed.store });
  }, 60_000);
  afterAll(async () => {
    await hub?.stop();
    await observed?.store.close();
    await pgServer?.stop();
  });

  it('closes a link whose hello fails, and the worker links as soon as Postgres is back', async () => {
    await pgServer.down('fast');
    const { log, lines } = capturedLog();
    const linking = startSimAgent(hub.url, 1, { heartbeatS: 0.2, log });
    // Refused and retrying: at enrollment (a new worker) or at hello (the hub closes the link).
    const refusals = () => lines.filter((l) => l.msg === 'registration failed; retrying' || l.msg === 'link closed; re-linking');
    await waitFor('the worker refused twice while Postgres is down', async () => refusals().length >= 2, 15_000, 10);
    const early = await fetch(`${hub.url}/admin/workers`).then(json);
    expect(early.workers).toEqual([]);
    await pgServer.start();
    const agent = await linking;
    // It came back through its own short backoff (at most 500 ms in tests), not through its
    // 20 s welcome timeout: the hub closed every link it could not serve.
    expect(lines.map((l) => l.msg)).not.toContain('no welcome from the hub; re-linking');
    await agent.stop();
  });

  it('delivers a result the hub could not write while Postgres was down', async () => {
    const agent = await startSimAgent(hub.url, 1, { heartbeatS: 0.2 });
    const job = await post(`${hub.url}/jobs`, { kind: 'sleep', spec: { ms: 800 } });
    expect(job.status).toBe('running');
    const getFailsBefore = observed.count('getJob', false);
    await pgServer.down('fast');
    await waitFor('the job finished on the worker', async () => agent.agent.runner.inFlight === 0, 5000, 20);
    // The result's write failed, and so did two resends (each re-reads the job first).
    await waitFor('the result and two resends to fail', async () => observed.count('finishJob', false) >= 1 && observed.count('getJob', false) >= getFailsBefore + 2, 15_000, 5);
    await pgServer.start();
    const done = await waitFor('result written', async () => {
      const j = await fetch(`${hub.url}/jobs/${job.id}`).then(json);
      return j.status === 'succeeded' ? j : undefined;
    }, 5000, 50);
    expect(done).toMatchObject({ status: 'succeeded', worker_id: agent.workerId });
    await agent.stop();
  });
});
