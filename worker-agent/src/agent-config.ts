// The worker's own PAPRIKA_* settings (lane recycling), read once and checked here, apart from
// the hub's config: a worker does not need to validate the hub's variables to run lanes.
export interface AgentConfig {
  /** PAPRIKA_LANE_RECYCLE_JOBS: a lane's Chrome is restarted after this many jobs/sessions. */
  readonly laneRecycleJobs: number;
  /** PAPRIKA_LANE_MAX_RSS_MB: … or once its process tree's RSS passes this. */
  readonly laneMaxRssMb: number;
}

export class AgentConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'AgentConfigError';
  }
}

function positiveInt(env: Record<string, string | undefined>, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < 1) throw new AgentConfigError(name, `expected a whole number of at least 1, got ${JSON.stringify(env[name])}`);
  return n;
}

export function loadAgentConfig(env: Record<string, string | undefined> = process.env): AgentConfig {
  return Object.freeze({
    laneRecycleJobs: positiveInt(env, 'PAPRIKA_LANE_RECYCLE_JOBS', 100),
    laneMaxRssMb: positiveInt(env, 'PAPRIKA_LANE_MAX_RSS_MB', 1024),
  });
}
