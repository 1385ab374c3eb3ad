// bulk dispatch: N no-op jobs (sleep 0 ms) submitted in batches of 100 through POST /jobs/batch
// and awaited until every one is `succeeded` in Postgres, on simulated lanes. Peer: BullMQ
// `addBulk` in batches of 100 on the same Redis, every job awaited as `completed` through
// QueueEvents, with a Worker of the same total concurrency as the lanes. Both in this process.
import { Queue, QueueEvents, Worker } from 'bullmq';
import type { JobRow } from '../hub-core/src/ports/job-store.ts';
import { startSimAgent } from '../test/harness/agents.ts';
import { realBackends, startTestHub } from '../test/harness/hub.ts';
import { REDIS_TEST_URL, uniqueName } from '../test/harness/services.ts';
import type { Figure } from './report.ts';

const BATCH = 100;

/** Resolves once `n` distinct ids were reported done (ids seen before the wait count too). */
function doneCounter() {
  const done = new Set<string>();
  let want = Infinity;
  let resolve = () => {};
  const all = new Promise<void>((r) => (resolve = r));
  return {
    saw(id: string) {
      done.add(id);
      if (done.size >= want) resolve();
    },
    until(n: number) {
      want = n;
      if (done.size >= want) resolve();
      return all;
    },
  };
}

export async function paprikaBulk(o: { jobs: number; agents: number; lanes: number }): Promise<number> {
  const backends = await realBackends();
  const h = await startTestHub({ ...backends.env, PAPRIKA_LOG_LEVEL: 'silent', PAPRIKA_MAX_QUEUED: String(o.jobs * 2) });
  const agents = [];
  for (let i = 0; i < o.agents; i++) agents.push(await startSimAgent(h.url, o.lanes, { heartbeatS: 15 }));
  const run = async (n: number) => {
    const counter = doneCounter();
    const onJob = (j: JobRow) => {
      if (j.status === 'succeeded' || j.status === 'failed') counter.saw(j.id);
    };
    h.hub.events.on('job', onJob);
    const t0 = performance.now();
    for (let i = 0; i < n; i += BATCH) {
      const jobs = Array.from({ length: Math.min(BATCH, n - i) }, () => ({ kind: 'sleep', spec: { ms: 0 } }));
      const res = await fetch(`${h.url}/jobs/batch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jobs }) });
      if (res.status !== 201) throw new Error(`bulk dispatch: POST /jobs/batch answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer().catch(() => {});
    }
    await counter.until(n);
    const ms = performance.now() - t0;
    h.hub.events.off('job', onJob);
    return ms;
  };
  try {
    await run(Math.min(300, o.jobs)); // warm-up
    return (o.jobs / (await run(o.jobs))) * 1000;
  } finally {
    await Promise.all(agents.map((a) => a.stop()));
    await h.stop();
    await backends.drop();
  }
}

export async function bullmqBulk(o: { jobs: number; lanes: number }): Promise<number> {
  const name = uniqueName('bench');
  const connection = { url: REDIS_TEST_URL, maxRetriesPerRequest: null };
  const queue = new Queue(name, { connection });
  const events = new QueueEvents(name, { connection });
  await events.waitUntilReady();
  const worker = new Worker(name, async () => ({ ok: true }), { connection, concurrency: o.lanes });
  await worker.waitUntilReady();
  const run = async (n: number) => {
    const counter = doneCounter();
    const onDone = ({ jobId }: { jobId: string }) => counter.saw(jobId);
    events.on('completed', onDone);
    const t0 = performance.now();
    for (let i = 0; i < n; i += BATCH) {
      const jobs = Array.from({ length: Math.min(BATCH, n - i) }, () => ({ name: 'noop', data: { ms: 0 }, opts: { removeOnComplete: true, removeOnFail: true } }));
      await queue.addBulk(jobs);
    }
    await counter.until(n);
    const ms = performance.now() - t0;
    events.off('completed', onDone);
    return ms;
  };
  try {
    await run(Math.min(300, o.jobs));
    return (o.jobs / (await run(o.jobs))) * 1000;
  } finally {
    await worker.close();
    await events.close();
    await queue.obliterate({ force: true }).catch(() => {});
    await queue.close();
  }
}

/** Alternating runs, best of each side. */
export async function bulkDispatchFigures(o: { jobs: number; agents: number; lanes: number; rounds: number }): Promise<Figure[]> {
  const p: number[] = [];
  const b: number[] = [];
  for (let r = 0; r < o.rounds; r++) {
    p.push(await paprikaBulk(o));
    b.push(await bullmqBulk({ jobs: o.jobs, lanes: o.agents * o.lanes }));
  }
  const extra = { jobs: o.jobs, batch: BATCH, lanes: o.agents * o.lanes, paprika_runs: p, bullmq_runs: b };
  return [{ name: 'bulk dispatch', unit: 'jobs/s', paprika: Math.max(...p), peer: Math.max(...b), peerName: 'BullMQ addBulk', higherIsBetter: true, extra }];
}
