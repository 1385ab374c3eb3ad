// Electron and puppeteer are optional dependencies: where their binary downloads fail (this
// machine, CI, any proxy) npm leaves them out. Code and tests must then still load, so nothing
// may import them statically (puppeteer-core is what drives Chrome; electron/ is the desktop
// app's own program). CI once failed on a test that imported 'puppeteer'.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../../..');

function importersOf(pkg: string, dirs: string[]): string[] {
  const pattern = `(from|import\\() *['"]${pkg}['"]`;
  try {
    return execFileSync('grep', ['-rlE', pattern, '--exclude-dir=node_modules', '--include=*.ts', '--include=*.tsx', '--include=*.mjs', ...dirs], { cwd: ROOT, encoding: 'utf8' }).trim().split('\n').filter(Boolean);
  } catch {
    return []; // grep exits 1 when nothing matches
  }
}

describe('optional dependencies are never imported where they may be missing', () => {
  it("no module imports 'puppeteer' (only puppeteer-core)", () => {
    expect(importersOf('puppeteer', ['hub-core', 'worker-agent', 'test', 'bench', 'scripts', 'bin'])).toEqual([]);
  });

  it("only the desktop app's own program imports 'electron'", () => {
    expect(importersOf('electron', ['hub-core', 'worker-agent', 'renderer', 'test', 'bench', 'scripts', 'bin'])).toEqual([]);
  });
});
