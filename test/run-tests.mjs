#!/usr/bin/env node
// `npm test`: vitest, then the closing line CI reads: `N passed, N failed[, N skipped]`.
// Without arguments it runs in two phases: every file but the chaos run (two at a time), then
// the chaos run alone. Its twenty worker processes would otherwise starve the files beside it
// of CPU on a two-core machine and break their timing bounds. With arguments (a file filter,
// `-t`, …) it runs vitest once with them.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const CHAOS = 'test/e2e/chaos.test.ts';
const userArgs = process.argv.slice(2);
const phases = userArgs.length > 0 ? [{ name: 'tests', args: userArgs }] : [
  { name: 'tests', args: ['--exclude', CHAOS] },
  { name: 'chaos', args: [CHAOS] },
];

let passed = 0;
let failed = 0;
let skipped = 0;
for (const phase of phases) {
  const report = path.resolve('test-artifacts', `vitest-report-${phase.name}.json`);
  fs.mkdirSync(path.dirname(report), { recursive: true });
  fs.rmSync(report, { force: true });
  const args = ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...phase.args];
  const run = spawnSync('npx', args, { stdio: 'inherit', env: process.env });
  let phaseFailed = 0;
  try {
    const r = JSON.parse(fs.readFileSync(report, 'utf8'));
    passed += r.numPassedTests ?? 0;
    // A file that failed to load (or in a hook) has no failed test of its own: count it once.
    const brokenFiles = (r.testResults ?? []).filter((f) => f.status === 'failed' && !(f.assertionResults ?? []).some((a) => a.status === 'failed')).length;
    phaseFailed = (r.numFailedTests ?? 0) + brokenFiles;
    skipped += (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  } catch {
    console.error(`test runner: no vitest report was written for the ${phase.name} phase`);
    phaseFailed = 1;
  }
  if (run.status !== 0 && phaseFailed === 0) phaseFailed = 1;
  failed += phaseFailed;
}
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed === 0 ? 0 : 1);
