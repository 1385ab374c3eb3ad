// Prometheus metrics for one hub (GET /metrics). A registry per hub, so several hubs in one
// process (tests, the Electron app) do not share counters.
import client from 'prom-client';

let processRegistry: client.Registry | undefined;

/**
 * Node's own figures (process_cpu_seconds_total, heap, event loop, GC): one set per process,
 * started once, since they describe the process and their GC observer is never stopped.
 */
function processMetrics(): client.Registry {
  if (!processRegistry) {
    processRegistry = new client.Registry();
    client.collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export function createMetrics() {
  processMetrics();
  const registry = new client.Registry();
  const counter = (name: string, help: string, labelNames: string[] = []) => new client.Counter({ name, help, labelNames, registers: [registry] });
  const gauge = (name: string, help: string) => new client.Gauge({ name, help, registers: [registry] });
  return {
    registry,
    contentType: registry.contentType,
    /** The exposition text: this hub's metrics, then the process's. */
    text: async () => (await registry.metrics()) + '\n' + (await processMetrics().metrics()),
    jobsSubmitted: counter('paprika_jobs_submitted_total', 'Jobs accepted by POST /jobs'),
    assignments: counter('paprika_assignments_total', 'Jobs sent to a worker', ['via']),
    results: counter('paprika_job_results_total', 'Terminal results reported by workers', ['status']),
    rejections: counter('paprika_job_rejections_total', 'Assignments a worker refused', ['reason']),
    redriveAssigned: counter('paprika_redrive_assigned_total', 'Queued jobs the redrive loop assigned'),
    reconcilerActions: counter('paprika_reconciler_actions_total', 'Jobs failed by the stale-job reconciler', ['reason']),
    relinkOrphans: counter('paprika_relink_orphans_total', 'Running jobs a worker no longer held when it linked: failed (fresh process) or requeued (lost with the old link)', ['outcome']),
    laneRecycles: counter('paprika_lane_recycles_total', "Worker lanes whose Chrome was restarted, by reason: jobs (PAPRIKA_LANE_RECYCLE_JOBS), rss (PAPRIKA_LANE_MAX_RSS_MB), crash", ['reason']),
    helloSockets: counter('paprika_link_hello_sockets_total', 'Worker-link sockets awaiting their hello that were cut to make room (evicted: silent the longest) or turned away (refused: every slot held a hello being checked)', ['outcome']),
    forwards: counter('paprika_forwards_total', 'Requests forwarded to a peer hub', ['route', 'outcome']),
    forwardSeconds: new client.Histogram({ name: 'paprika_forward_seconds', help: 'Hub-to-hub forward latency', registers: [registry], buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 60] }),
    queueDepth: gauge('paprika_queue_depth', 'Queued jobs (last sample)'),
    fleetSize: gauge('paprika_fleet_workers', 'Live workers in the fleet view (last read)'),
    fleetAccepting: gauge('paprika_fleet_accepting_workers', 'Workers that take work: alive, active, reporting, disk below the limit (last read)'),
    fleetCapacity: gauge('paprika_fleet_capacity_lanes', 'Lanes of the workers that take work (last read)'),
    fleetInFlight: gauge('paprika_fleet_in_flight', 'Jobs, sessions and clients holding lanes of the workers that take work (last read)'),
    cdpOpen: gauge('paprika_cdp_connections_open', 'CDP clients (GET /cdp) this hub splices now, its own lanes and proxied to peers'),
    cdpOpened: counter('paprika_cdp_connections_opened_total', 'CDP clients this hub connected to a browser', ['via']),
    cdpRefused: counter('paprika_cdp_connections_refused_total', 'CDP connects refused before the upgrade, by reason', ['reason']),
    cdpSeconds: new client.Histogram({ name: 'paprika_cdp_connection_seconds', help: 'How long CDP clients stayed connected', registers: [registry], buckets: [1, 5, 30, 60, 300, 900, 1800, 3600] }),
    localWorkers: gauge('paprika_local_workers', 'Workers linked to this hub'),
  };
}

export type HubMetrics = ReturnType<typeof createMetrics>;
