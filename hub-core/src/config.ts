// Every PAPRIKA_* variable is read here, once, validated and frozen. Nothing else in the
// code base touches process.env: callers receive a Config (SPEC.md § Environment).
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, flagVar, logLevelVar, MAX_AGE_S, numberVar, secondsVar, stringVar, urlVar, type Env } from './wire/env.ts';
import { parseRules, UrlRuleError } from './wire/url-policy.ts';

export { ConfigError };

export interface Config {
  readonly port: number;
  readonly bind: string;
  readonly hubId: string;
  readonly hubUrl: string;
  readonly heartbeatS: number;
  readonly workerTtlS: number;
  readonly hubHeartbeatS: number;
  readonly hubTtlS: number;
  readonly assignWaitS: number;
  readonly forwardTimeoutS: number;
  /** A CDP client with no message either way for this long is closed (GET /cdp; ?idle_s= may ask for less). */
  readonly cdpIdleS: number;
  /** A CDP client's longest connection (?max_s= may ask for less). */
  readonly cdpMaxS: number;
  readonly queueRedriveIntervalS: number;
  readonly queueRedriveDisable: boolean;
  readonly redriveMinAgeS: number;
  readonly reconcileIntervalS: number;
  readonly orphanGraceS: number;
  readonly queuedTimeoutS: number;
  readonly jobTimeoutS: number;
  readonly diskMaxPct: number;
  readonly fleetTimeoutMs: number;
  /** PAPRIKA_REDIS_TIMEOUT_S: every other Redis command fails after this (a stalled Redis never holds a request). */
  readonly redisTimeoutS: number;
  readonly fleetCacheS: number;
  readonly jitterMaxS: number;
  readonly maxQueued: number;
  /** Most jobs one POST /jobs/batch may carry. */
  readonly maxBatch: number;
  /** How long an Idempotency-Key is remembered. */
  readonly idempotencyTtlS: number;
  /** A request body slower than this is cut (slow-body clients hold sockets otherwise). */
  readonly bodyTimeoutS: number;
  /** Assets of jobs older than this are deleted (the asset retention loop). */
  readonly assetRetentionS: number;
  /** An offline worker is forgotten (its registry entry expires) this long after its last heartbeat. */
  readonly workerForgetS: number;
  /** POST /workers/register: per source IP (refill per minute, burst) and for the whole hub. */
  readonly registerPerIpPerMin: number;
  readonly registerBurst: number;
  readonly registerPerMin: number;
  /** Worker-link sockets that have not finished their hello: at most this many on the hub, and per source address. */
  readonly linkPendingMax: number;
  readonly linkPendingPerIp: number;
  readonly apiToken: string | undefined;
  readonly adminToken: string | undefined;
  readonly workerToken: string | undefined;
  readonly peerToken: string | undefined;
  /** PAPRIKA_METRICS_TOKEN: unset leaves /metrics open. */
  readonly metricsToken: string | undefined;
  /** PAPRIKA_INSECURE=1: a non-loopback bind is allowed while a route group has no token. */
  readonly insecure: boolean;
  readonly chromePath: string | undefined;
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  readonly redisUrl: string | undefined;
  readonly s3: S3Config | undefined;
  readonly logLevel: string;
  /** Redis key prefix; `paprika:` in production, per-test prefixes keep tests apart. */
  readonly redisPrefix: string;
  /** PAPRIKA_URL_DENY: egress rules added to the built-in deny list (sent to workers in `welcome`). */
  readonly urlDeny: readonly string[];
  /** PAPRIKA_URL_ALLOW: when set, jobs may reach only these (deny still wins). */
  readonly urlAllow: readonly string[] | null;
}

export interface S3Config {
  readonly endpoint: string;
  readonly bucket: string;
  readonly accessKey: string;
  readonly secretKey: string;
}

/** A comma-separated rule list, checked here so a typo stops the hub with the variable's name. */
function urlRulesVar(env: Env, name: string): string[] | undefined {
  const raw = stringVar(env, name);
  if (raw === undefined) return undefined;
  let rules: string[];
  try {
    rules = parseRules(raw).map((r) => r.text);
  } catch (err) {
    if (err instanceof UrlRuleError) throw new ConfigError(name, `bad rule ${err.message}`);
    throw err;
  }
  // `PAPRIKA_URL_ALLOW=","` would otherwise mean "no allow list": every URL allowed.
  if (rules.length === 0) throw new ConfigError(name, `holds no rule (${JSON.stringify(raw)}); unset it instead`);
  return rules;
}

/** The token variables of the route groups that must all be set before a hub listens beyond loopback. */
export const GROUP_TOKEN_VARS = ['PAPRIKA_API_TOKEN', 'PAPRIKA_ADMIN_TOKEN', 'PAPRIKA_WORKER_TOKEN', 'PAPRIKA_PEER_TOKEN'] as const;

/** 127.0.0.0/8, ::1 and localhost: only this machine can connect. */
export function isLoopbackBind(bind: string): boolean {
  return bind === 'localhost' || bind === '::1' || /^127(\.\d{1,3}){3}$/.test(bind) || /^::ffff:127(\.\d{1,3}){3}$/i.test(bind);
}

export interface ConfigOverrides {
  port?: number;
}

export function loadConfig(env: Env = process.env, overrides: ConfigOverrides = {}): Config {
  const port = overrides.port ?? numberVar(env, 'PAPRIKA_PORT', 8080, { integer: true, max: 65535 });
  const apiToken = stringVar(env, 'PAPRIKA_API_TOKEN');
  const adminToken = stringVar(env, 'PAPRIKA_ADMIN_TOKEN');
  const workerToken = stringVar(env, 'PAPRIKA_WORKER_TOKEN');
  const peerToken = stringVar(env, 'PAPRIKA_PEER_TOKEN');
  const anyToken = Boolean(apiToken || adminToken || workerToken || peerToken);
  const bindSet = stringVar(env, 'PAPRIKA_BIND');
  const bind = bindSet ?? (anyToken ? '0.0.0.0' : '127.0.0.1');
  // An address, not a name: a typo (localhst) read as "a non-loopback name" gave a message about tokens.
  if (net.isIP(bind.replace(/^\[|\]$/g, '')) === 0 && bind !== 'localhost') {
    throw new ConfigError('PAPRIKA_BIND', `expects an IP address to listen on (127.0.0.1, 0.0.0.0, ::, or one of this host's addresses) or localhost, got ${JSON.stringify(bind)}`);
  }
  const insecure = flagVar(env, 'PAPRIKA_INSECURE');
  // No silent open doors: a group without its token is open to everyone who can connect, so
  // listening beyond loopback needs every token, or an explicit PAPRIKA_INSECURE=1.
  const unset = GROUP_TOKEN_VARS.filter((name) => !stringVar(env, name));
  if (unset.length > 0 && !isLoopbackBind(bind) && !insecure) {
    throw new ConfigError(
      'PAPRIKA_BIND',
      `refusing to listen on ${bind}${bindSet ? '' : ' (the default once any token is set)'} while ${unset.join(', ')} ${unset.length === 1 ? 'is' : 'are'} unset (those routes would be open to the network). ` +
        'Set the missing token(s), or PAPRIKA_BIND=127.0.0.1 to stay on this machine, or PAPRIKA_INSECURE=1 to run open on purpose.',
    );
  }

  const s3Endpoint = urlVar(env, 'PAPRIKA_S3_ENDPOINT', ['http:', 'https:']);
  let s3: S3Config | undefined;
  if (s3Endpoint) {
    const bucket = stringVar(env, 'PAPRIKA_S3_BUCKET');
    const accessKey = stringVar(env, 'PAPRIKA_S3_ACCESS_KEY');
    const secretKey = stringVar(env, 'PAPRIKA_S3_SECRET_KEY');
    if (!bucket) throw new ConfigError('PAPRIKA_S3_BUCKET', 'required when PAPRIKA_S3_ENDPOINT is set');
    if (!accessKey) throw new ConfigError('PAPRIKA_S3_ACCESS_KEY', 'required when PAPRIKA_S3_ENDPOINT is set');
    if (!secretKey) throw new ConfigError('PAPRIKA_S3_SECRET_KEY', 'required when PAPRIKA_S3_ENDPOINT is set');
    s3 = { endpoint: s3Endpoint, bucket, accessKey, secretKey };
  }

  const logLevel = logLevelVar(env, 'PAPRIKA_LOG_LEVEL');

  const workerTtlS = secondsVar(env, 'PAPRIKA_WORKER_TTL_S', 120);
  const heartbeatS = secondsVar(env, 'PAPRIKA_HEARTBEAT_S', 15);
  const config: Config = {
    port,
    bind,
    hubId: stringVar(env, 'PAPRIKA_HUB_ID') ?? `hub-${os.hostname()}-${port}`,
    hubUrl: urlVar(env, 'PAPRIKA_HUB_URL', ['http:', 'https:']) ?? `http://127.0.0.1:${port}`,
    heartbeatS,
    workerTtlS,
    hubHeartbeatS: secondsVar(env, 'PAPRIKA_HUB_HEARTBEAT_S', 30),
    hubTtlS: secondsVar(env, 'PAPRIKA_HUB_TTL_S', 90),
    assignWaitS: numberVar(env, 'PAPRIKA_ASSIGN_WAIT_S', 8),
    forwardTimeoutS: secondsVar(env, 'PAPRIKA_FORWARD_TIMEOUT_S', 60),
    cdpIdleS: secondsVar(env, 'PAPRIKA_CDP_IDLE_S', 300),
    cdpMaxS: secondsVar(env, 'PAPRIKA_CDP_MAX_S', 3600),
    queueRedriveIntervalS: secondsVar(env, 'PAPRIKA_QUEUE_REDRIVE_INTERVAL_S', 3),
    queueRedriveDisable: flagVar(env, 'PAPRIKA_QUEUE_REDRIVE_DISABLE'),
    redriveMinAgeS: numberVar(env, 'PAPRIKA_REDRIVE_MIN_AGE_S', 90),
    reconcileIntervalS: secondsVar(env, 'PAPRIKA_RECONCILE_INTERVAL_S', 90),
    orphanGraceS: numberVar(env, 'PAPRIKA_ORPHAN_GRACE_S', 300),
    queuedTimeoutS: secondsVar(env, 'PAPRIKA_QUEUED_TIMEOUT_S', 180),
    jobTimeoutS: secondsVar(env, 'PAPRIKA_JOB_TIMEOUT_S', 180),
    diskMaxPct: numberVar(env, 'PAPRIKA_DISK_MAX_PCT', 90, { max: 100 }),
    fleetTimeoutMs: secondsVar(env, 'PAPRIKA_FLEET_TIMEOUT_MS', 1500, { max: 2 ** 31 - 1 }),
    redisTimeoutS: secondsVar(env, 'PAPRIKA_REDIS_TIMEOUT_S', 2),
    fleetCacheS: numberVar(env, 'PAPRIKA_FLEET_CACHE_S', 60),
    jitterMaxS: numberVar(env, 'PAPRIKA_JITTER_MAX_S', 60),
    maxQueued: numberVar(env, 'PAPRIKA_MAX_QUEUED', 10000, { integer: true }),
    maxBatch: numberVar(env, 'PAPRIKA_MAX_BATCH', 500, { integer: true, min: 1 }),
    idempotencyTtlS: secondsVar(env, 'PAPRIKA_IDEMPOTENCY_TTL_S', 86400, { max: MAX_AGE_S }),
    bodyTimeoutS: secondsVar(env, 'PAPRIKA_BODY_TIMEOUT_S', 30),
    assetRetentionS: secondsVar(env, 'PAPRIKA_ASSET_RETENTION_S', 7 * 86400, { max: MAX_AGE_S }),
    workerForgetS: secondsVar(env, 'PAPRIKA_WORKER_FORGET_S', 86400, { max: MAX_AGE_S }),
    registerPerIpPerMin: numberVar(env, 'PAPRIKA_REGISTER_PER_IP_PER_MIN', 10, { min: 0.001 }),
    registerBurst: numberVar(env, 'PAPRIKA_REGISTER_BURST', 20, { min: 1, integer: true }),
    registerPerMin: numberVar(env, 'PAPRIKA_REGISTER_PER_MIN', 600, { min: 0.001 }),
    linkPendingMax: numberVar(env, 'PAPRIKA_LINK_PENDING_MAX', 256, { min: 1, integer: true }),
    linkPendingPerIp: numberVar(env, 'PAPRIKA_LINK_PENDING_PER_IP', 64, { min: 1, integer: true }),
    apiToken,
    adminToken,
    workerToken,
    peerToken,
    metricsToken: stringVar(env, 'PAPRIKA_METRICS_TOKEN'),
    insecure,
    chromePath: stringVar(env, 'PAPRIKA_CHROME_PATH'),
    dataDir: path.resolve(stringVar(env, 'PAPRIKA_DATA_DIR') ?? './.paprika'),
    databaseUrl: urlVar(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    redisUrl: urlVar(env, 'REDIS_URL', ['redis:', 'rediss:']),
    s3,
    logLevel,
    redisPrefix: stringVar(env, 'PAPRIKA_REDIS_PREFIX') ?? 'paprika:',
    urlDeny: Object.freeze(urlRulesVar(env, 'PAPRIKA_URL_DENY') ?? []),
    urlAllow: urlAllowOrNull(urlRulesVar(env, 'PAPRIKA_URL_ALLOW')),
  };
  if (config.workerTtlS < config.heartbeatS) {
    throw new ConfigError('PAPRIKA_WORKER_TTL_S', `must be at least PAPRIKA_HEARTBEAT_S (${heartbeatS}), got ${workerTtlS}`);
  }
  // Forgetting a worker between two of its heartbeats would drop a live one from the fleet.
  if (config.workerForgetS < config.workerTtlS) {
    throw new ConfigError('PAPRIKA_WORKER_FORGET_S', `must be at least PAPRIKA_WORKER_TTL_S (${workerTtlS}), got ${config.workerForgetS}`);
  }
  return Object.freeze(config);
}

function urlAllowOrNull(rules: string[] | undefined): readonly string[] | null {
  return rules && rules.length > 0 ? Object.freeze(rules) : null;
}
