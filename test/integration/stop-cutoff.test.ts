// A job still running when a worker's stop runs out of grace is cut off: it ends `failed` with
// the reason, not `canceled` (no one canceled it: the console, the SDK and the metrics read a
// client's cancel there). A cancel from the hub still ends `canceled`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobRow } from '../../hub-core/src/ports/job-store.ts';
import { capturedLog, startSimAgent } from '../harness/agents.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { simulatedPool } from '../../worker-agent/src/lanes/simulated-lane.ts';
import { nextEvent, waitFor } from '../harness/wait.ts';

let hub: TestHub;
beforeAll(async () => {
  hub = await startTestHub();
});
afterAll(async () => {
  await hub?.stop();
});

const submit = async (ms: number) => {
  const res = await fetch(`${hub.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'sleep', spec: { ms } }) });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
};
/** A one-lane simulated agent, and a promise of the next job its lane starts running. */
async function agentWithWatchedLane() {
  const pool = simulatedPool(1, 'sim://stop-cutoff');
  const lane = pool.lanes[0];
  const run = lane.runJob.bind(lane);
  let started: (id: string) => void = () => {};
  lane.runJob = (job, ctx) => {
    started(ctx.jobId);
    return run(job, ctx);
  };
  const { log, lines } = capturedLog();
  const agent = await startSimAgent(hub.url, 1, { pool, log });
  /** The status the agent itself reported for a job (its 'job finished' log line). */
  const reported = (id: string) => waitFor(`the agent's result for ${id}`, async () => lines.find((l) => l.msg === 'job finished' && l.job_id === id)?.status as string | undefined);
  return { agent, reported, nextStart: () => new Promise<string>((resolve) => (started = resolve)) };
}
const ended = (id: string) => nextEvent<JobRow>(hub.hub.events, 'job', `job ${id} ended`, (j: JobRow) => j.id === id && j.status !== 'queued' && j.status !== 'running');

describe("a worker's stop", () => {
  it('fails a job it cut off after its grace, naming the stop, and stores it so', async () => {
    const { agent, reported, nextStart } = await agentWithWatchedLane();
    const onLane = nextStart();
    const id = await submit(60_000);
    expect(await onLane).toBe(id);
    expect((await hub.hub.store.getJob(id))?.worker_id).toBe(agent.workerId);
    const end = ended(id);
    await agent.agent.stop(50);
    const job = await end;
    expect(job.status).toBe('failed');
    expect(job.error).toBe('the worker stopped before this job ended: aborted after the 0.05 s a stop gives running jobs');
    expect((await hub.hub.store.getJob(id))?.status).toBe('failed');
    expect(await reported(id)).toBe('failed');
  });

  it('still stores a cancel from the hub as canceled', async () => {
    const { agent, reported, nextStart } = await agentWithWatchedLane();
    try {
      const onLane = nextStart();
      const id = await submit(60_000);
      expect(await onLane).toBe(id);
      const res = await fetch(`${hub.url}/jobs/${id}/cancel`, { method: 'POST' });
      expect(res.status).toBe(200);
      expect((await res.json()) as { status: string }).toMatchObject({ status: 'canceled' });
      expect((await hub.hub.store.getJob(id))?.status).toBe('canceled');
      // The worker's own result says canceled too: only a stop's cut-off is failed.
      expect(await reported(id)).toBe('canceled');
    } finally {
      await agent.stop();
    }
  });
});
