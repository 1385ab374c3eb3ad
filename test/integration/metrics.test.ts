// GET /metrics counts what the hub did (issue 9): assignments inline and by redrive, results,
// reconciler actions, queue depth and fleet size, on one hub with one single-lane worker.
// (Forward counts and latencies are asserted in test/e2e/multi-hub.test.ts, where peers exist.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimAgent, type SimAgent } from '../harness/agents.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { waitFor } from '../harness/processes.ts';
import { metricValue } from '../harness/prometheus.ts';
import { json, post, patchWorkerStatus } from '../harness/http.ts';


describe('GET /metrics', () => {
  let hub: TestHub;
  let agent: SimAgent;
  beforeAll(async () => {
    hub = await startTestHub({ PAPRIKA_ASSIGN_WAIT_S: '0.2', PAPRIKA_QUEUE_REDRIVE_INTERVAL_S: '0.1', PAPRIKA_REDRIVE_MIN_AGE_S: '30', PAPRIKA_RECONCILE_INTERVAL_S: '0.2', PAPRIKA_QUEUED_TIMEOUT_S: '1', PAPRIKA_HEARTBEAT_S: '0.2' });
    agent = await startSimAgent(hub.url, 1, { heartbeatS: 0.2 });
  });
  afterAll(async () => {
    await agent?.stop();
    await hub?.stop();
  });

  it('counts inline and redrive assignments, results, a queued timeout, and samples queue depth and fleet size', async () => {
    const scrape = () => fetch(`${hub.url}/metrics`).then((r) => r.text());
    const first = await post(`${hub.url}/jobs`, { kind: 'sleep', spec: { ms: 600 } });
    expect(first.status).toBe('running');
    // The lane is busy: this one waits 0.2 s, is released, and redrive sends it when the lane frees.
    const second = await post(`${hub.url}/jobs`, { kind: 'sleep', spec: { ms: 10 } });
    expect(second.status).toBe('queued');
    await waitFor('both succeeded', async () => (await Promise.all([first, second].map((j) => fetch(`${hub.url}/jobs/${j.id}`).then(json)))).every((j) => j.status === 'succeeded'), 5000, 20);

    // A drained worker takes nothing: the next job waits in the queue until the reconciler fails it.
    await patchWorkerStatus(hub.url, agent.workerId, 'drain');
    const third = await post(`${hub.url}/jobs`, { kind: 'sleep', spec: { ms: 10 } });
    await waitFor('queue depth sampled', async () => metricValue(await scrape(), 'paprika_queue_depth') === 1, 3000, 50);
    await waitFor('queued timeout', async () => (await fetch(`${hub.url}/jobs/${third.id}`).then(json)).status === 'failed', 5000, 50);

    const text = await waitFor('queue empty again', async () => {
      const t = await scrape();
      return metricValue(t, 'paprika_queue_depth') === 0 ? t : undefined;
    }, 3000, 50);
    expect(metricValue(text, 'paprika_jobs_submitted_total')).toBe(3);
    expect(metricValue(text, 'paprika_assignments_total', 'via="inline"')).toBe(1);
    expect(metricValue(text, 'paprika_assignments_total', 'via="redrive"')).toBe(1);
    expect(metricValue(text, 'paprika_redrive_assigned_total')).toBe(1);
    expect(metricValue(text, 'paprika_job_results_total', 'status="succeeded"')).toBe(2);
    expect(metricValue(text, 'paprika_reconciler_actions_total', 'reason="queued_timeout"')).toBe(1);
    expect(metricValue(text, 'paprika_local_workers')).toBe(1);
    expect(metricValue(text, 'paprika_fleet_workers')).toBe(1);
    // Node's defaults, for the process behind this hub.
    expect(metricValue(text, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(metricValue(text, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
  });
});
