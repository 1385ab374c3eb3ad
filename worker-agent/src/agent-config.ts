// The worker's own PAPRIKA_* settings, read once and checked here, apart from the hub's config:
// a worker reads only the variables below, so nothing meant for a hub on the same host (a
// DATABASE_URL, a bind address, a URL rule) can stop it. The parsing rules are the ones the hub
// uses for the variables both read (paprika/wire's env helpers).
import path from 'node:path';
import { ConfigError, countVar, flagVar, logLevelVar, MAX_FRAME_BYTES, numberVar, secondsVar, stringVar, type Env } from 'paprika/wire';

export { ConfigError } from 'paprika/wire';

export interface AgentConfig {
  /** PAPRIKA_LANE_RECYCLE_JOBS: a lane's Chrome is restarted after this many jobs/sessions. */
  readonly laneRecycleJobs: number;
  /** PAPRIKA_LANE_MAX_RSS_MB: … or once its process tree's RSS passes this. */
  readonly laneMaxRssMb: number;
  /** PAPRIKA_SHARED_CHROME: the lanes share one Chrome (as `--shared-chrome`). */
  readonly sharedChrome: boolean;
  /** PAPRIKA_LOG_LEVEL. */
  readonly logLevel: string;
  /** PAPRIKA_CHROME_PATH: the Chrome to run when --chrome is not given. */
  readonly chromePath: string | undefined;
  /** PAPRIKA_DATA_DIR (./.paprika): where the credential file lives when --data-dir is not given. */
  readonly dataDir: string;
  /** PAPRIKA_WORKER_TOKEN: the enrollment token when --token is not given. */
  readonly workerToken: string | undefined;
  /** PAPRIKA_HEARTBEAT_S: the heartbeat period until the hub's `welcome` says otherwise. */
  readonly heartbeatS: number;
  /** PAPRIKA_DISK_MAX_PCT: above this disk use the worker reports itself not ready. */
  readonly diskMaxPct: number;
  /** PAPRIKA_MAX_RESULT_BYTES: a job's result (value and assets, as sent) past this is reported `failed: result too large`. */
  readonly maxResultBytes: number;
  /** PAPRIKA_CDP_MAX_DISK_MB: a CDP client whose browser profile passes this on disk is ended. */
  readonly cdpMaxDiskMb: number;
}

function resultCap(env: Env): number {
  const n = countVar(env, 'PAPRIKA_MAX_RESULT_BYTES', 8 * 1024 * 1024);
  // A frame past the link's limit is refused by the hub: a cap above it could only fail later.
  if (n > MAX_FRAME_BYTES) throw new ConfigError('PAPRIKA_MAX_RESULT_BYTES', `at most ${MAX_FRAME_BYTES} (the link's frame limit), got ${n}`);
  return n;
}

export function loadAgentConfig(env: Env = process.env): AgentConfig {
  return Object.freeze({
    laneRecycleJobs: countVar(env, 'PAPRIKA_LANE_RECYCLE_JOBS', 100),
    laneMaxRssMb: countVar(env, 'PAPRIKA_LANE_MAX_RSS_MB', 1024),
    sharedChrome: flagVar(env, 'PAPRIKA_SHARED_CHROME'),
    logLevel: logLevelVar(env, 'PAPRIKA_LOG_LEVEL'),
    chromePath: stringVar(env, 'PAPRIKA_CHROME_PATH'),
    dataDir: path.resolve(stringVar(env, 'PAPRIKA_DATA_DIR') ?? './.paprika'),
    workerToken: stringVar(env, 'PAPRIKA_WORKER_TOKEN'),
    heartbeatS: secondsVar(env, 'PAPRIKA_HEARTBEAT_S', 15),
    diskMaxPct: numberVar(env, 'PAPRIKA_DISK_MAX_PCT', 90, { max: 100 }),
    maxResultBytes: resultCap(env),
    cdpMaxDiskMb: countVar(env, 'PAPRIKA_CDP_MAX_DISK_MB', 1024),
  });
}
