// Builds the desktop app's main side into electron-dist/: main + the hub it can embed
// (tsc, layout kept, so hub-core finds its migrations and Lua files next to it), and the
// preload as one CommonJS file (sandboxed preloads cannot be ES modules).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'electron-dist');

fs.rmSync(out, { recursive: true, force: true });
execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(root, 'electron/tsconfig.build.json')], { stdio: 'inherit' });
await build({
  entryPoints: [path.join(root, 'electron/preload.ts')],
  outfile: path.join(out, 'electron/preload.cjs'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['electron'],
});
// Files hub-core reads at run time, beside the compiled code as in the source tree.
for (const dir of ['hub-core/migrations', 'hub-core/src/adapters/redis/lua']) {
  if (fs.existsSync(path.join(root, dir))) fs.cpSync(path.join(root, dir), path.join(out, dir), { recursive: true });
}
console.log(`electron build: ${path.relative(root, out)}/electron/main.js`);
