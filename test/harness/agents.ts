// Simulated worker agents for tests: real WorkerAgent instances over real WebSockets, each
// with lanes that run `sleep` jobs without Chrome. In process (fast) or as `paprika worker`
// child processes (for SIGKILL).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino, { type Logger } from 'pino';
import { WorkerAgent } from '../../worker-agent/src/agent.ts';
import { simulatedPool } from '../../worker-agent/src/lanes/simulated-lane.ts';
import type { LanePool } from '../../worker-agent/src/lanes/lane.ts';

/**
 * Where this test process's agents keep their credentials: one directory for the whole run
 * (files are keyed by hub and IP), so an agent started again with the same IP keeps its id.
 */
export const AGENT_DATA_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-agents-'));
process.once('exit', () => fs.rmSync(AGENT_DATA_DIR, { recursive: true, force: true }));

let nextIp = 1;
/** Distinct loopback addresses, so every agent gets its own IP-derived id. */
export function nextLanIp(): string {
  const n = nextIp++;
  return `127.0.${100 + Math.floor(n / 250)}.${(n % 250) + 1}`;
}

export interface SimAgent {
  agent: WorkerAgent;
  workerId: string;
  stop(): Promise<void>;
  /** Vanish without a goodbye: no more heartbeats, link cut, results never sent. */
  kill(): Promise<void>;
}

/**
 * A logger that keeps what it is told (message and fields, one object per line), for a test
 * that waits for something a component only logs (an agent re-linking after a refusal).
 */
export function capturedLog(): { log: Logger; lines: Array<Record<string, unknown> & { msg: string }> } {
  const lines: Array<Record<string, unknown> & { msg: string }> = [];
  const log = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { log, lines };
}

export async function startSimAgent(hubUrl: string, lanes = 2, opts: { heartbeatS?: number; diskMaxPct?: number; token?: string; lanIp?: string; dataDir?: string; log?: Logger; pool?: LanePool; linkSilenceMs?: number; handshakeTimeoutMs?: number; cdpMaxDiskBytes?: number } = {}): Promise<SimAgent> {
  const lanIp = opts.lanIp ?? nextLanIp();
  const agent = new WorkerAgent({
    hubUrl,
    pool: opts.pool ?? simulatedPool(lanes, `sim://${lanIp}`),
    lanIp,
    hostname: `sim-${lanIp}`,
    dataDir: opts.dataDir ?? AGENT_DATA_DIR,
    token: opts.token,
    heartbeatS: opts.heartbeatS ?? 0.5,
    diskMaxPct: opts.diskMaxPct ?? 100,
    log: opts.log ?? pino({ level: process.env.PAPRIKA_TEST_LOG_LEVEL ?? 'silent' }),
    backoff: { baseMs: 50, capMs: 500 },
    linkSilenceMs: opts.linkSilenceMs,
    handshakeTimeoutMs: opts.handshakeTimeoutMs,
    cdpMaxDiskBytes: opts.cdpMaxDiskBytes,
  });
  await agent.start();
  await agent.linked;
  return {
    agent,
    workerId: agent.workerId!,
    stop: () => agent.stop(0),
    kill: async () => {
      (agent as unknown as { stopped: boolean }).stopped = true;
      agent.dropLink();
      await agent.stop(0);
    },
  };
}

export async function startSimAgents(hubUrl: string, n: number, lanes = 2, opts: { heartbeatS?: number } = {}) {
  const agents: SimAgent[] = [];
  for (let i = 0; i < n; i++) agents.push(await startSimAgent(hubUrl, lanes, opts));
  return { agents, stopAll: () => Promise.all(agents.map((a) => a.stop())).then(() => undefined) };
}

export const PAPRIKA_BIN = path.resolve(import.meta.dirname, '../../bin/paprika.mjs');

export interface WorkerProcess {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** `paprika worker …` as a real child process (credentials under AGENT_DATA_DIR unless env says otherwise). */
export function spawnWorker(args: string[], env: Record<string, string> = {}, nodeArgs: string[] = []): WorkerProcess {
  const child = spawn(process.execPath, [...nodeArgs, PAPRIKA_BIN, 'worker', ...args], { env: { ...process.env, PAPRIKA_LOG_LEVEL: 'info', PAPRIKA_DATA_DIR: AGENT_DATA_DIR, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    output: () => out,
    exited,
    async kill(signal = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
