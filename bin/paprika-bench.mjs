#!/usr/bin/env node
// `npm run bench [-- --quick]`: the benchmarks in bench/, TypeScript run through tsx.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runFromSource } from './from-source.mjs';

if (process.argv.includes('--compiled')) {
  // `--compiled`: the hubs and workers it starts run dist/ as `npx paprika` does (no tsx in their
  // memory), built now so it is never stale.
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const r = spawnSync(process.execPath, [path.join(root, 'scripts/build.mjs'), '--js'], { stdio: 'inherit', cwd: root });
  if (r.status !== 0) process.exit(r.status ?? 1);
  delete process.env.PAPRIKA_FROM_SOURCE;
} else {
  // The hubs and workers it starts run the same TypeScript sources, never a stale dist/.
  process.env.PAPRIKA_FROM_SOURCE = '1';
}
runFromSource();
const { main } = await import('../bench/run.ts');
await main(process.argv.slice(2));
