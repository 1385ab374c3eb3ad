// real chrome: the workload users run Paprika for, against what they would pick instead. A ~30 KB
// page (scripts, CSS, three images) on 127.0.0.1; `fetch` and `fetch` + screenshot jobs; N lanes
// and 2×N closed-loop clients. Contenders, same Chromium, alternating rounds:
//  - paprika: `paprika hub` (embedded defaults) and `paprika worker --lanes N` as processes, the
//    SDK's run() over HTTP; every job in a fresh browser context (isolation is always on);
//  - peer: puppeteer-cluster, CONCURRENCY_CONTEXT (a fresh context per job, one Chrome);
//  - raw: a puppeteer-core loop, a fresh context per job, one Chrome (the floor with isolation),
//    launched with Paprika's lane flags (LANE_CHROME_ARGS); puppeteer-cluster gets the seed's
//    flags (CHROME_ARGS), as its users would launch it (BENCH_CLUSTER_LANE_FLAGS=1: Paprika's too);
//  - paprika-shared (`--shared-chrome`): Paprika with `paprika worker --shared-chrome`, the
//    worker's lanes in one Chrome, each job still in a fresh context; printed as its own lines.
// Each contender's process tree is measured: CPU ms per job, peak RSS sum and peak PSS sum.
import { spawn, spawnSync } from 'node:child_process';
import fs, { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { createClient } from '../hub-core/client/index.ts';
import { CHROME_ARGS, LANE_CHROME_ARGS } from '../worker-agent/src/chrome/chrome-process.ts';
import { findChrome } from '../worker-agent/src/chrome/find-chrome.ts';
import { spawnWorker } from '../test/harness/agents.ts';
import { freePort, spawnHub, waitFor } from '../test/harness/processes.ts';
import { serveBenchPage } from './bench-page.ts';
import { sampleTree, watchTree, type TreeSample } from './process-tree.ts';
import { closedLoop, summary, type Figure } from './report.ts';

/**
 * The peer lives in its own folder with its own install: puppeteer-cluster declares a peer
 * dependency on the full puppeteer, whose install script downloads Chrome; as a root dev
 * dependency it made `npm ci` fail wherever that download cannot happen. Installed once, on
 * first use, with the download skipped (the peer drives the same Chromium as everyone else).
 */
const PEERS_DIR = path.resolve(import.meta.dirname, 'peers');
function ensurePeerInstalled(): void {
  if (existsSync(path.join(PEERS_DIR, 'node_modules', 'puppeteer-cluster', 'package.json'))) return;
  console.error('bench: installing the peer (puppeteer-cluster) into bench/peers, once');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(npm, ['install', '--no-audit', '--no-fund', '--no-package-lock', '--ignore-scripts'], { cwd: PEERS_DIR, stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, PUPPETEER_SKIP_DOWNLOAD: 'true' } });
  if (r.status !== 0) throw new Error(`bench: npm install in ${PEERS_DIR} failed (exit ${r.status}); the real-browser peer needs puppeteer-cluster from the npm registry`);
}

type Contender = 'paprika' | 'paprika-shared' | 'cluster' | 'raw';
const isPaprika = (c: Contender) => c === 'paprika' || c === 'paprika-shared';

export interface RoundResult {
  contender: Contender;
  jobsPerS: number;
  p50: number;
  p99: number;
  cpuMsPerJob: number;
  peakRssMiB: number;
  peakPssMiB: number;
  /** Paprika only: peak PSS of [hub, worker + its Chromes]. */
  pssByRootMiB?: number[];
  /** At the PSS peak: the Chrome processes' PSS (the rest is Node) and how many there were. */
  chromePssMiB: number;
  chromeProcesses: number;
  /** CPU ms a job by part: Paprika's hub, its worker's Node and its Chromes; a peer's Node and its Chrome. */
  cpuSplit: Record<string, number>;
  failed: number;
}

interface Workload {
  url: string;
  screenshot: boolean;
  lanes: number;
  jobs: number;
  warmup: number;
}

/** CPU between two samples of a contender's trees: `parts` names each root (Chrome, under the last one, is taken out as its own part). */
interface CpuWindow {
  from: TreeSample;
  to: TreeSample;
  parts: string[];
}

/** CPU ms a job, in all and by part. */
function cpuPerJob({ from, to, parts }: CpuWindow, jobs: number): { total: number; split: Record<string, number> } {
  const split: Record<string, number> = {};
  parts.forEach((n, i) => (split[n] = (to.cpuMsByRoot[i] - from.cpuMsByRoot[i]) / jobs));
  const chrome = (to.chromeCpuMs - from.chromeCpuMs) / jobs;
  // Chrome runs under the last root (the worker, or the peer's Node).
  split[parts[parts.length - 1]] -= chrome;
  split.chrome = chrome;
  return { total: (to.cpuMs - from.cpuMs) / jobs, split };
}

function finish(contender: Contender, ms: number, latencies: number[], failed: number, cpu: CpuWindow, mem: ReturnType<ReturnType<typeof watchTree>['stop']>, jobs: number): RoundResult {
  const s = summary(latencies);
  const { total, split } = cpuPerJob(cpu, jobs);
  return { contender, jobsPerS: (jobs / ms) * 1000, p50: s.p50, p99: s.p99, cpuMsPerJob: total, peakRssMiB: mem.peakRssMiB, peakPssMiB: mem.peakPssMiB, ...(isPaprika(contender) ? { pssByRootMiB: mem.peakPssByRootMiB } : {}), chromePssMiB: mem.chromePssMiB, chromeProcesses: mem.chromeProcesses, cpuSplit: split, failed };
}

/**
 * A hub data directory whose database exists already: each round starts from a copy, as a hub
 * restarted by its operator does (PGlite's first-run initdb takes 15-30 s on a loaded machine).
 */
async function hubDataTemplate(): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-bench-template-'));
  const hub = await spawnHub(await freePort(), { PAPRIKA_DATA_DIR: dir, PAPRIKA_LOG_LEVEL: 'warn' }, { readyTimeoutMs: 180_000 });
  await hub.kill('SIGTERM');
  return dir;
}

/** BENCH_HUB_NODE_ARGS / BENCH_WORKER_NODE_ARGS: e.g. `--cpu-prof --cpu-prof-dir=prof` (not allowed in NODE_OPTIONS). */
function nodeArgs(which: 'HUB' | 'WORKER'): string[] {
  return (process.env[`BENCH_${which}_NODE_ARGS`] ?? '').split(' ').filter(Boolean);
}

async function paprikaRound(w: Workload, chromePath: string, template: string, shared: boolean): Promise<RoundResult> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-bench-hub-'));
  fs.cpSync(template, dataDir, { recursive: true });
  const port = await freePort();
  const hub = await spawnHub(port, { PAPRIKA_DATA_DIR: dataDir, PAPRIKA_LOG_LEVEL: 'warn' }, { readyTimeoutMs: 120_000, nodeArgs: nodeArgs('HUB') });
  const worker = spawnWorker(['--hub', hub.url, '--lanes', String(w.lanes), '--lan-ip', '127.0.0.1', '--chrome', chromePath, ...(shared ? ['--shared-chrome'] : [])], { PAPRIKA_LOG_LEVEL: 'warn' }, nodeArgs('WORKER'));
  const roots = [hub.child.pid!, worker.child.pid!];
  const mem = watchTree(() => roots);
  try {
    await waitFor('worker linked', async () => ((await (await fetch(`${hub.url}/healthz`)).json()) as { workers: number }).workers >= 1, 60_000, 100).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${worker.output().slice(-2000)}`);
    });
    const client = createClient({ url: hub.url });
    const spec = { kind: 'fetch' as const, spec: { url: w.url, ...(w.screenshot ? { screenshot: true } : {}) } };
    let failed = 0;
    const latencies: number[] = [];
    const one = async () => {
      const t = performance.now();
      const job = await client.run(spec, { timeout: 60_000 }).catch(() => undefined);
      if (job?.status !== 'succeeded') failed++;
      latencies.push(performance.now() - t);
    };
    await closedLoop(w.warmup, w.lanes * 2, one);
    latencies.length = 0;
    failed = 0;
    const from = sampleTree(roots);
    const ms = await closedLoop(w.jobs, w.lanes * 2, one);
    return finish(shared ? 'paprika-shared' : 'paprika', ms, latencies, failed, { from, to: sampleTree(roots), parts: ['hub', 'worker'] }, mem.stop(), w.jobs);
  } finally {
    mem.stop();
    await worker.kill('SIGTERM');
    await hub.kill('SIGTERM');
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function peerRound(contender: 'cluster' | 'raw', w: Workload, chromePath: string): Promise<RoundResult> {
  const args = JSON.stringify({ contender, lanes: w.lanes, clients: w.lanes * 2, jobs: w.jobs, warmup: w.warmup, url: w.url, screenshot: w.screenshot, chromePath, args: [...(contender === 'raw' || process.env.BENCH_CLUSTER_LANE_FLAGS === '1' ? LANE_CHROME_ARGS : CHROME_ARGS)] });
  ensurePeerInstalled();
  const child = spawn(process.execPath, [path.resolve(PEERS_DIR, 'real-chrome-peer.mjs'), args], { stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin!.on('error', () => {}); // a peer that died early is reported by next(), not by an EPIPE
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  const lines = readline.createInterface({ input: child.stdout! });
  const it = lines[Symbol.asyncIterator]();
  const next = async () => {
    const r = await it.next();
    if (r.done) throw new Error(`${contender} peer exited early:\n${err.slice(-2000)}`);
    return JSON.parse(r.value) as { ready?: boolean; done?: boolean; ms: number; latencies: number[]; failed: number };
  };
  const mem = watchTree(() => [child.pid!]);
  try {
    await next(); // ready: launched and warmed up
    const from = sampleTree([child.pid!]);
    child.stdin!.write('go\n');
    const done = await next();
    return finish(contender, done.ms, done.latencies, done.failed, { from, to: sampleTree([child.pid!]), parts: ['node'] }, mem.stop(), w.jobs);
  } finally {
    mem.stop();
    child.stdin!.end('stop\n');
    const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(t);
  }
}

/** Best of each contender's rounds by jobs/s (noise only ever slows a round down). */
function best(rounds: RoundResult[], c: Contender): RoundResult {
  return rounds.filter((r) => r.contender === c).reduce((a, b) => (b.jobsPerS > a.jobsPerS ? b : a));
}

export async function realChromeFigures(o: { lanes: number[]; jobs: number; rounds: number; screenshots?: boolean[]; shared?: boolean; log?: (s: string) => void }): Promise<Figure[]> {
  const chromePath = findChrome({});
  if (!chromePath) {
    console.log('real chrome: skipped (no Chrome found)');
    return [];
  }
  const page = await serveBenchPage();
  const template = await hubDataTemplate();
  const out: Figure[] = [];
  const CONTENDERS: Contender[] = ['paprika', ...(o.shared ? ['paprika-shared' as const] : []), 'cluster', 'raw'];
  try {
    for (const lanes of o.lanes)
    for (const screenshot of o.screenshots ?? [false, true]) {
      const w: Workload = { url: page.url, screenshot, lanes, jobs: o.jobs, warmup: lanes * 2 };
      const rounds: RoundResult[] = [];
      for (let r = 0; r < o.rounds; r++) {
        // Alternate the order so no contender always runs first (or right after another's teardown).
        const order = CONTENDERS.map((_, i) => CONTENDERS[(i + r) % CONTENDERS.length]);
        for (const c of order) {
          const res = isPaprika(c) ? await paprikaRound(w, chromePath, template, c === 'paprika-shared') : await peerRound(c as 'cluster' | 'raw', w, chromePath);
          o.log?.(`  N=${lanes} ${screenshot ? 'fetch+screenshot' : 'fetch'} round ${r + 1} ${c}: ${res.jobsPerS.toFixed(2)} jobs/s, p50 ${res.p50.toFixed(0)} ms, p99 ${res.p99.toFixed(0)} ms, ${res.cpuMsPerJob.toFixed(0)} CPU ms/job (${Object.entries(res.cpuSplit).map(([k, v]) => `${k} ${v.toFixed(0)}`).join(', ')}), peak RSS ${res.peakRssMiB.toFixed(0)} MiB, PSS ${res.peakPssMiB.toFixed(0)} MiB (${res.chromeProcesses} Chrome processes ${res.chromePssMiB.toFixed(0)}${res.pssByRootMiB ? `; hub ${res.pssByRootMiB[0].toFixed(0)}, worker+chrome ${res.pssByRootMiB[1].toFixed(0)}` : ''})${res.failed ? `, ${res.failed} failed` : ''}`);
          rounds.push(res);
        }
      }
      const [p, c, raw] = (['paprika', 'cluster', 'raw'] as const).map((k) => best(rounds, k));
      const name = `real chrome ${screenshot ? 'fetch+screenshot' : 'fetch'} (N=${lanes})`;
      const extra = { page_bytes: page.bytes, jobs: o.jobs, rounds };
      out.push(
        { name, unit: 'jobs/s', paprika: p.jobsPerS, peer: c.jobsPerS, peerName: 'puppeteer-cluster CONCURRENCY_CONTEXT', higherIsBetter: true, extra },
        { name: `${name} vs raw loop`, unit: 'jobs/s', paprika: p.jobsPerS, peer: raw.jobsPerS, peerName: 'raw puppeteer-core, fresh context per job', higherIsBetter: true },
        { name: `${name} p50`, unit: 'ms', paprika: p.p50, peer: c.p50, peerName: 'puppeteer-cluster', higherIsBetter: false },
        { name: `${name} p99`, unit: 'ms', paprika: p.p99, peer: c.p99, peerName: 'puppeteer-cluster', higherIsBetter: false },
        { name: `${name} CPU per job`, unit: 'ms', paprika: p.cpuMsPerJob, peer: c.cpuMsPerJob, peerName: 'puppeteer-cluster', higherIsBetter: false },
        { name: `${name} peak PSS of the process tree`, unit: 'MiB', paprika: p.peakPssMiB, peer: c.peakPssMiB, peerName: 'puppeteer-cluster', higherIsBetter: false, extra: { paprika_rss_sum_mib: p.peakRssMiB, peer_rss_sum_mib: c.peakRssMiB, raw_pss_mib: raw.peakPssMiB, paprika_hub_worker_pss_mib: p.pssByRootMiB, paprika_chrome_pss_mib: p.chromePssMiB, peer_chrome_pss_mib: c.chromePssMiB } },
      );
      if (o.shared) {
        const s = best(rounds, 'paprika-shared');
        out.push(
          { name: `${name} shared Chrome`, unit: 'jobs/s', paprika: s.jobsPerS, peer: c.jobsPerS, peerName: 'puppeteer-cluster CONCURRENCY_CONTEXT', higherIsBetter: true },
          { name: `${name} shared Chrome peak PSS of the process tree`, unit: 'MiB', paprika: s.peakPssMiB, peer: c.peakPssMiB, peerName: 'puppeteer-cluster', higherIsBetter: false, extra: { paprika_hub_worker_pss_mib: s.pssByRootMiB, paprika_chrome_pss_mib: s.chromePssMiB, per_lane_chrome_pss_mib: p.peakPssMiB } },
        );
      }
    }
  } finally {
    await page.close();
    fs.rmSync(template, { recursive: true, force: true });
  }
  return out;
}
