// `npm run bench [-- --quick] [-- --only NAME]`: each benchmark prints one line
// `name: paprika X unit, peer Y unit, ratio R` (R > 1: Paprika better), then the ceiling
// line; all figures go to bench/results/latest.json.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ceilings } from './ceilings.ts';
import { completionFigures } from './completion.ts';
import { cdpFigures } from './cdp.ts';
import { bulkDispatchFigures } from './bulk-dispatch.ts';
import { dispatchFigures } from './dispatch.ts';
import { fleetReadFigures } from './fleet-read.ts';
import { hubMemoryFigures } from './hub-memory.ts';
import { isolationFigures } from './isolation.ts';
import { pickFigures } from './pick.ts';
import { readMemoryFigures } from './read-memory.ts';
import { realChromeFigures } from './real-chrome.ts';
import { redriveFigures } from './redrive.ts';
import { line, type Figure } from './report.ts';
import { wallFigures } from './wall.ts';

const BENCHES = ['chrome', 'completion', 'dispatch', 'bulk', 'pick', 'redrive', 'fleet', 'memory', 'read-memory', 'isolation', 'cdp', 'wall', 'ceilings'] as const;

/** The wall bench starts 50 agents, 200 jobs and Chromium: about a minute whatever the window. */
const SLOW: ReadonlySet<string> = new Set(['wall']);

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, strict: true, options: { quick: { type: 'boolean' }, only: { type: 'string', multiple: true }, lanes: { type: 'string', multiple: true }, 'shared-chrome': { type: 'boolean' }, compiled: { type: 'boolean' }, 'chrome-jobs': { type: 'string' }, 'chrome-rounds': { type: 'string' }, 'chrome-workload': { type: 'string', multiple: true } } });
  const quick = Boolean(values.quick);
  // --quick leaves out what takes over a minute even when short (ask for it with --only).
  const only = new Set(values.only ?? BENCHES.filter((b) => !(quick && SLOW.has(b))));
  for (const name of only) if (!(BENCHES as readonly string[]).includes(name)) throw new Error(`--only expects one of ${BENCHES.join(', ')}, got ${name}`);
  const started = performance.now();
  const concurrency = 16;
  const figures: Figure[] = [];
  const say = (fs_: Figure[]) => {
    for (const f of fs_) console.log(line(f));
    figures.push(...fs_);
  };

  const whole = (flag: string, v: string | undefined, fallback: number, max: number) => {
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1 || n > max) throw new Error(`--${flag} expects a whole number from 1 to ${max}, got ${v}`);
    return n;
  };
  // `--lanes N` (repeatable) sets the real-browser N (default 2); `--shared-chrome` adds Paprika with one shared Chrome.
  const lanes = (values.lanes ?? ['2']).map((v) => whole('lanes', v, 2, 16));
  // `--chrome-jobs N`, `--chrome-rounds N` and `--chrome-workload fetch|fetch+screenshot` (repeatable) narrow or widen the real-browser run.
  const chromeJobs = whole('chrome-jobs', values['chrome-jobs'], quick ? 16 : 80, 2000);
  const chromeRounds = whole('chrome-rounds', values['chrome-rounds'], quick ? 1 : 3, 20);
  const workloads = values['chrome-workload'] ?? ['fetch', 'fetch+screenshot'];
  for (const wl of workloads) if (wl !== 'fetch' && wl !== 'fetch+screenshot') throw new Error(`--chrome-workload expects fetch or fetch+screenshot, got ${wl}`);
  if (only.has('chrome')) say(await realChromeFigures({ lanes, jobs: chromeJobs, rounds: chromeRounds, screenshots: workloads.map((wl) => wl === 'fetch+screenshot'), shared: Boolean(values['shared-chrome']), log: (s) => console.log(s) }));
  if (only.has('completion')) say(await completionFigures({ jobs: quick ? 10 : 40 }));
  let dispatchRate: number | undefined;
  if (only.has('dispatch')) {
    const d = await dispatchFigures({ jobs: quick ? 1500 : 10_000, concurrency, agents: 4, lanes: 4, rounds: quick ? 1 : 3 });
    dispatchRate = d[0].paprika;
    say(d);
  }
  if (only.has('bulk')) say(await bulkDispatchFigures({ jobs: quick ? 2000 : 10_000, agents: 4, lanes: 4, rounds: quick ? 1 : 3 }));
  if (only.has('pick')) say(pickFigures({ budgetMs: quick ? 60 : 400 }));
  if (only.has('redrive')) say(await redriveFigures({ jobs: quick ? 100 : 500 }));
  if (only.has('fleet')) say(await fleetReadFigures({ sizes: [1000, 10_000], reads: quick ? 3 : 10 }));
  if (only.has('memory')) say(await hubMemoryFigures({ workers: 1000 }));
  if (only.has('read-memory')) say(await readMemoryFigures({ jobs: quick ? 6 : 30, resultMb: 20, loads: 5 }));
  if (only.has('isolation')) say(await isolationFigures({ jobs: quick ? 40 : 200 }));
  if (only.has('cdp')) say(await cdpFigures({ roundTrips: quick ? 200 : 2000 }));
  if (only.has('wall')) say(await wallFigures({ workers: 50, lanes: 4, seconds: quick ? 5 : 15 }));
  let ceilingRows;
  if (only.has('ceilings')) {
    ceilingRows = await ceilings({ ops: quick ? 3000 : 20_000, concurrency });
    for (const c of ceilingRows) console.log(`ceiling ${c.name}: ${c.opsPerS.toFixed(0)} ops/s`);
    if (dispatchRate !== undefined) {
      const lowest = ceilingRows.reduce((a, b) => (b.opsPerS < a.opsPerS ? b : a));
      console.log(`ceiling: dispatch reaches ${((dispatchRate / lowest.opsPerS) * 100).toFixed(1)} % of the lowest ceiling (${lowest.name})`);
    }
  }
  const out = {
    at: new Date().toISOString(),
    quick,
    compiled: Boolean(values.compiled),
    machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, mem_gib: Math.round(os.totalmem() / 2 ** 30), node: process.version },
    figures,
    ceilings: ceilingRows,
    seconds: (performance.now() - started) / 1000,
  };
  const file = path.resolve('bench/results/latest.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(out, null, 2));
  console.log(`bench: ${out.seconds.toFixed(1)} s; figures in ${path.relative(process.cwd(), file)}`);
  process.exit(0);
}
