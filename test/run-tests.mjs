#!/usr/bin/env node
// `npm test`: vitest, then the closing line CI reads: `N passed, N failed[, N skipped]`.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const report = path.resolve('test-artifacts', 'vitest-report.json');
fs.mkdirSync(path.dirname(report), { recursive: true });
fs.rmSync(report, { force: true });
const args = ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...process.argv.slice(2)];
const run = spawnSync('npx', args, { stdio: 'inherit', env: process.env });

let passed = 0;
let failed = 0;
let skipped = 0;
try {
  const r = JSON.parse(fs.readFileSync(report, 'utf8'));
  passed = r.numPassedTests ?? 0;
  // A file that failed to load (or in a hook) has no failed test of its own: count it once.
  const brokenFiles = (r.testResults ?? []).filter((f) => f.status === 'failed' && !(f.assertionResults ?? []).some((a) => a.status === 'failed')).length;
  failed = (r.numFailedTests ?? 0) + brokenFiles;
  skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
} catch {
  failed = Math.max(1, failed);
  console.error('test runner: no vitest report was written');
}
if (run.status !== 0 && failed === 0) failed = 1;
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(run.status === 0 && failed === 0 ? 0 : 1);
