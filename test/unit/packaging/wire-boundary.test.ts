// The wire contract's packaging, beside the import rules of test/unit/architecture/imports.test.ts
// (worker → paprika/wire only, wire → nothing else of hub-core, hub-core ↛ worker): the wire folder
// needs no package but zod (the worker and the console carry it), hub-core does not import the
// launcher, the console takes its API shapes from paprika/wire, and the version is package.json's.
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
  it('hub-core/src/wire needs no package but zod (and node: built-ins)', () => {
    const files = sources('hub-core/src/wire');
    expect(files.length).toBeGreaterThan(5);
    const packages = files.flatMap((f) => specifiers(f).filter((s) => !s.startsWith('.') && s !== 'zod' && !s.startsWith('node:')).map((s) => `${f} → ${s}`));
    expect(packages).toEqual([]);
  });

  it('hub-core does not import the launcher, and the worker no paprika export but wire', () => {
    const upward = [...sources('hub-core/src'), ...sources('hub-core/client')].flatMap((f) => specifiers(f).filter((s) => target(f, s).startsWith('launcher/')).map((s) => `${f} → ${s}`));
    expect(upward).toEqual([]);
    const otherExports = sources('worker-agent/src').flatMap((f) => specifiers(f).filter((s) => /^paprika(\/|$)/.test(s) && s !== 'paprika/wire').map((s) => `${f} → ${s}`));
    expect(otherExports).toEqual([]);
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
