// The README's environment table(s) and the code agree: every variable the hub and the worker read
// (hub-core/src/config.ts, and any PAPRIKA_* name the worker agent's sources mention) is in the
// table, every name in the table is read, and a numeric default in the table is the one in code.
// Read from the sources, so a variable added later is held to the same rule.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const read = (rel: string) => fs.readFileSync(path.join(ROOT, rel), 'utf8');

function tsFiles(rel: string): string[] {
  const dir = path.join(ROOT, rel);
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts')).map((f) => path.join(rel, f));
}

/** config.ts (or a config/ folder beside it) and the worker agent's sources. */
const CONFIG_SOURCES = ['hub-core/src/config.ts', ...tsFiles('hub-core/src/config')].filter((f) => fs.existsSync(path.join(ROOT, f)));
const SOURCES = [...CONFIG_SOURCES, ...tsFiles('worker-agent/src')];

const paprikaNames = (text: string) => [...text.matchAll(/\bPAPRIKA_[A-Z0-9_]*[A-Z0-9]\b/g)].map((m) => m[0]);

function variablesInCode(): Set<string> {
  const names = new Set<string>();
  for (const f of SOURCES) for (const n of paprikaNames(read(f))) names.add(n);
  // Non-PAPRIKA variables config.ts reads through its helpers: DATABASE_URL, REDIS_URL.
  for (const f of CONFIG_SOURCES) for (const m of read(f).matchAll(/\(env, '([A-Z][A-Z0-9_]+)'/g)) names.add(m[1]);
  return names;
}

/** Numeric fallbacks written as literals: `numberVar(env, 'PAPRIKA_PORT', 8080, …)`. */
function numericDefaultsInCode(): Map<string, number> {
  const out = new Map<string, number>();
  for (const f of CONFIG_SOURCES) for (const m of read(f).matchAll(/\(env, '([A-Z][A-Z0-9_]+)', ([0-9_.]+)[,)]/g)) out.set(m[1], Number(m[2].replace(/_/g, '')));
  return out;
}

interface EnvRow {
  names: string[];
  defaultCell: string;
}

/**
 * Rows of every table in the README's `## Environment` section (up to the next `## `).
 * `PAPRIKA_S3_ENDPOINT (+ \`_BUCKET\`)` names PAPRIKA_S3_BUCKET too.
 */
function readmeEnvRows(): EnvRow[] {
  const readme = read('README.md');
  const from = readme.indexOf('\n## Environment');
  const to = readme.indexOf('\n## ', from + 1);
  const rows: EnvRow[] = [];
  for (const line of readme.slice(from, to < 0 ? undefined : to).split('\n')) {
    if (!line.startsWith('|') || /^\|\s*(var|-+)\s*\|/.test(line)) continue;
    const [nameCell, defaultCell] = line.split(/(?<!\\)\|/).slice(1, 3).map((c) => c.trim());
    const names = [...nameCell.matchAll(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g)].map((m) => m[0]);
    const stem = names[0]?.replace(/_[A-Z0-9]+$/, '');
    for (const m of nameCell.matchAll(/`(_[A-Z0-9_]+)`/g)) names.push(`${stem}${m[1]}`);
    rows.push({ names, defaultCell });
  }
  return rows;
}

describe('README environment table', () => {
  const rows = readmeEnvRows();
  const inTable = new Set(rows.flatMap((r) => r.names));
  const inCode = variablesInCode();

  it('is found, with the variables every deployment sets', () => {
    expect(rows.length).toBeGreaterThan(20);
    for (const n of ['PAPRIKA_PORT', 'DATABASE_URL', 'REDIS_URL', 'PAPRIKA_S3_SECRET_KEY', 'PAPRIKA_PEER_TOKEN']) expect(inTable).toContain(n);
  });

  it('lists every variable the code reads', () => {
    expect([...inCode].filter((n) => !inTable.has(n)).sort()).toEqual([]);
  });

  it('lists no variable the code does not read', () => {
    expect([...inTable].filter((n) => !inCode.has(n)).sort()).toEqual([]);
  });

  it('gives the numeric default the code uses', () => {
    const defaults = numericDefaultsInCode();
    expect(defaults.get('PAPRIKA_PORT')).toBe(8080);
    const wrong: string[] = [];
    for (const row of rows) {
      const fallback = row.names.length === 1 ? defaults.get(row.names[0]) : undefined;
      if (fallback === undefined) continue;
      const shown = Number(/^[0-9][0-9,.]*/.exec(row.defaultCell)?.[0].replace(/,/g, ''));
      if (shown !== fallback) wrong.push(`${row.names[0]}: README ${JSON.stringify(row.defaultCell)}, code ${fallback}`);
    }
    expect(wrong).toEqual([]);
  });
});
