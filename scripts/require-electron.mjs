#!/usr/bin/env node
// Before `npm run desktop` / `package` / `make` / the electron typecheck. Electron is an
// optional dependency: its install step downloads a ~100 MB binary, and where that download
// cannot happen (a proxy, a firewall, an offline mirror) npm leaves Electron out instead of
// failing the whole install. The desktop commands then say in one line what is missing.
//   --typecheck: typecheck electron/ (only Electron's types are needed); without Electron it is
//                skipped with a notice instead of failing the typecheck of everything else.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

const require = createRequire(import.meta.url);
const typesOnly = process.argv.includes('--typecheck');

function electronPackageDir() {
  try {
    return path.dirname(require.resolve('electron/package.json'));
  } catch {
    return undefined;
  }
}

const dir = electronPackageDir();
const HOW = 'run `npm install electron` where its binary can be downloaded (or set ELECTRON_MIRROR to a reachable mirror)';
if (!dir) {
  if (typesOnly) {
    console.log('paprika: electron is not installed (its binary download failed at npm install): skipping the electron/ typecheck');
    process.exit(0);
  }
  console.error(`paprika: the desktop app needs Electron, which npm install left out because its binary could not be downloaded; ${HOW}.`);
  process.exit(1);
}
if (typesOnly) {
  const tsc = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'electron/tsconfig.json', '--noEmit'], { stdio: 'inherit' });
  process.exit(tsc.status ?? 1);
} else {
  // The package can be present with no binary (ELECTRON_SKIP_BINARY_DOWNLOAD was set at install).
  const pathFile = path.join(dir, 'path.txt');
  const binary = fs.existsSync(pathFile) ? path.join(dir, 'dist', fs.readFileSync(pathFile, 'utf8').trim()) : undefined;
  if (!binary || !fs.existsSync(binary)) {
    console.error(`paprika: the desktop app needs the Electron binary, which is not downloaded (${path.relative(process.cwd(), dir)}/dist is empty); ${HOW}.`);
    process.exit(1);
  }
}
