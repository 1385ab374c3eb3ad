// `paprika worker`: flags → a running agent. Also the entry of the single-file bundle.
import os from 'node:os';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { loadConfig } from '../../hub-core/src/config.ts';
import { loadAgentConfig, type AgentConfig } from './agent-config.ts';
import { WorkerAgent } from './agent.ts';
import type { LanePool } from './lanes/lane.ts';
import { simulatedPool } from './lanes/simulated-lane.ts';

export class UsageError extends Error {}

export const WORKER_USAGE = `usage: paprika worker --hub URL [--lanes M] [--single-chrome] [--chrome PATH]
                      [--simulate-lanes N] [--lan-ip IP] [--token T] [--novnc-base URL]`;

export interface WorkerFlags {
  hub: string;
  lanes: number;
  singleChrome: boolean;
  chrome?: string;
  simulateLanes?: number;
  lanIp: string;
  token?: string;
  novncBase?: string;
}

function positiveInt(flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
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
        chrome: { type: 'string' },
        'simulate-lanes': { type: 'string' },
        'lan-ip': { type: 'string' },
        token: { type: 'string' },
        'novnc-base': { type: 'string' },
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
  if (values['single-chrome'] && simulateLanes) throw new UsageError('--single-chrome and --simulate-lanes exclude each other');
  return { hub: values.hub, lanes: values['single-chrome'] ? 1 : lanes, singleChrome: Boolean(values['single-chrome']), chrome: values.chrome, simulateLanes, lanIp, token: values.token, novncBase: values['novnc-base'] };
}

export function detectLanIp(): string {
  for (const addrs of Object.values(os.networkInterfaces())) {
    for (const a of addrs ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '127.0.0.1';
}

export async function buildPool(flags: WorkerFlags, chromePathFromEnv: string | undefined, agentConfig: AgentConfig = loadAgentConfig({})): Promise<{ pool: LanePool; stopExtras: () => Promise<void> }> {
  if (flags.simulateLanes) return { pool: simulatedPool(flags.simulateLanes, `sim://${flags.lanIp}`), stopExtras: async () => {} };
  const { chromeWorkerPool } = await import('./chrome-worker-pool.ts');
  return chromeWorkerPool({
    lanes: flags.lanes,
    singleChrome: flags.singleChrome,
    chromePath: flags.chrome ?? chromePathFromEnv,
    lanIp: flags.lanIp,
    novncBase: flags.novncBase,
    hubUrl: flags.hub,
    recycleJobs: agentConfig.laneRecycleJobs,
    maxRssMb: agentConfig.laneMaxRssMb,
  });
}

export async function runWorker(argv: string[], env: Record<string, string | undefined> = process.env): Promise<WorkerAgent> {
  const flags = parseWorkerFlags(argv);
  const config = loadConfig(env);
  const agentConfig = loadAgentConfig(env);
  // Synchronous: the log is the record of what this worker ran, and must survive a SIGKILL.
  const log = pino({ level: config.logLevel, base: { worker: flags.lanIp } }, pino.destination({ dest: 1, sync: true }));
  const { pool, stopExtras } = await buildPool(flags, config.chromePath, agentConfig);
  const agent = new WorkerAgent({ hubUrl: flags.hub, pool, lanIp: flags.lanIp, token: flags.token ?? config.workerToken, heartbeatS: config.heartbeatS, diskMaxPct: config.diskMaxPct, log });
  const shutdown = async (signal: string) => {
    log.info({ signal }, 'stopping: finishing running jobs');
    await agent.stop(30_000).catch(() => {});
    await stopExtras();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
  await agent.start();
  log.info({ worker_id: agent.workerId, lanes: pool.lanes.length, hub: flags.hub }, 'worker started');
  return agent;
}

// Run directly (the single-file bundle: `node paprika-worker.mjs --hub …`), start the worker.
if (process.argv[1] && import.meta.url === (await import('node:url')).pathToFileURL(process.argv[1]).href) {
  runWorker(process.argv.slice(2)).catch((err: unknown) => {
    console.error(`paprika worker: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(err instanceof UsageError ? 2 : 1);
  });
}
