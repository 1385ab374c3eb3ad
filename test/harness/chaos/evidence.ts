// The chaos run's verdict, from two independent records: what every agent process logged it
// ran ('job started' / 'job finished' lines, one log per process incarnation) and what
// Postgres says each job became. Pure functions over plain data, so the checks themselves
// are unit-tested with made-up logs that must trip them.

/** One agent process's log (a restarted agent is a new incarnation with a log of its own). */
export interface AgentIncarnation {
  workerId: string;
  /** Raw pino JSON lines. */
  log: string;
  /** When the process ended (epoch ms); undefined while it runs. A run it left open ends here. */
  endedAt?: number;
}

export interface Run {
  job_id: string;
  assignment_id: string;
  worker_id: string;
  startedAt: number;
  /** End of the run: its 'job finished' line, else the end of its process. */
  endedAt: number;
  /** Status the agent reported, undefined when the process died first. */
  status?: string;
  /** Status of the result a hub acked ('result acked'): what the worker told the hub, and the hub took. */
  acked?: string;
}

export interface DbJob {
  id: string;
  status: string;
  /** Why it failed (the report's examples show it). */
  error?: string | null;
  worker_id: string | null;
  session_id: string | null;
  created_at: Date;
  finished_at: Date | null;
}

export interface Verdict {
  jobs: number;
  byStatus: Record<string, number>;
  runs: number;
  /** Jobs two runs of which overlapped in time (on two workers, or two lanes). */
  doubleAssignments: string[];
  /** Jobs that started running more than once, overlapping or not. */
  ranTwice: string[];
  /** Accepted by a hub (the client got the job back) but not in Postgres. */
  lost: string[];
  /** Not terminal when the run ended. */
  stuck: string[];
  /** Terminal later than the bound after creation. */
  late: string[];
  /** Succeeded in Postgres, but no agent logged a run of that assignment that succeeded. */
  unexplained: string[];
  /** A run the agent finished with success whose job ended failed (its agent was killed before the hub had the result, or the deadline passed first). */
  resultsNotRecorded: number;
  /** Jobs a hub acked a `succeeded` result for (the worker's own log says so) that Postgres has as failed: a result taken and dropped. */
  succeededButFailed: string[];
  maxTimeToTerminalS: number;
}

const TERMINAL = new Set(['succeeded', 'failed', 'canceled']);

/** Every run in the agents' logs. Lines that are not JSON (a line cut by SIGKILL) are skipped. */
export function runsFromLogs(incarnations: readonly AgentIncarnation[], nowMs: number): Run[] {
  const runs: Run[] = [];
  for (const inc of incarnations) {
    const open = new Map<string, Run>();
    const done = new Map<string, Run>();
    for (const line of inc.log.split('\n')) {
      if (!line.startsWith('{')) continue;
      let rec: { msg?: string; time?: number; job_id?: string; assignment_id?: string; status?: string };
      try {
        rec = JSON.parse(line);
      } catch {
        continue;
      }
      if (!rec.job_id || !rec.assignment_id || typeof rec.time !== 'number') continue;
      if (rec.msg === 'job started') {
        const run: Run = { job_id: rec.job_id, assignment_id: rec.assignment_id, worker_id: inc.workerId, startedAt: rec.time, endedAt: Number.POSITIVE_INFINITY };
        open.set(rec.assignment_id, run);
        runs.push(run);
      } else if (rec.msg === 'job finished') {
        const run = open.get(rec.assignment_id);
        if (!run) continue;
        run.endedAt = rec.time;
        run.status = rec.status;
        open.delete(rec.assignment_id);
        done.set(rec.assignment_id, run);
      } else if (rec.msg === 'result acked') {
        const run = done.get(rec.assignment_id);
        if (run) run.acked = rec.status;
      }
    }
    for (const run of open.values()) run.endedAt = inc.endedAt ?? nowMs;
  }
  return runs;
}

export function judge(input: { runs: readonly Run[]; db: readonly DbJob[]; accepted: Iterable<string>; boundS: number }): Verdict {
  const byJob = new Map<string, Run[]>();
  for (const r of input.runs) byJob.set(r.job_id, [...(byJob.get(r.job_id) ?? []), r]);
  const doubleAssignments: string[] = [];
  const ranTwice: string[] = [];
  for (const [jobId, runs] of byJob) {
    if (runs.length < 2) continue;
    ranTwice.push(jobId);
    const sorted = [...runs].sort((a, b) => a.startedAt - b.startedAt);
    if (sorted.some((r, i) => i > 0 && r.startedAt < sorted[i - 1].endedAt)) doubleAssignments.push(jobId);
  }

  const dbById = new Map(input.db.map((j) => [j.id, j]));
  const lost = [...new Set(input.accepted)].filter((id) => !dbById.has(id));
  const byStatus: Record<string, number> = {};
  const stuck: string[] = [];
  const late: string[] = [];
  const unexplained: string[] = [];
  let resultsNotRecorded = 0;
  const succeededButFailed: string[] = [];
  let maxTimeToTerminalS = 0;
  const runsByAssignment = new Map(input.runs.map((r) => [r.assignment_id, r]));
  for (const j of input.db) {
    byStatus[j.status] = (byStatus[j.status] ?? 0) + 1;
    if (!TERMINAL.has(j.status) || !j.finished_at) {
      stuck.push(j.id);
      continue;
    }
    const tookS = (j.finished_at.getTime() - j.created_at.getTime()) / 1000;
    maxTimeToTerminalS = Math.max(maxTimeToTerminalS, tookS);
    if (tookS > input.boundS) late.push(j.id);
    if (j.status === 'succeeded') {
      const run = j.session_id ? runsByAssignment.get(j.session_id) : undefined;
      if (!run || run.worker_id !== j.worker_id || run.status !== 'succeeded') unexplained.push(j.id);
    }
  }
  for (const r of input.runs) {
    if (r.status !== 'succeeded') continue;
    const j = dbById.get(r.job_id);
    if (j?.status === 'failed') resultsNotRecorded++;
    if (j?.status === 'failed' && r.acked === 'succeeded') succeededButFailed.push(r.job_id);
  }
  return { jobs: input.db.length, byStatus, runs: input.runs.length, doubleAssignments, ranTwice, lost, stuck, late, unexplained, resultsNotRecorded, succeededButFailed: [...new Set(succeededButFailed)], maxTimeToTerminalS };
}
