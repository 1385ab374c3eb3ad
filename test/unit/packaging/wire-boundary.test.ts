// The wire contract is the one door between the programs: hub-core/src/wire imports nothing but
// zod, node: built-ins and itself; the worker agent reaches hub-core only as `paprika/wire` (never
// config.ts); hub-core never imports the worker or the launcher; the console takes its API
// shapes from paprika/wire. And the version they report is package.json's.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_VERSION } from '../../../hub-core/src/wire/version.ts';

const ROOT = path.resolve(import.meta.dirname, '../../..');

function sources(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|tsx)$/.test(e.name))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)));
}

/** Every module specifier a file imports or re-exports, static or dynamic, type-only included. */
function specifiers(file: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  const found = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'";]*?from\s*['"]([^'"]+)['"]/g), ...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g), ...text.matchAll(/(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g)];
  return found.map((m) => m[1]);
}

/** `spec` imported from `file`, as a path from the repository root (bare names as they are). */
function target(file: string, spec: string): string {
  return spec.startsWith('.') ? path.relative(ROOT, path.resolve(ROOT, path.dirname(file), spec)) : spec;
}

describe('the wire boundary', () => {
  it('hub-core/src/wire imports only zod, node: built-ins and itself', () => {
    const files = sources('hub-core/src/wire');
    expect(files.length).toBeGreaterThan(5);
    const outside = files.flatMap((f) => specifiers(f).filter((s) => !(s === 'zod' || s.startsWith('node:') || target(f, s).startsWith('hub-core/src/wire/'))).map((s) => `${f} → ${s}`));
    expect(outside).toEqual([]);
  });

  it('the worker agent imports hub-core only as paprika/wire', () => {
    const files = sources('worker-agent/src');
    const wrong = files.flatMap((f) => specifiers(f).filter((s) => target(f, s).startsWith('hub-core') || (s.startsWith('paprika') && s !== 'paprika/wire')).map((s) => `${f} → ${s}`));
    expect(wrong).toEqual([]);
    expect(files.some((f) => specifiers(f).includes('paprika/wire'))).toBe(true);
  });

  it('hub-core imports neither the worker agent nor the launcher', () => {
    const wrong = [...sources('hub-core/src'), ...sources('hub-core/client')].flatMap((f) => specifiers(f).filter((s) => /^(worker-agent|launcher)\//.test(target(f, s))).map((s) => `${f} → ${s}`));
    expect(wrong).toEqual([]);
  });

  it("the console's API types come from paprika/wire, not from hub-core's files", () => {
    const wrong = sources('renderer/src').flatMap((f) => specifiers(f).filter((s) => target(f, s).startsWith('hub-core')).map((s) => `${f} → ${s}`));
    expect(wrong).toEqual([]);
    expect(specifiers('renderer/src/api/types.ts')).toContain('paprika/wire');
  });

  it("reports package.json's version", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(PACKAGE_VERSION).toBe(pkg.version);
  });
});
