// dispatch: no-op jobs (sleep 0 ms) from HTTP clients through the hub to simulated lanes and
// back to `succeeded` in Postgres, at a fixed client concurrency and lane count. Peer: BullMQ
// (Queue.add → Worker → completed, waited with QueueEvents) on the same Redis, same
// concurrency. Both sides run entirely in this process (clients, hub, agents; Queue, Worker).
import { Queue, QueueEvents, Worker } from 'bullmq';
import type { JobRow } from '../hub-core/src/ports/job-store.ts';
import { startSimAgent } from '../test/harness/agents.ts';
import { realBackends, startTestHub } from '../test/harness/hub.ts';
import { REDIS_TEST_URL, uniqueName } from '../test/harness/services.ts';
import { closedLoop, summary, type Figure } from './report.ts';

export interface DispatchRun {
  jobsPerS: number;
  p50: number;
  p99: number;
}

export async function paprikaDispatch(o: { jobs: number; concurrency: number; agents: number; lanes: number }): Promise<DispatchRun> {
  const backends = await realBackends();
  const h = await startTestHub({ ...backends.env, PAPRIKA_LOG_LEVEL: 'silent', PAPRIKA_ASSIGN_WAIT_S: '8' });
  const agents = [];
  for (let i = 0; i < o.agents; i++) agents.push(await startSimAgent(h.url, o.lanes, { heartbeatS: 15 }));
  // Done = the terminal row is written: the hub emits the event right after the UPDATE returns.
  const waiting = new Map<string, () => void>();
  const early = new Set<string>();
  h.hub.events.on('job', (j: JobRow) => {
    if (j.status !== 'succeeded' && j.status !== 'failed') return;
    const w = waiting.get(j.id);
    if (w) w();
    else early.add(j.id);
  });
  const body = JSON.stringify({ kind: 'sleep', spec: { ms: 0 } });
  const latencies: number[] = [];
  let failed = 0;
  const one = async () => {
    const t0 = performance.now();
    const res = await fetch(`${h.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const job = (await res.json()) as { id: string };
    if (res.status !== 201) failed++;
    if (!early.delete(job.id)) await new Promise<void>((resolve) => waiting.set(job.id, resolve));
    waiting.delete(job.id);
    latencies.push(performance.now() - t0);
  };
  await closedLoop(Math.min(300, o.jobs), o.concurrency, one); // warm-up
  latencies.length = 0;
  const ms = await closedLoop(o.jobs, o.concurrency, one);
  await Promise.all(agents.map((a) => a.stop()));
  await h.stop();
  await backends.drop();
  if (failed > 0) throw new Error(`dispatch: ${failed} POSTs failed`);
  const s = summary(latencies);
  return { jobsPerS: (o.jobs / ms) * 1000, p50: s.p50, p99: s.p99 };
}

export async function bullmqDispatch(o: { jobs: number; concurrency: number; lanes: number }): Promise<DispatchRun> {
  const name = uniqueName('bench');
  const connection = { url: REDIS_TEST_URL, maxRetriesPerRequest: null };
  const queue = new Queue(name, { connection });
  queue.setMaxListeners(o.concurrency * 4);
  const events = new QueueEvents(name, { connection });
  events.setMaxListeners(o.concurrency * 4);
  await events.waitUntilReady();
  const worker = new Worker(name, async () => ({ ok: true }), { connection, concurrency: o.lanes });
  await worker.waitUntilReady();
  // Done = QueueEvents reports `completed` (one listener, like the hub's event above).
  const waiting = new Map<string, () => void>();
  const early = new Set<string>();
  events.on('completed', ({ jobId }) => {
    const w = waiting.get(jobId);
    if (w) w();
    else early.add(jobId);
  });
  const latencies: number[] = [];
  const one = async () => {
    const t0 = performance.now();
    const job = await queue.add('noop', { ms: 0 }, { removeOnComplete: true, removeOnFail: true });
    if (!early.delete(job.id!)) await new Promise<void>((resolve) => waiting.set(job.id!, resolve));
    waiting.delete(job.id!);
    latencies.push(performance.now() - t0);
  };
  await closedLoop(Math.min(300, o.jobs), o.concurrency, one);
  latencies.length = 0;
  const ms = await closedLoop(o.jobs, o.concurrency, one);
  await worker.close();
  await events.close();
  await queue.obliterate({ force: true }).catch(() => {});
  await queue.close();
  const s = summary(latencies);
  return { jobsPerS: (o.jobs / ms) * 1000, p50: s.p50, p99: s.p99 };
}

/** Alternating runs, best of each side (the machine's noise hurts both the same way). */
export async function dispatchFigures(o: { jobs: number; concurrency: number; agents: number; lanes: number; rounds: number }): Promise<Figure[]> {
  const p: DispatchRun[] = [];
  const b: DispatchRun[] = [];
  for (let r = 0; r < o.rounds; r++) {
    p.push(await paprikaDispatch(o));
    b.push(await bullmqDispatch({ jobs: o.jobs, concurrency: o.concurrency, lanes: o.agents * o.lanes }));
  }
  const best = (runs: DispatchRun[]) => runs.reduce((x, y) => (y.jobsPerS > x.jobsPerS ? y : x));
  const pb = best(p);
  const bb = best(b);
  const extra = { jobs: o.jobs, concurrency: o.concurrency, lanes: o.agents * o.lanes, paprika_runs: p, bullmq_runs: b };
  return [
    { name: 'dispatch', unit: 'jobs/s', paprika: pb.jobsPerS, peer: bb.jobsPerS, peerName: 'BullMQ', higherIsBetter: true, extra },
    { name: 'dispatch p50 latency', unit: 'ms', paprika: pb.p50, peer: bb.p50, peerName: 'BullMQ', higherIsBetter: false },
    { name: 'dispatch p99 latency', unit: 'ms', paprika: pb.p99, peer: bb.p99, peerName: 'BullMQ', higherIsBetter: false },
  ];
}
