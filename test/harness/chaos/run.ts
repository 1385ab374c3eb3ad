// One chaos run (issue 9): a real fleet under load while faults are injected, then the
// verdict from Postgres and from every agent's own log. Used by `npm run chaos` (long) and by
// test/e2e/chaos.test.ts (short). Seeded: the same seed injects the same faults in order.
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { createClient, PaprikaApiError } from '../../../hub-core/client/index.ts';
import { seededRandom, type Random } from '../../../hub-core/src/wire/random.ts';
import { metricSum } from '../prometheus.ts';
import { CHAOS_ENV, ChaosCluster } from './cluster.ts';
import { judge, runsFromLogs, type DbJob, type Run, type Verdict } from './evidence.ts';
import { FaultInjector, type FaultKind, type FaultRecord } from './faults.ts';

export interface ChaosOptions {
  seed: number;
  /** How long load and faults run; the settling afterwards is bounded separately. */
  durationS: number;
  hubs: number;
  agents: number;
  lanes: number;
  /** Concurrent submitting clients. */
  clients: number;
  /** Faults to inject first, in this order (the run lasts until they are done, however long durationS is). */
  plan?: FaultKind[];
  say?: (line: string) => void;
}

export interface ChaosReport {
  options: Omit<ChaosOptions, 'say' | 'plan'>;
  verdict: Verdict;
  faults: FaultRecord[];
  faultProblems: string[];
  submitted: number;
  refused: number;
  cancelsSent: number;
  /** Smallest alive count any hub served during a Redis pause, and the count before it. */
  fleetDuringPauses: Array<{ before: number; min: number; samples: number }>;
  fleetCollapses: number;
  boundS: number;
  metrics: Record<string, number>;
  /** For the first few jobs that broke a rule: their runs and their row, to start the search. */
  examples: Array<{ rule: string; job: DbJob | undefined; runs: Run[] }>;
  seconds: number;
}

const JOB_TIMEOUT_S = 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One short-lived connection to the run's Postgres (it restarts: no pool outlives a query). */
async function withPg<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Every job, accepted by a hub or not, as Postgres has it. */
const readJobs = (url: string) => withPg(url, async (c) => (await c.query<DbJob>('SELECT id, status, error, worker_id, session_id, created_at, finished_at FROM jobs')).rows);

const openJobs = (url: string) => withPg(url, async (c) => (await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE status IN ('queued', 'running')`)).rows[0].n);

/** Sums of the counters that tell what the hubs did, over every hub's /metrics. */
async function scrapeMetrics(urls: string[]): Promise<Record<string, number>> {
  const wanted = ['paprika_assignments_total', 'paprika_redrive_assigned_total', 'paprika_reconciler_actions_total', 'paprika_forwards_total', 'paprika_job_rejections_total', 'paprika_relink_orphans_total'];
  const texts = await Promise.all(urls.map((url) => fetch(`${url}/metrics`).then((r) => r.text()).catch(() => '')));
  return Object.fromEntries(wanted.map((name) => [name, texts.reduce((sum, t) => sum + metricSum(t, name), 0)]));
}

/** One submitting client: sleep jobs of random length, now and then a cancel. */
async function clientLoop(url: string, rng: Random, running: () => boolean, accepted: Set<string>, counts: { submitted: number; refused: number; cancels: number }): Promise<void> {
  const client = createClient({ url, deadlineMs: 30_000, baseDelayMs: 50, maxDelayMs: 1000 });
  while (running()) {
    counts.submitted++;
    try {
      const job = await client.submit({ kind: 'sleep', spec: { ms: Math.round(20 + rng.next() * 380), timeout_s: JOB_TIMEOUT_S } });
      accepted.add(job.id);
      if (rng.next() < 0.02) {
        counts.cancels++;
        await client.cancel(job.id).catch(() => {});
      }
    } catch (err) {
      // The SDK gave up within its deadline (every hub refused or was down): not accepted.
      counts.refused++;
      if (err instanceof PaprikaApiError && err.status < 500) throw err;
    }
    await sleep(rng.next() * 40);
  }
}

export async function runChaos(o: ChaosOptions): Promise<ChaosReport> {
  const say = o.say ?? (() => {});
  const started = Date.now();
  const rng = seededRandom(o.seed);
  const cluster = await ChaosCluster.start({ hubs: o.hubs, agents: o.agents, lanes: o.lanes, say });
  try {
    const accepted = new Set<string>();
    const counts = { submitted: 0, refused: 0, cancels: 0 };
    const injector = new FaultInjector(cluster, rng);
    const until = Date.now() + o.durationS * 1000;
    const plan = [...(o.plan ?? [])];
    let loadOn = true;
    say(`load: ${o.clients} clients for ${o.durationS} s${plan.length ? ` or until ${plan.join(', ')} were injected` : ''}; faults one at a time (seed ${o.seed})`);
    const load = Promise.all(Array.from({ length: o.clients }, (_, i) => clientLoop(cluster.nginx.url, seededRandom(o.seed * 1000 + i), () => loadOn, accepted, counts)));
    while (Date.now() < until - 1000 || plan.length > 0) {
      await sleep(300 + rng.next() * 700);
      const f = await injector.next(plan.shift());
      say(`fault ${injector.records.length}: ${f.kind} ${f.target} (${f.healedAt - f.at} ms)${f.problem ? ` — ${f.problem}` : ''}`);
    }
    loadOn = false;
    await load;
    await injector.settle();
    const faults = injector.records;
    for (const id of injector.submitted) accepted.add(id);
    const pauses = injector.pauses;
    const pgDownMs = injector.postgresDownMs;
    await load;
    say(`load done: ${accepted.size} jobs accepted, ${counts.refused} submissions refused; settling`);

    // Every accepted job must become terminal within its deadline plus the reconciler's
    // bound: queued at most QUEUED_TIMEOUT, then running at most its timeout plus ORPHAN_GRACE
    // (a result on its way), then one reconciler pass; Postgres restarts delay all of that by their downtime.
    const boundS = Number(CHAOS_ENV.PAPRIKA_QUEUED_TIMEOUT_S) + JOB_TIMEOUT_S + Number(CHAOS_ENV.PAPRIKA_ORPHAN_GRACE_S) + 2 * Number(CHAOS_ENV.PAPRIKA_RECONCILE_INTERVAL_S) + pgDownMs / 1000 + 3;
    const settleUntil = Date.now() + boundS * 1000;
    while (Date.now() < settleUntil && (await openJobs(cluster.pg.url)) > 0) await sleep(250);
    const metrics = await scrapeMetrics(cluster.hubs.map((h) => h.url));

    // Graceful stop of every agent flushes its log; then the evidence is read.
    await Promise.all(cluster.agents.map((_, j) => cluster.stopAgent(j, 'SIGTERM')));
    const db = await readJobs(cluster.pg.url);
    const runs = runsFromLogs(cluster.incarnations(), Date.now());
    const verdict = judge({ runs, db, accepted, boundS });
    const examples = (['doubleAssignments', 'ranTwice', 'lost', 'stuck', 'late', 'unexplained', 'succeededButFailed'] as const).flatMap((rule) =>
      verdict[rule].slice(0, 5).map((id) => ({ rule, job: db.find((j) => j.id === id), runs: runs.filter((r) => r.job_id === id) })),
    );
    if (process.env.PAPRIKA_CHAOS_LOGS) {
      fs.mkdirSync(process.env.PAPRIKA_CHAOS_LOGS, { recursive: true });
      cluster.incarnations().forEach((inc, k) => fs.writeFileSync(path.join(process.env.PAPRIKA_CHAOS_LOGS!, `${inc.workerId}-${k}.log`), inc.log));
    }
    const fleetDuringPauses = pauses.map((p) => ({ before: p.before, min: Math.min(...p.samples.map((s) => s.alive)), samples: p.samples.length }));
    return {
      options: { seed: o.seed, durationS: o.durationS, hubs: o.hubs, agents: o.agents, lanes: o.lanes, clients: o.clients },
      verdict,
      faults,
      faultProblems: faults.filter((f) => f.problem).map((f) => `${f.kind} ${f.target}: ${f.problem}`),
      submitted: counts.submitted,
      refused: counts.refused,
      cancelsSent: counts.cancels,
      fleetDuringPauses,
      fleetCollapses: pauses.reduce((n, p) => n + p.samples.filter((s) => s.alive < p.before).length, 0),
      boundS,
      metrics,
      examples,
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    await cluster.stop();
  }
}

export function formatChaosReport(r: ChaosReport): string {
  const v = r.verdict;
  const faultCounts = new Map<string, number>();
  for (const f of r.faults) faultCounts.set(f.kind, (faultCounts.get(f.kind) ?? 0) + 1);
  const rows: Array<[string, string]> = [
    ['seed', String(r.options.seed)],
    ['fleet', `${r.options.hubs} hubs, ${r.options.agents} agents × ${r.options.lanes} lanes, ${r.options.clients} clients, ${r.options.durationS} s`],
    ['jobs', `${v.jobs} (${Object.entries(v.byStatus).map(([s, n]) => `${s} ${n}`).join(', ')}); ${r.submitted - r.refused} accepted, ${r.refused} refused after retries`],
    ['runs logged by agents', String(v.runs)],
    ['faults injected', `${r.faults.length} (${[...faultCounts].map(([k, n]) => `${k} ${n}`).join(', ')})`],
    ['double assignments', String(v.doubleAssignments.length)],
    ['ran twice', String(v.ranTwice.length)],
    ['lost', String(v.lost.length)],
    ['stuck', String(v.stuck.length)],
    ['late (past the bound)', `${v.late.length} (bound ${r.boundS.toFixed(1)} s)`],
    ['succeeded without a run', String(v.unexplained.length)],
    ['max time to terminal', `${v.maxTimeToTerminalS.toFixed(2)} s`],
    ['fleet during Redis pauses', r.fleetDuringPauses.length ? r.fleetDuringPauses.map((p) => `${p.min}/${p.before}`).join(', ') + ` (min/before), ${r.fleetCollapses} collapsed samples` : 'no pause injected'],
    ['succeeded on a worker, failed in Postgres', `${v.succeededButFailed.length} (results a hub acked as succeeded)`],
    ['results lost with a killed agent', String(v.resultsNotRecorded)],
    ['hub counters (since start)', Object.entries(r.metrics).map(([k, n]) => `${k.replace(/^paprika_|_total$/g, '')} ${n}`).join(', ')],
    ['fault problems', r.faultProblems.length ? r.faultProblems.join('; ') : 'none'],
    ['took', `${r.seconds.toFixed(1)} s`],
  ];
  const w = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, val]) => `${k.padEnd(w)}  ${val}`).join('\n');
}

/** The run passed: nothing doubled, lost, stuck or late, no acked success failed, no collapse, every fault as expected. */
export function chaosPassed(r: ChaosReport): boolean {
  const v = r.verdict;
  return v.doubleAssignments.length === 0 && v.ranTwice.length === 0 && v.lost.length === 0 && v.stuck.length === 0 && v.late.length === 0 && v.unexplained.length === 0 && v.succeededButFailed.length === 0 && r.fleetCollapses === 0 && r.faultProblems.length === 0;
}
