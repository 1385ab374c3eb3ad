// Prometheus metrics for one hub (GET /metrics). A registry per hub, so several hubs in one
// process (tests, the Electron app) do not share counters.
import client from 'prom-client';

export function createMetrics() {
  const registry = new client.Registry();
  // Node's own figures (process_cpu_seconds_total, nodejs_eventloop_lag_seconds, heap, GC, …).
  client.collectDefaultMetrics({ register: registry });
  const counter = (name: string, help: string, labelNames: string[] = []) => new client.Counter({ name, help, labelNames, registers: [registry] });
  const gauge = (name: string, help: string) => new client.Gauge({ name, help, registers: [registry] });
  return {
    registry,
    jobsSubmitted: counter('paprika_jobs_submitted_total', 'Jobs accepted by POST /jobs'),
    assignments: counter('paprika_assignments_total', 'Jobs sent to a worker', ['via']),
    results: counter('paprika_job_results_total', 'Terminal results reported by workers', ['status']),
    rejections: counter('paprika_job_rejections_total', 'Assignments a worker refused', ['reason']),
    redriveAssigned: counter('paprika_redrive_assigned_total', 'Queued jobs the redrive loop assigned'),
    reconcilerActions: counter('paprika_reconciler_actions_total', 'Jobs failed by the stale-job reconciler', ['reason']),
    relinkOrphans: counter('paprika_relink_orphans_total', 'Running jobs a worker no longer held when it linked: failed (fresh process) or requeued (lost with the old link)', ['outcome']),
    forwards: counter('paprika_forwards_total', 'Requests forwarded to a peer hub', ['route', 'outcome']),
    forwardSeconds: new client.Histogram({ name: 'paprika_forward_seconds', help: 'Hub-to-hub forward latency', registers: [registry], buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 60] }),
    queueDepth: gauge('paprika_queue_depth', 'Queued jobs (last sample)'),
    fleetSize: gauge('paprika_fleet_workers', 'Workers in the fleet view (last read)'),
    localWorkers: gauge('paprika_local_workers', 'Workers linked to this hub'),
  };
}

export type HubMetrics = ReturnType<typeof createMetrics>;
