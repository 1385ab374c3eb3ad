#!/usr/bin/env node
// `npm test`: vitest, then the closing line CI reads: `N passed, N failed[, N skipped]`.
// Without arguments it runs in two phases: every file but the chaos run (two at a time), then
// the chaos run alone. Its twenty worker processes would otherwise starve the files beside it
// of CPU on a two-core machine and break their timing bounds. With arguments (a file filter,
// `-t`, …) it runs vitest once with them.
// Last comes the leak check, counted as one test: every test database and Redis key this run
// created (their names carry the run's tag) must be gone when the tests are done.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { register } from 'tsx/esm/api';

register();
const { newRunTag } = await import('./harness/services.ts');
const { describeLeftovers, leftoverCount, runLeftovers } = await import('./harness/leftovers.ts');

const CHAOS = 'test/e2e/chaos.test.ts';
const userArgs = process.argv.slice(2);
const phases = userArgs.length > 0 ? [{ name: 'tests', args: userArgs }] : [
  { name: 'tests', args: ['--exclude', CHAOS] },
  { name: 'chaos', args: [CHAOS] },
];
const run = newRunTag();
const leaksFile = (phase) => path.resolve('test-artifacts', `leaks-${phase.name}.json`);

let passed = 0;
let failed = 0;
let skipped = 0;
for (const phase of phases) {
  const report = path.resolve('test-artifacts', `vitest-report-${phase.name}.json`);
  fs.mkdirSync(path.dirname(report), { recursive: true });
  fs.rmSync(report, { force: true });
  fs.rmSync(leaksFile(phase), { force: true });
  const args = ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...phase.args];
  const env = { ...process.env, PAPRIKA_TEST_RUN: run, PAPRIKA_TEST_LEAKS_FILE: leaksFile(phase) };
  const result = spawnSync('npx', args, { stdio: 'inherit', env });
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
  if (result.status !== 0 && phaseFailed === 0) phaseFailed = 1;
  failed += phaseFailed;
}

// The global teardown already deleted what it found (and wrote it down); whatever is still
// there now (a phase that died before its teardown) is deleted here. Both count as a leak.
const leaks = { keys: {}, databases: [], checked: { redis: false, postgres: false } };
const merge = (l) => {
  for (const [prefix, keys] of Object.entries(l.keys)) leaks.keys[prefix] = [...(leaks.keys[prefix] ?? []), ...keys];
  leaks.databases.push(...l.databases);
  leaks.checked.redis ||= l.checked.redis;
  leaks.checked.postgres ||= l.checked.postgres;
};
for (const phase of phases) {
  if (fs.existsSync(leaksFile(phase))) merge(JSON.parse(fs.readFileSync(leaksFile(phase), 'utf8')));
}
try {
  merge(await runLeftovers(run, { remove: true }));
} catch (err) {
  console.error(`leak check: could not look at Postgres/Redis: ${err.message}`);
}
if (!leaks.checked.redis && !leaks.checked.postgres) {
  console.log('leak check: skipped (neither Postgres nor Redis reachable)');
  skipped += 1;
} else if (leftoverCount(leaks) === 0) {
  console.log(`leak check: run ${run} left no test database and no Redis key behind`);
  passed += 1;
} else {
  console.error(`leak check FAILED: run ${run} left ${leftoverCount(leaks)} test database(s)/Redis key(s) behind (deleted now):\n${describeLeftovers(leaks).join('\n')}`);
  failed += 1;
}
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed === 0 ? 0 : 1);
