// The short chaos run (issue 9): three `paprika hub` processes behind real nginx, twenty
// `paprika worker` processes, a Postgres and a Redis of the run's own. Under load it injects
// every kind of fault once (SIGKILL and SIGTERM of hubs and agents, a Redis pause, a Postgres
// restart, dropped links), then seeded ones, and checks from Postgres and from every agent's
// own log: no job doubled, lost, stuck or late, and the fleet view never shrank under Redis.
// The long run is `npm run chaos`.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { FAULT_KINDS } from '../harness/chaos/faults.ts';
import { chaosPassed, formatChaosReport, runChaos } from '../harness/chaos/run.ts';
import { NGINX_BIN } from '../harness/nginx.ts';
import { postgresBinDir } from '../harness/private-postgres.ts';

function hasRedisServer(): boolean {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const missing = [!postgresBinDir() && 'PostgreSQL server binaries', !hasRedisServer() && 'redis-server', !NGINX_BIN && 'nginx'].filter(Boolean);
if (missing.length > 0) {
  if (process.env.CI === 'true') throw new Error(`CI=true but ${missing.join(', ')} missing: the chaos run cannot start (see .ci/run)`);
  console.warn(`\n!!! SKIPPING the chaos run: ${missing.join(', ')} not installed !!!\n`);
}

describe.skipIf(missing.length > 0)('chaos run (short)', () => {
  it('injects every fault kind under load: 0 double assignments, 0 lost, 0 stuck, 0 late, 0 acked successes failed, no fleet collapse', async () => {
    const seed = Number(process.env.PAPRIKA_CHAOS_SEED ?? 20261202);
    const progress: string[] = [];
    let report;
    try {
      report = await runChaos({ seed, durationS: 15, hubs: 3, agents: 20, lanes: 2, clients: 6, plan: [...FAULT_KINDS], say: (l) => progress.push(`chaos: ${l}`) });
    } finally {
      console.log(progress.join('\n'));
    }
    console.log(`\n${formatChaosReport(report)}\n`);
    const v = report.verdict;
    expect(new Set(report.faults.map((f) => f.kind))).toEqual(new Set(FAULT_KINDS));
    expect(v.jobs).toBeGreaterThan(200);
    expect(report.fleetDuringPauses.length).toBeGreaterThan(0);
    expect({ double: v.doubleAssignments, ranTwice: v.ranTwice, lost: v.lost, stuck: v.stuck, late: v.late, unexplained: v.unexplained, succeededButFailed: v.succeededButFailed, examples: report.examples }).toEqual({ double: [], ranTwice: [], lost: [], stuck: [], late: [], unexplained: [], succeededButFailed: [], examples: [] });
    expect(report.fleetCollapses).toBe(0);
    expect(report.faultProblems).toEqual([]);
    expect(chaosPassed(report)).toBe(true);
  }, 600_000);
});
