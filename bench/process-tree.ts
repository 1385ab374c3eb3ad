// What a contender's processes cost: CPU time and memory of one or more root pids and all their
// descendants, from /proc. Memory is read two ways: the RSS sum (what `ps` adds up, which counts
// Chrome's and Node's shared pages once per process) and the PSS sum (each shared page split
// among its sharers, so two trees can be compared without double counting).
import fs from 'node:fs';

const PAGE = 4096;
const TICK_MS = 10; // USER_HZ is 100 on Linux

interface Proc {
  ppid: number;
  ticks: number; // utime + stime + cutime + cstime (reaped children's time lands in the parent)
  rssPages: number;
  chrome: boolean;
}

function readProcs(): Map<number, Proc> {
  const out = new Map<number, Proc>();
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    out.set(Number(e), { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]), rssPages: Number(f[21]), chrome: /chrom/i.test(comm) });
  }
  return out;
}

function treeOf(roots: readonly number[], procs: Map<number, Proc>): number[] {
  const children = new Map<number, number[]>();
  for (const [pid, p] of procs) {
    const list = children.get(p.ppid);
    if (list) list.push(pid);
    else children.set(p.ppid, [pid]);
  }
  const seen = new Set<number>();
  const todo = roots.filter((r) => procs.has(r));
  while (todo.length > 0) {
    const pid = todo.pop()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    todo.push(...(children.get(pid) ?? []));
  }
  return [...seen];
}

function pssKb(pid: number): number | undefined {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

export interface TreeSample {
  cpuMs: number;
  rssMiB: number;
  pssMiB: number;
  processes: number;
  /** PSS per root pid's own subtree, for "where does the memory go". */
  byRoot: number[];
  /** PSS of the Chrome processes (browser, renderers, GPU, utility) among them; the rest is Node. */
  chromeMiB: number;
  /** How many Chrome processes. */
  chromeProcesses: number;
  /** CPU time per root pid's own subtree, and of the Chrome processes among them (reaped renderers count in their Chrome parent). */
  cpuMsByRoot: number[];
  chromeCpuMs: number;
}

export function sampleTree(roots: readonly number[]): TreeSample {
  const procs = readProcs();
  let ticks = 0;
  let rss = 0;
  let pss = 0;
  const byRoot: number[] = [];
  const counted = new Set<number>();
  let chrome = 0;
  let chromeProcesses = 0;
  let chromeTicks = 0;
  const ticksByRoot: number[] = [];
  for (const root of roots) {
    let mine = 0;
    let mineTicks = 0;
    for (const pid of treeOf([root], procs)) {
      if (counted.has(pid)) continue;
      counted.add(pid);
      const p = procs.get(pid)!;
      const kb = pssKb(pid) ?? (p.rssPages * PAGE) / 1024;
      ticks += p.ticks;
      mineTicks += p.ticks;
      if (p.chrome) chromeTicks += p.ticks;
      rss += p.rssPages * PAGE;
      pss += kb * 1024;
      mine += kb * 1024;
      if (p.chrome) {
        chrome += kb * 1024;
        chromeProcesses++;
      }
    }
    byRoot.push(mine / 2 ** 20);
    ticksByRoot.push(mineTicks);
  }
  return { cpuMs: ticks * TICK_MS, rssMiB: rss / 2 ** 20, pssMiB: pss / 2 ** 20, processes: counted.size, byRoot, chromeMiB: chrome / 2 ** 20, chromeProcesses, cpuMsByRoot: ticksByRoot.map((t) => t * TICK_MS), chromeCpuMs: chromeTicks * TICK_MS };
}

/** Samples the trees every `everyMs` and keeps the peaks, until stop(). */
export function watchTree(roots: () => readonly number[], everyMs = 500) {
  let peakRss = 0;
  let peakPss = 0;
  let peakByRoot: number[] = [];
  let peakChrome = 0;
  let peakChromeProcesses = 0;
  const tick = () => {
    const s = sampleTree(roots());
    if (s.rssMiB > peakRss) peakRss = s.rssMiB;
    if (s.pssMiB > peakPss) {
      peakPss = s.pssMiB;
      peakByRoot = s.byRoot;
      peakChrome = s.chromeMiB;
      peakChromeProcesses = s.chromeProcesses;
    }
  };
  tick();
  const timer = setInterval(tick, everyMs);
  return {
    stop() {
      clearInterval(timer);
      tick();
      /** At the PSS peak: per root, and the Chrome processes' share and count. */
      return { peakRssMiB: peakRss, peakPssMiB: peakPss, peakPssByRootMiB: peakByRoot, chromePssMiB: peakChrome, chromeProcesses: peakChromeProcesses };
    },
  };
}
