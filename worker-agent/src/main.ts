// `paprika worker`: flags → a running agent. Also the entry of the single-file bundle.
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pino, { type Logger } from 'pino';
import { digitsValue } from 'paprika/wire';
import { loadAgentConfig, type AgentConfig } from './agent-config.ts';
import { WorkerAgent } from './agent.ts';
import type { LanePool } from './lanes/lane.ts';
import { simulatedPool } from './lanes/simulated-lane.ts';
import { ViewKeyring } from './live-view/view-access.ts';
import { validViewBind } from './live-view/view-bind.ts';

export class UsageError extends Error {}

export const WORKER_USAGE = `usage: paprika worker --hub URL [--lanes M] [--single-chrome | --shared-chrome] [--chrome PATH]
                      [--simulate-lanes N [--simulate-site]] [--lan-ip IP] [--token T] [--novnc-base URL]
                      [--worker-id ID] [--data-dir DIR] [--view-bind ADDR] [--view-port N]
  --lanes M          Chrome lanes, each running one job at a time (default 2; 1 with --single-chrome)
  --chrome PATH      the Chrome or Chromium to run (default: PAPRIKA_CHROME_PATH, then puppeteer's
                     download, then /usr/bin/chromium)
  --token T          the hub's PAPRIKA_WORKER_TOKEN, for the first registration (also PAPRIKA_WORKER_TOKEN)
  --shared-chrome    the lanes share one Chrome (each job still in a fresh browser context):
                     less memory per lane, but a Chrome crash or hang fails every lane's running
                     job, not one (also PAPRIKA_SHARED_CHROME=1)
  --view-bind ADDR   where the lane live view listens (default: --lan-ip if this host owns it,
                     else 127.0.0.1); 0.0.0.0 or :: listens on every interface
  --view-port N      the live view's port (default: a free port, another at every start), for a
                     firewall rule that must name it`;

export interface WorkerFlags {
  hub: string;
  lanes: number;
  singleChrome: boolean;
  /** `--shared-chrome`; PAPRIKA_SHARED_CHROME=1 turns it on too (buildPool). */
  sharedChrome?: boolean;
  chrome?: string;
  simulateLanes?: number;
  /** Simulated lanes also fetch http://sim.invalid/ (fault runs: results too large, unstorable text). */
  simulateSite?: boolean;
  lanIp: string;
  token?: string;
  novncBase?: string;
  workerId?: string;
  /** Where the credential file lives; default PAPRIKA_DATA_DIR (./.paprika). */
  dataDir?: string;
  viewBind?: string;
  /** `--view-port N`: the live view's port (default 0: any free port). */
  viewPort?: number;
}

function positiveInt(flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = digitsValue(raw);
  if (!Number.isInteger(n) || n < 1 || n > 256) throw new UsageError(`--${flag} expects a whole number from 1 to 256, got ${JSON.stringify(raw)}`);
  return n;
}

export function parseWorkerFlags(argv: string[]): WorkerFlags {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      options: {
        hub: { type: 'string' },
        lanes: { type: 'string' },
        'single-chrome': { type: 'boolean' },
        'shared-chrome': { type: 'boolean' },
        chrome: { type: 'string' },
        'simulate-lanes': { type: 'string' },
        'simulate-site': { type: 'boolean' },
        'lan-ip': { type: 'string' },
        token: { type: 'string' },
        'novnc-base': { type: 'string' },
        'worker-id': { type: 'string' },
        'data-dir': { type: 'string' },
        'view-bind': { type: 'string' },
        'view-port': { type: 'string' },
      },
    }));
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${WORKER_USAGE}`);
  }
  if (!values.hub) throw new UsageError(`--hub URL is required (e.g. --hub http://127.0.0.1:8080)\n${WORKER_USAGE}`);
  try {
    const u = new URL(values.hub);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
  } catch {
    throw new UsageError(`--hub expects an http(s) URL, got ${JSON.stringify(values.hub)}`);
  }
  const lanIp = values['lan-ip'] ?? detectLanIp();
  if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(lanIp) || lanIp.split('.').some((o) => Number(o) > 255)) throw new UsageError(`--lan-ip expects an IPv4 address, got ${JSON.stringify(lanIp)}`);
  const simulateLanes = positiveInt('simulate-lanes', values['simulate-lanes']);
  const lanes = positiveInt('lanes', values.lanes) ?? 2;
  const viewBind = values['view-bind'];
  if (viewBind !== undefined && !validViewBind(viewBind)) throw new UsageError(`--view-bind expects an IP address (e.g. 10.0.0.5, or 0.0.0.0 for every interface), got ${JSON.stringify(viewBind)}`);
  let viewPort: number | undefined;
  if (values['view-port'] !== undefined) {
    viewPort = digitsValue(values['view-port']);
    if (!Number.isInteger(viewPort) || viewPort < 1 || viewPort > 65535) throw new UsageError(`--view-port expects a port number (1-65535), got ${JSON.stringify(values['view-port'])}`);
  }
  if (values['single-chrome'] && simulateLanes) throw new UsageError('--single-chrome and --simulate-lanes exclude each other');
  if (values['shared-chrome'] && (values['single-chrome'] || simulateLanes)) throw new UsageError('--shared-chrome excludes --single-chrome and --simulate-lanes');
  const workerId = values['worker-id'];
  if (workerId !== undefined && !/^[A-Za-z0-9_-]{1,100}$/.test(workerId)) throw new UsageError(`--worker-id expects letters, digits, _ or - (at most 100), got ${JSON.stringify(workerId)}`);
  return { hub: values.hub, lanes: values['single-chrome'] ? 1 : lanes, singleChrome: Boolean(values['single-chrome']), sharedChrome: Boolean(values['shared-chrome']), chrome: values.chrome, simulateLanes, simulateSite: Boolean(values['simulate-site']), lanIp, token: values.token, novncBase: values['novnc-base'], workerId, dataDir: values['data-dir'], viewBind, viewPort };
}

export function detectLanIp(): string {
  for (const addrs of Object.values(os.networkInterfaces())) {
    for (const a of addrs ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '127.0.0.1';
}

/** The pool, and the keyring its live view checks tokens with: give it to the agent, which sets it on welcome. */
export async function buildPool(flags: WorkerFlags, chromePathFromEnv: string | undefined, log?: Logger, agentConfig: AgentConfig = loadAgentConfig({})): Promise<{ pool: LanePool; stopExtras: () => Promise<void>; viewKeys: ViewKeyring }> {
  const viewKeys = new ViewKeyring();
  if (flags.simulateLanes) return { pool: simulatedPool(flags.simulateLanes, `sim://${flags.lanIp}`, { site: flags.simulateSite }), stopExtras: async () => {}, viewKeys };
  const { startChromePool } = await import('./chrome/start-chrome-pool.ts');
  const built = await startChromePool({
    lanes: flags.lanes,
    singleChrome: flags.singleChrome,
    sharedChrome: Boolean(flags.sharedChrome) || agentConfig.sharedChrome,
    chromePath: flags.chrome ?? chromePathFromEnv,
    lanIp: flags.lanIp,
    novncBase: flags.novncBase,
    viewBind: flags.viewBind,
    viewPort: flags.viewPort,
    viewKeys,
    log,
    hubUrl: flags.hub,
    recycleJobs: agentConfig.laneRecycleJobs,
    maxRssMb: agentConfig.laneMaxRssMb,
  });
  return { ...built, viewKeys };
}

export async function runWorker(argv: string[], env: Record<string, string | undefined> = process.env): Promise<WorkerAgent> {
  const flags = parseWorkerFlags(argv);
  const config = loadAgentConfig(env);
  // Synchronous: the log is the record of what this worker ran, and must survive a SIGKILL.
  const log = pino({ level: config.logLevel, base: { worker: flags.lanIp } }, pino.destination({ dest: 1, sync: true }));
  const { pool, stopExtras, viewKeys } = await buildPool(flags, config.chromePath, log, config);
  const dataDir = flags.dataDir ? path.resolve(flags.dataDir) : config.dataDir;
  const agent = new WorkerAgent({
    hubUrl: flags.hub,
    pool,
    viewKeys,
    lanIp: flags.lanIp,
    workerId: flags.workerId,
    dataDir,
    token: flags.token ?? config.workerToken,
    heartbeatS: config.heartbeatS,
    diskMaxPct: config.diskMaxPct,
    maxResultBytes: config.maxResultBytes,
    cdpMaxDiskBytes: config.cdpMaxDiskMb * 1024 * 1024,
    log,
    // The hub refused the stored credential: nothing this process can do fixes it.
    onFatal: (err) => {
      console.error(`paprika worker: ${err.message}`);
      void agent.stop(0).catch(() => {}).then(stopExtras).finally(() => process.exit(1));
    },
  });
  let shuttingDown: Promise<never> | undefined;
  const shutdown = async (signal: string): Promise<never> => {
    log.info({ signal }, 'stopping: finishing running jobs');
    await agent.stop(30_000).catch(() => {});
    await stopExtras();
    process.exit(0);
  };
  process.once('SIGTERM', () => void (shuttingDown = shutdown('SIGTERM')));
  process.once('SIGINT', () => void (shuttingDown = shutdown('SIGINT')));
  try {
    await agent.start();
  } catch (err) {
    // A signal stopped the start (registration still retrying): that stop ends the lanes and
    // exits 0. Throwing here exited 1 ("agent stopped") before the lanes were down.
    if (shuttingDown) await shuttingDown;
    // Refused enrollment: leave no Chrome behind.
    await agent.stop(0).catch(() => {});
    await stopExtras();
    throw err;
  }
  log.info({ worker_id: agent.workerId, lanes: pool.lanes.length, hub: flags.hub }, 'worker started');
  return agent;
}

// Run directly (the single-file bundle: `node paprika-worker.mjs --hub …`), start the worker.
if (process.argv[1] && import.meta.url === (await import('node:url')).pathToFileURL(process.argv[1]).href) {
  const argv = process.argv.slice(2);
  // As `paprika worker --help` does: the usage, exit 0, nothing started.
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(WORKER_USAGE);
    process.exit(0);
  }
  runWorker(argv).catch((err: unknown) => {
    console.error(`paprika worker: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(err instanceof UsageError ? 2 : 1);
  });
}
