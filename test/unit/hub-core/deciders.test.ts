import { describe, expect, it } from 'vitest';
import { backoffMs, jitteredMs } from '../../../hub-core/src/wire/backoff.ts';
import { decideReconcile } from '../../../hub-core/src/domain/reconcile.ts';
import { decideRedrive } from '../../../hub-core/src/domain/redrive.ts';
import { seededRandom } from '../../../hub-core/src/wire/random.ts';

const T = 10_000_000;
const d = (ms: number) => new Date(T + ms);

describe('decideRedrive', () => {
  const cfg = { redriveMinAgeS: 90 };
  const q = (id: string, ageS: number, released = false, worker: string | null = null) => ({ id, created_at: d(-ageS * 1000), released_at: released ? d(-1) : null, worker_id: worker });

  it('takes jobs past the age gate oldest first, up to the free lanes', () => {
    const rows = [q('a', 300), q('b', 200), q('c', 100)];
    expect(decideRedrive(rows, { freeLanes: 2 }, T, cfg)).toEqual({ take: ['a', 'b'], gated: 0 });
  });

  it('leaves younger jobs to the POST that may still hold them', () => {
    expect(decideRedrive([q('young', 89), q('old', 91)], { freeLanes: 5 }, T, cfg)).toEqual({ take: ['old'], gated: 1 });
  });

  it('takes a released job at once, whatever its age', () => {
    expect(decideRedrive([q('r', 0.5, true)], { freeLanes: 1 }, T, cfg).take).toEqual(['r']);
  });

  it('never takes a job that was already handed to a worker (guard 2)', () => {
    expect(decideRedrive([q('x', 500, true, 'w1')], { freeLanes: 1 }, T, cfg).take).toEqual([]);
  });

  it('takes nothing without a free lane', () => {
    expect(decideRedrive([q('a', 500)], { freeLanes: 0 }, T, cfg).take).toEqual([]);
  });
});

describe('decideReconcile', () => {
  const cfg = { orphanGraceS: 300, queuedTimeoutS: 180 };
  const running = (id: string, worker: string, over: Partial<{ assigned_at: Date; deadline_at: Date | null }> = {}) => ({ id, worker_id: worker, session_id: `a-${id}`, assigned_at: d(-1000_000), deadline_at: null, ...over });
  const fleet = (workers: Record<string, { alive: boolean; last_seen_ms: number }>, partial = false) => ({ workers: new Map(Object.entries(workers)), partial });

  it('leaves jobs of workers alive anywhere in the fleet alone (other hubs too)', () => {
    expect(decideReconcile({ running: [running('j', 'w-other-hub')], queued: [] }, fleet({ 'w-other-hub': { alive: true, last_seen_ms: T } }), T, cfg)).toEqual([]);
  });

  it('fails a running job whose worker is gone for the whole grace, not before', () => {
    const rows = { running: [running('j', 'w1')], queued: [] };
    expect(decideReconcile(rows, fleet({ w1: { alive: false, last_seen_ms: T - 299_000 } }), T, cfg)).toEqual([]);
    const actions = decideReconcile(rows, fleet({ w1: { alive: false, last_seen_ms: T - 300_000 } }), T, cfg);
    expect(actions).toEqual([expect.objectContaining({ kind: 'fail_running', job_id: 'j', reason: 'orphan', assignment_id: 'a-j' })]);
  });

  it('counts the grace from the assignment for a worker the fleet never saw', () => {
    const rows = { running: [running('j', 'w9', { assigned_at: d(-10_000) })], queued: [] };
    expect(decideReconcile(rows, fleet({}), T, cfg)).toEqual([]);
    expect(decideReconcile(rows, fleet({}), T + 300_000, cfg)).toHaveLength(1);
  });

  it('counts the grace from when this hub first saw the worker missing, not from rows a restarted Redis forgot', () => {
    const rows = { running: [running('j', 'w1', { assigned_at: d(-1000_000) })], queued: [] };
    const missing = (since: number) => ({ ...fleet({}), absentSince: new Map([['w1', since]]) });
    expect(decideReconcile(rows, missing(T), T, cfg)).toEqual([]);
    expect(decideReconcile(rows, missing(T - 299_000), T, cfg)).toEqual([]);
    expect(decideReconcile(rows, missing(T - 300_000), T, cfg)).toEqual([expect.objectContaining({ job_id: 'j', reason: 'orphan' })]);
  });

  it('counts the grace from when this hub started watching: a restarted hub waits for the workers to re-link', () => {
    const rows = { running: [running('j', 'w1')], queued: [] };
    const dead = { w1: { alive: false, last_seen_ms: T - 1000_000 } };
    expect(decideReconcile(rows, { ...fleet(dead), watchingSince: T - 10_000 }, T, cfg)).toEqual([]);
    expect(decideReconcile(rows, { ...fleet(dead), watchingSince: T - 300_000 }, T, cfg)).toHaveLength(1);
  });

  it('makes no orphan call on a partial view (registry down), but still enforces deadlines (after ORPHAN_GRACE: a result may be on its way)', () => {
    const rows = { running: [running('j', 'w1'), running('late', 'w1', { deadline_at: d(-300_001) }), running('in-transit', 'w1', { deadline_at: d(-299_000) })], queued: [] };
    const actions = decideReconcile(rows, fleet({}, true), T, cfg);
    expect(actions).toEqual([expect.objectContaining({ job_id: 'late', reason: 'timeout', error: 'timeout' })]);
  });

  it('fails queued jobs unassigned for QUEUED_TIMEOUT with "queued timeout"', () => {
    const queued = [
      { id: 'old', worker_id: null, created_at: d(-180_000) },
      { id: 'new', worker_id: null, created_at: d(-179_000) },
    ];
    expect(decideReconcile({ running: [], queued }, fleet({}), T, cfg)).toEqual([{ kind: 'fail_queued', job_id: 'old', error: 'queued timeout', reason: 'queued_timeout' }]);
  });
});

describe('jitter', () => {
  it('spreads a fleet-wide threshold over 0..JITTER_MAX', () => {
    const r = seededRandom(7);
    const values = Array.from({ length: 1000 }, () => jitteredMs(1000, 60, r));
    expect(Math.min(...values)).toBeGreaterThanOrEqual(1000);
    expect(Math.max(...values)).toBeLessThan(61_000);
    expect(Math.max(...values) - Math.min(...values)).toBeGreaterThan(50_000);
  });

  it('backs off exponentially up to the cap, never below half the step', () => {
    const r = seededRandom(3);
    expect(backoffMs(0, 100, 10_000, r)).toBeGreaterThanOrEqual(50);
    expect(backoffMs(0, 100, 10_000, r)).toBeLessThan(100);
    for (let i = 0; i < 100; i++) expect(backoffMs(30, 100, 10_000, r)).toBeLessThanOrEqual(10_000);
    expect(backoffMs(30, 100, 10_000, r)).toBeGreaterThanOrEqual(5000);
  });
});
