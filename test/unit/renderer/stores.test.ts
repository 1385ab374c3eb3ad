import { beforeEach, describe, expect, it } from 'vitest';
import type { Job, Worker } from '../../../renderer/src/api/types.ts';
import { parseAdminEvent } from '../../../renderer/src/api/client.ts';
import { chartFrame, isEmptyFrame, tickLabel, timeTicks } from '../../../renderer/src/model/chart-data.ts';
import { filterJobs, timeline, upsertJob } from '../../../renderer/src/model/job-list.ts';
import { fleetStore } from '../../../renderer/src/stores/fleet.ts';
import { connectionStore } from '../../../renderer/src/stores/connection.ts';

const row = (id: string, status = 'active'): Worker => ({ worker_id: id, hub_id: 'h', status, alive: true, in_flight: 0, max_concurrent: 1, disk_pct: 1, cpu_pct: 1, mem_pct: 1, last_seen: '2026-01-01T00:00:00Z', version: null, platform: null, lan_ip: '10.0.0.1', hostname: 'h', lanes: [] });
const job = (id: string, created: string, over: Partial<Job> = {}): Job => ({ id, kind: 'sleep', spec: { ms: 1 }, status: 'queued', worker_id: null, lane: null, hub_id: null, session_id: null, novnc_url: null, error: null, result: null, attempts: 0, created_at: created, assigned_at: null, finished_at: null, ...over });

describe('fleet store', () => {
  beforeEach(() => fleetStore.setState({ workers: [], pending: {} }));

  it('keeps a requested status pending until a row carrying it arrives', () => {
    const s = fleetStore.getState();
    s.setPending('w1', 'drain');
    s.setWorkers([row('w1', 'active')], '2026-01-01T00:00:00Z', false);
    expect(fleetStore.getState().pending).toEqual({ w1: 'drain' });
    s.setWorkers([row('w1', 'drain')], '2026-01-01T00:00:01Z', false);
    expect(fleetStore.getState().pending).toEqual({});
  });

  it('patches one row and keeps its lanes when the patch has none', () => {
    const s = fleetStore.getState();
    s.setWorkers([{ ...row('w1'), lanes: [{ index: 0, view_url: null, busy: false, job_id: null }] }, row('w2')], 'x', false);
    s.patchWorker({ worker_id: 'w1', status: 'standby' });
    const [w1, w2] = fleetStore.getState().workers;
    expect(w1.status).toBe('standby');
    expect(w1.lanes).toHaveLength(1);
    expect(w2.status).toBe('active');
  });

  it('keeps the objects of unchanged workers, and the array itself when nothing changed', () => {
    const s = fleetStore.getState();
    const lanes = () => [{ index: 0, view_url: null, busy: false, job_id: null }];
    s.setWorkers([{ ...row('w1'), lanes: lanes() }, row('w2')], 'a', false);
    const first = fleetStore.getState().workers;
    const pending = fleetStore.getState().pending;
    // Fresh objects from the next snapshot, equal in content: the previous ones stay.
    s.setWorkers([{ ...row('w1'), lanes: lanes() }, row('w2')], 'b', false);
    expect(fleetStore.getState().workers).toBe(first);
    expect(fleetStore.getState().pending).toBe(pending);
    // One heartbeat and one lane change: only those rows are new objects.
    s.setWorkers([{ ...row('w1'), lanes: [{ ...lanes()[0], busy: true }] }, { ...row('w2'), last_seen: '2026-01-01T00:00:05Z' }, row('w3')], 'c', false);
    const [w1, w2, w3] = fleetStore.getState().workers;
    expect(w1).not.toBe(first[0]);
    expect(w1.lanes[0].busy).toBe(true);
    expect(w2.last_seen).toBe('2026-01-01T00:00:05Z');
    expect(w3.worker_id).toBe('w3');
    s.setWorkers([{ ...row('w1'), lanes: [{ ...lanes()[0], busy: true }] }, { ...row('w2'), last_seen: '2026-01-01T00:00:05Z' }, row('w3')], 'd', false);
    const after = fleetStore.getState().workers;
    expect(after[0]).toBe(w1);
    expect(after[2]).toBe(w3);
    // A worker gone from the snapshot is gone from the store.
    s.setWorkers([w1], 'e', false);
    expect(fleetStore.getState().workers.map((w) => w.worker_id)).toEqual(['w1']);
  });
});

describe('connection store', () => {
  it('records failure time once and clears it on the next answer', () => {
    const s = connectionStore.getState();
    s.failed(100, 'down');
    s.failed(200, 'down');
    expect(connectionStore.getState().link.failingSince).toBe(100);
    s.ok(300, false);
    expect(connectionStore.getState().link.failingSince).toBeNull();
  });
});

describe('jobs list', () => {
  it('merges job deltas newest first, replacing by id, capped', () => {
    let list = [job('a', '2026-01-01T00:00:01Z'), job('b', '2026-01-01T00:00:00Z')];
    list = upsertJob(list, job('c', '2026-01-01T00:00:02Z'));
    list = upsertJob(list, { ...job('b', '2026-01-01T00:00:00Z'), status: 'succeeded' });
    expect(list.map((j) => `${j.id}:${j.status}`)).toEqual(['c:queued', 'a:queued', 'b:succeeded']);
    expect(upsertJob(list, job('d', '2026-01-01T00:00:03Z'), 2).map((j) => j.id)).toEqual(['d', 'c']);
  });

  it('filters by status and by text', () => {
    const list = [job('a1', 'x', { status: 'failed', error: 'timeout' }), job('b2', 'x', { worker_id: 'w50150' })];
    expect(filterJobs(list, 'failed', '').map((j) => j.id)).toEqual(['a1']);
    expect(filterJobs(list, '', 'w50150').map((j) => j.id)).toEqual(['b2']);
    expect(filterJobs(list, '', 'TIMEOUT').map((j) => j.id)).toEqual(['a1']);
  });

  it('builds the created → assigned → finished timeline, naming the final status', () => {
    const t = timeline(job('a', 't0', { assigned_at: 't1', finished_at: 't2', status: 'failed' }));
    expect(t).toEqual([{ label: 'created', at: 't0' }, { label: 'assigned', at: 't1' }, { label: 'failed', at: 't2' }]);
    expect(timeline(job('a', 't0')).map((s) => s.at)).toEqual(['t0', null, null]);
  });
});

describe('admin events and chart data', () => {
  it('accepts known frames and drops the rest', () => {
    expect(parseAdminEvent('{"type":"job","job":{}}')?.type).toBe('job');
    expect(parseAdminEvent('{"type":"nope"}')).toBeNull();
    expect(parseAdminEvent('not json')).toBeNull();
    expect(parseAdminEvent(42)).toBeNull();
  });

  it('plots each bucket at its middle inside the window, with utilisation in percent', () => {
    const h = {
      range: '15m',
      bucket_s: 30,
      from: '2026-01-01T01:45:00Z',
      to: '2026-01-01T02:00:00Z',
      buckets: [
        { t: '2026-01-01T01:59:30Z', succeeded: 3, failed: 1, queued: 2, oldest_queued_s: 4, in_flight: 3, capacity: 4 },
        { t: '2026-01-01T01:45:00Z', succeeded: 0, failed: 0, queued: null, oldest_queued_s: null, in_flight: null, capacity: null },
        { t: '2026-01-01T01:59:00Z', succeeded: 0, failed: 0, queued: 1, oldest_queued_s: 1, in_flight: 0, capacity: 0 },
      ],
    };
    const f = chartFrame(h)!;
    expect(f.domain).toEqual([Date.parse(h.from), Date.parse(h.to)]);
    expect(f.points.map((p) => p.t)).toEqual([Date.parse('2026-01-01T01:45:15Z'), Date.parse('2026-01-01T01:59:15Z'), Date.parse('2026-01-01T01:59:45Z')]);
    expect(f.points.map((p) => p.utilisation)).toEqual([null, null, 75]);
    for (const p of f.points) expect(p.t > f.domain[0] && p.t < f.domain[1]).toBe(true);
    expect(isEmptyFrame(f)).toBe(false);
    expect(isEmptyFrame(chartFrame({ ...h, buckets: [h.buckets[1]] }))).toBe(true);
    expect(isEmptyFrame(null)).toBe(true);
  });

  it('ticks on whole buckets, at most 8, inside the window, with labels that never repeat', () => {
    for (const [spanS, bucketS] of [
      [900, 30],
      [3600, 60],
      [86_400, 1800],
    ]) {
      for (const to of [Date.parse('2026-01-01T00:00:00Z'), Date.parse('2026-03-05T17:30:00Z'), Date.parse('2026-03-05T17:31:30Z')]) {
        const from = to - spanS * 1000;
        const { ticks, stepS } = timeTicks(from, to, bucketS);
        expect(stepS % bucketS).toBe(0);
        expect(ticks.length).toBeGreaterThanOrEqual(3);
        expect(ticks.length).toBeLessThanOrEqual(8);
        for (const t of ticks) expect(t >= from && t < to).toBe(true);
        const labels = ticks.map((t) => tickLabel(t, stepS));
        expect(new Set(labels).size).toBe(labels.length);
      }
    }
    expect(tickLabel(Date.parse('2026-01-01T00:00:30'), 30)).toBe('00:00:30');
    expect(tickLabel(Date.parse('2026-01-01T13:05:00'), 600)).toBe('13:05');
  });
});
