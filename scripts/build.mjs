#!/usr/bin/env node
// `npm run build` (and npm's `prepare`, so a clone's `npm install` and `npm pack` run it):
// the hub, the SDK and the worker agent compiled to dist/ (JavaScript + .d.ts), then the
// console built into renderer/dist. `--js` compiles only.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const started = Date.now();

let tsc;
try {
  tsc = require.resolve('typescript/bin/tsc');
} catch {
  // An install without dev dependencies (npm install --omit=dev in a clone): nothing to compile with.
  console.log('paprika build: typescript is not installed (dev dependencies omitted); skipping');
  process.exit(0);
}
fs.rmSync(path.join(root, 'dist/hub-core'), { recursive: true, force: true });
fs.rmSync(path.join(root, 'dist/worker-agent'), { recursive: true, force: true });
const r = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });
if (r.status !== 0) process.exit(r.status ?? 1);
console.log(`paprika build: compiled hub, SDK and worker agent to dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s`);

if (!process.argv.includes('--js')) {
  const { build } = await import('vite');
  await build({ configFile: path.join(root, 'renderer/vite.config.ts'), logLevel: 'warn' });
  console.log(`paprika build: console built into renderer/dist (${((Date.now() - started) / 1000).toFixed(1)} s in all)`);
}
