// The house's import rules, checked on the source text: every import of every .ts file under
// hub-core/src and worker-agent/src (type-only imports, re-exports and dynamic imports
// included; `paprika/…` through package.json's exports), resolved to files. Layers import only downward; the two programs meet only at
// the wire contract; one module runs the state-changing job statements.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const HUB_SRC = path.join(ROOT, 'hub-core/src');
const AGENT_SRC = path.join(ROOT, 'worker-agent/src');
/** The composition root: the one place that builds the hub (adapters, services, loops, HTTP). */
const APP_DIR = path.join(HUB_SRC, 'app');
/** The wire-contract folder: the only part of hub-core the worker agent may import. */
const WIRE_DIR = path.join(HUB_SRC, 'wire');
/** The job ledger: the one module outside adapters/ and ports/ that changes a job's state. */
const LEDGER_FILE = path.join(HUB_SRC, 'hub/job-ledger.ts');
/** JobStore methods that change a job row (hub-core/src/ports/job-store.ts). */
const STATE_CHANGING = ['insertJob', 'insertRunningJob', 'claimQueuedJob', 'unclaimJob', 'finishJob', 'cancelJob', 'failJobIf', 'markReleased', 'forgetIdempotencyKey', 'insertBatch', 'claimQueuedJobs', 'finishJobs'];

function tsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')).map((f) => path.join(dir, f)).sort();
}

/** The package's own `exports` (`paprika/wire` → hub-core/src/wire/index.ts), as the source condition resolves them. */
const PKG = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { name: string; exports: Record<string, { 'paprika-source'?: string } | string> };

function selfReference(spec: string): string | undefined {
  if (spec !== PKG.name && !spec.startsWith(`${PKG.name}/`)) return undefined;
  const entry = PKG.exports[`.${spec.slice(PKG.name.length)}`];
  const target = typeof entry === 'string' ? entry : entry?.['paprika-source'];
  // An unexported subpath cannot be imported: named as the root so it fails every folder rule.
  return target ? path.resolve(ROOT, target) : ROOT;
}

/** Every relative or self-referencing import of a file, resolved to a path; other packages are left out. */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const { fileName } of ts.preProcessFile(text, true, true).importedFiles) {
    if (fileName.startsWith('.')) out.push(path.resolve(path.dirname(file), fileName));
    else {
      const own = selfReference(fileName);
      if (own) out.push(own);
    }
  }
  return out;
}

const rel = (f: string) => path.relative(ROOT, f);
const inside = (f: string, dir: string) => f === dir || f.startsWith(dir + path.sep);

/** The files that import each other, directly or around a circle: each strongly connected component of more than one file (or a file importing itself), by Tarjan's algorithm. */
function cyclesOf(graph: Map<string, string[]>): string[][] {
  const nodes = [...graph.keys()].sort();
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const sccs: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) sccs.push(scc.sort());
    }
  };
  for (const n of nodes) if (!idx.has(n)) visit(n);
  return sccs;
}

const hubFiles = tsFiles(HUB_SRC);
const agentFiles = tsFiles(AGENT_SRC);
const graph = new Map(hubFiles.map((f) => [f, importsOf(f).filter((i) => inside(i, HUB_SRC))]));

describe('import rules', () => {
  it('hub-core/src has no import circle (type-only imports included)', () => {
    const cycles = cyclesOf(graph).map((c) => c.map(rel));
    expect(cycles).toEqual([]);
  });

  it('no file under hub-core/src/http imports the composition root or Hub', () => {
    const bad: string[] = [];
    for (const f of hubFiles.filter((f) => inside(f, path.join(HUB_SRC, 'http')))) {
      for (const i of graph.get(f)!) if (inside(i, APP_DIR) || i === path.join(HUB_SRC, 'hub/hub.ts')) bad.push(`${rel(f)} → ${rel(i)}`);
      // Hub by name from anywhere (a re-export elsewhere would not hide it).
      if (/import\s+(type\s+)?(Hub\b|\{[^}]*\bHub\b[^}]*\})\s+from/.test(fs.readFileSync(f, 'utf8'))) bad.push(`${rel(f)} imports Hub`);
    }
    expect(bad).toEqual([]);
  });

  it('only the composition root builds the HTTP server and the loops: nothing below app/ imports app/', () => {
    const bad = hubFiles.filter((f) => !inside(f, APP_DIR)).flatMap((f) => graph.get(f)!.filter((i) => inside(i, APP_DIR)).map((i) => `${rel(f)} → ${rel(i)}`));
    expect(bad).toEqual([]);
  });

  it('no hub-core/src file imports worker-agent (the launcher above both programs starts each)', () => {
    const bad = hubFiles.flatMap((f) => importsOf(f).filter((i) => inside(i, path.join(ROOT, 'worker-agent'))).map((i) => `${rel(f)} → ${rel(i)}`));
    expect(bad).toEqual([]);
  });

  it('worker-agent imports hub-core only from the wire-contract folder (hub-core/src/wire, as paprika/wire)', () => {
    const bad = agentFiles.flatMap((f) => importsOf(f).filter((i) => !inside(i, AGENT_SRC) && !inside(i, WIRE_DIR)).map((i) => `${rel(f)} → ${rel(i) || '(an unexported subpath)'}`));
    expect(bad).toEqual([]);
  });

  it('the wire-contract folder imports nothing of hub-core outside itself', () => {
    const bad = hubFiles.filter((f) => inside(f, WIRE_DIR)).flatMap((f) => graph.get(f)!.filter((i) => !inside(i, WIRE_DIR)).map((i) => `${rel(f)} → ${rel(i)}`));
    expect(bad).toEqual([]);
  });

  it('the state-changing JobStore methods are called from one module outside adapters/ and ports/ (hub/job-ledger.ts)', () => {
    // Any receiver (store, this.d.store, a store passed under another name) but the ledger's own
    // methods of the same name (ledger.markReleased(…) is the way to do it).
    const call = new RegExp(`(\\w+)\\??\\.(${STATE_CHANGING.join('|')})\\(`, 'g');
    const callers = new Map<string, string[]>();
    for (const f of hubFiles) {
      if (inside(f, path.join(HUB_SRC, 'adapters')) || inside(f, path.join(HUB_SRC, 'ports'))) continue;
      const code = fs.readFileSync(f, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*/g, '');
      const names = [...new Set([...code.matchAll(call)].filter((m) => !/ledger$/i.test(m[1]!)).map((m) => m[2]!))];
      if (names.length > 0) callers.set(rel(f), names.sort());
    }
    expect([...callers.keys()]).toEqual([rel(LEDGER_FILE)]);
  });
});
