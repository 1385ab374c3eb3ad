// The chaos run's checks must be able to fail: made-up agent logs and rows with a double
// assignment, a second run, a lost, a stuck and a late job, and a success no agent ran.
import { describe, expect, it } from 'vitest';
import { judge, runsFromLogs, type DbJob } from '../../harness/chaos/evidence.ts';

const line = (msg: string, time: number, job_id: string, assignment_id: string, extra: Record<string, unknown> = {}) => JSON.stringify({ level: 30, time, msg, job_id, assignment_id, ...extra });
const row = (id: string, status: string, o: Partial<DbJob> = {}): DbJob => ({ id, status, worker_id: 'w1', session_id: `a-${id}`, created_at: new Date(1000), finished_at: status === 'queued' || status === 'running' ? null : new Date(2000), ...o });

describe('chaos evidence', () => {
  it('reads runs from pino lines, skipping a line cut by SIGKILL, and ends an open run at the process end', () => {
    const log = [line('job started', 100, 'j1', 'a1'), line('job finished', 300, 'j1', 'a1', { status: 'succeeded' }), line('job started', 400, 'j2', 'a2'), '{"level":30,"time":5'].join('\n');
    const runs = runsFromLogs([{ workerId: 'w1', log, endedAt: 900 }], 10_000);
    expect(runs).toEqual([
      { job_id: 'j1', assignment_id: 'a1', worker_id: 'w1', startedAt: 100, endedAt: 300, status: 'succeeded' },
      { job_id: 'j2', assignment_id: 'a2', worker_id: 'w1', startedAt: 400, endedAt: 900 },
    ]);
  });

  it('passes a clean run', () => {
    const runs = runsFromLogs([{ workerId: 'w1', log: [line('job started', 1100, 'j1', 'a-j1'), line('job finished', 1500, 'j1', 'a-j1', { status: 'succeeded' })].join('\n') }], 5000);
    const v = judge({ runs, db: [row('j1', 'succeeded')], accepted: ['j1'], boundS: 10 });
    expect([v.doubleAssignments, v.ranTwice, v.lost, v.stuck, v.late, v.unexplained]).toEqual([[], [], [], [], [], []]);
    expect(v.byStatus).toEqual({ succeeded: 1 });
  });

  it('flags overlapping runs on two workers as a double assignment, and back-to-back ones as ran twice only', () => {
    const runs = runsFromLogs(
      [
        { workerId: 'w1', log: [line('job started', 100, 'jd', 'x1'), line('job finished', 500, 'jd', 'x1', { status: 'succeeded' }), line('job started', 100, 'js', 's1'), line('job finished', 200, 'js', 's1', { status: 'failed' })].join('\n') },
        { workerId: 'w2', log: [line('job started', 300, 'jd', 'x2'), line('job finished', 600, 'jd', 'x2', { status: 'succeeded' }), line('job started', 250, 'js', 's2'), line('job finished', 400, 'js', 's2', { status: 'succeeded' })].join('\n') },
      ],
      1000,
    );
    const v = judge({ runs, db: [row('jd', 'succeeded', { session_id: 'x2', worker_id: 'w2' }), row('js', 'succeeded', { session_id: 's2', worker_id: 'w2' })], accepted: [], boundS: 10 });
    expect(v.doubleAssignments).toEqual(['jd']);
    expect(v.ranTwice.sort()).toEqual(['jd', 'js']);
  });

  it('flags lost, stuck and late jobs, and a success no agent logged', () => {
    const v = judge({
      runs: [],
      db: [row('stuck', 'running'), row('late', 'failed', { finished_at: new Date(60_000) }), row('ghost', 'succeeded')],
      accepted: ['stuck', 'late', 'ghost', 'missing'],
      boundS: 30,
    });
    expect(v.lost).toEqual(['missing']);
    expect(v.stuck).toEqual(['stuck']);
    expect(v.late).toEqual(['late']);
    expect(v.unexplained).toEqual(['ghost']);
    expect(v.maxTimeToTerminalS).toBe(59);
  });

  it('counts a run the agent finished with success whose job ended failed', () => {
    const runs = runsFromLogs([{ workerId: 'w1', log: [line('job started', 1100, 'j1', 'a-j1'), line('job finished', 1200, 'j1', 'a-j1', { status: 'succeeded' })].join('\n') }], 5000);
    expect(judge({ runs, db: [row('j1', 'failed')], accepted: ['j1'], boundS: 10 }).resultsNotRecorded).toBe(1);
  });

  it('flags a job whose succeeded result a hub acked (the worker logged it) but Postgres has as failed; a result replaced as too large is not', () => {
    const log = [
      line('job started', 1100, 'j1', 'a-j1'),
      line('job finished', 1200, 'j1', 'a-j1', { status: 'succeeded' }),
      line('result acked', 1210, 'j1', 'a-j1', { status: 'succeeded' }),
      line('job started', 1300, 'j2', 'a-j2'),
      line('job finished', 1400, 'j2', 'a-j2', { status: 'succeeded' }),
      line('job result replaced', 1400, 'j2', 'a-j2', { status: 'failed' }),
      line('result acked', 1410, 'j2', 'a-j2', { status: 'failed' }),
      line('job started', 1500, 'j3', 'a-j3'),
      line('job finished', 1600, 'j3', 'a-j3', { status: 'succeeded' }),
    ].join('\n');
    const runs = runsFromLogs([{ workerId: 'w1', log }], 5000);
    expect(runs.map((r) => r.acked)).toEqual(['succeeded', 'failed', undefined]);
    const v = judge({ runs, db: [row('j1', 'failed'), row('j2', 'failed'), row('j3', 'failed')], accepted: ['j1', 'j2', 'j3'], boundS: 10 });
    expect(v.succeededButFailed).toEqual(['j1']);
    // j3: its agent never had an ack (killed holding the result): counted apart, not a verdict failure.
    expect(v.resultsNotRecorded).toBe(3);
  });
});
