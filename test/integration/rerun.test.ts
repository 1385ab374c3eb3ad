// `rerun` {job_id}: the worker is sent the earlier job's kind and spec (SPEC "Jobs"), and the
// deadline comes from what runs: the rerun's own timeout_s, else the copied spec's, else
// PAPRIKA_JOB_TIMEOUT_S. The assign message carries kind and spec at the top (HubAssignJob).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encode } from '../../hub-core/src/wire/protocol.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { waitFor } from '../harness/processes.ts';
import { rawLink } from '../harness/raw-link.ts';
import { json, post } from '../harness/http.ts';

describe('rerun', () => {
  let hub: TestHub;
  let link: Awaited<ReturnType<typeof rawLink>>;
  beforeAll(async () => {
    hub = await startTestHub({ PAPRIKA_JOB_TIMEOUT_S: '50' });
    link = await rawLink(hub.url, 'w-rerun');
  });
  afterAll(async () => {
    link?.ws.close();
    await hub?.stop();
  });

  /** Submit, take the assign frame, report success so the lane is free again. */
  async function run(kind: string, spec: Record<string, unknown>): Promise<{ job: any; assign: any; sentAt: number }> {
    const sentAt = Date.now();
    const job = await post(`${hub.url}/jobs`, { kind, spec });
    const assign = await waitFor(`assign of ${job.id}`, async () => link.frames.find((f) => f.type === 'assign' && f.job_id === job.id), 5000, 10);
    link.ws.send(encode({ type: 'job_result', job_id: job.id, assignment_id: assign.assignment_id, status: 'succeeded', result: { ok: true } }));
    await waitFor(`${job.id} succeeded`, async () => (await fetch(`${hub.url}/jobs/${job.id}`).then(json)).status === 'succeeded', 5000, 10);
    return { job, assign, sentAt };
  }

  const deadlineS = (a: { assign: any; sentAt: number }) => (a.assign.deadline - a.sentAt) / 1000;

  it('sends the source kind and spec, with the source timeout_s as deadline', async () => {
    const source = await run('sleep', { ms: 7, timeout_s: 600 });
    expect(source.assign).toMatchObject({ kind: 'sleep', spec: { ms: 7, timeout_s: 600 } });
    expect(source.assign).not.toHaveProperty('job');

    const rerun = await run('rerun', { job_id: source.job.id });
    expect(rerun.assign).toMatchObject({ kind: 'sleep', spec: { ms: 7, timeout_s: 600 } });
    expect(deadlineS(rerun)).toBeGreaterThan(595);
    expect(deadlineS(rerun)).toBeLessThanOrEqual(601);
    const row = await fetch(`${hub.url}/jobs/${rerun.job.id}`).then(json);
    expect(row).toMatchObject({ kind: 'rerun', spec: { job_id: source.job.id }, status: 'succeeded' });
    expect(Date.parse(row.deadline_at)).toBe(rerun.assign.deadline);
  });

  it("lets the rerun's own timeout_s win, through a chain of reruns too", async () => {
    const source = await run('sleep', { ms: 3 });
    expect(deadlineS(source)).toBeGreaterThan(45);
    expect(deadlineS(source)).toBeLessThanOrEqual(51);

    const first = await run('rerun', { job_id: source.job.id, timeout_s: 20 });
    expect(first.assign.spec).toEqual({ ms: 3, timeout_s: 20 });
    expect(deadlineS(first)).toBeLessThanOrEqual(21);
    expect(deadlineS(first)).toBeGreaterThan(15);

    const second = await run('rerun', { job_id: first.job.id, timeout_s: 30 });
    expect(second.assign.spec).toEqual({ ms: 3, timeout_s: 30 });
    expect(deadlineS(second)).toBeGreaterThan(25);

    const inherited = await run('rerun', { job_id: first.job.id });
    expect(inherited.assign.spec).toEqual({ ms: 3, timeout_s: 20 });
    expect(deadlineS(inherited)).toBeLessThanOrEqual(21);
  });

  it('fails a rerun of a job that does not exist, and sends nothing', async () => {
    const before = link.frames.filter((f) => f.type === 'assign').length;
    const job = await post(`${hub.url}/jobs`, { kind: 'rerun', spec: { job_id: '00000000-0000-4000-8000-00000000abcd' } });
    const row = await waitFor('rerun failed', async () => {
      const j = await fetch(`${hub.url}/jobs/${job.id}`).then(json);
      return j.status === 'failed' ? j : undefined;
    }, 10_000, 20);
    expect(row.error).toMatch(/rerun: job 00000000-0000-4000-8000-00000000abcd not found/);
    expect(link.frames.filter((f) => f.type === 'assign').length).toBe(before);
  });
});
