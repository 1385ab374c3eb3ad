import { describe, expect, it } from 'vitest';
import type { JobSummary, Worker } from '../../../renderer/src/api/types.ts';
import { elapsedMs, reuseEqualTiles, filterTiles, groupTiles, isLate, laneTiles, emptyWallFilter } from '../../../renderer/src/model/lane-wall.ts';

const NOW = Date.parse('2026-01-01T00:01:00Z');
const worker = (id: string, hub: string, lanes: Worker['lanes'], alive = true): Worker => ({ worker_id: id, hub_id: hub, status: 'active', alive, in_flight: 0, max_concurrent: lanes.length, disk_pct: 1, cpu_pct: 1, mem_pct: 1, last_seen: '', version: null, platform: null, lan_ip: '', hostname: '', lanes }) as Worker;
const job = (id: string, kind: string, assigned: string, deadline: string) => ({ id, kind, status: 'running', assigned_at: assigned, deadline_at: deadline, created_at: assigned }) as unknown as JobSummary;

describe('lane wall tiles', () => {
  const workers = [
    worker('w2', 'h1', [{ index: 0, view_url: 'http://10.0.0.2:9000/lanes/0/view', busy: true, job_id: 'j-late' }, { index: 1, view_url: null, busy: true, job_id: null }]),
    worker('w1', 'h1', [{ index: 0, view_url: 'sim://x', busy: false, job_id: null }]),
    worker('w3', 'h0', [{ index: 0, view_url: 'http://10.0.0.3:9000/lanes/0/view', busy: true, job_id: 'j-early' }]),
  ];
  const running = [job('j-late', 'macro', '2026-01-01T00:00:10Z', '2026-01-01T00:01:00Z'), job('j-early', 'fetch', '2026-01-01T00:00:50Z', '2026-01-01T00:02:30Z')];
  const tiles = laneTiles(workers, running);

  it('says what holds each lane, for how long, and turns red past 80 % of the deadline', () => {
    const by = Object.fromEntries(tiles.map((t) => [t.key, t]));
    expect(by['w2/0']).toMatchObject({ holder: 'job', kind: 'macro', viewable: true });
    expect(elapsedMs(by['w2/0'], NOW)).toBe(50_000);
    expect(isLate(by['w2/0'], NOW)).toBe(true);
    expect(by['w3/0']).toMatchObject({ holder: 'job', kind: 'fetch' });
    expect(elapsedMs(by['w3/0'], NOW)).toBe(10_000);
    expect(isLate(by['w3/0'], NOW)).toBe(false);
    // The same tile turns red once 80 % of its deadline has passed.
    expect(isLate(by['w3/0'], Date.parse('2026-01-01T00:02:14Z'))).toBe(true);
    expect(by['w2/1']).toMatchObject({ holder: 'session', kind: null, assignedMs: null, viewable: false });
    expect(elapsedMs(by['w2/1'], NOW)).toBeNull();
    expect(by['w1/0']).toMatchObject({ holder: null, busy: false, viewable: false });
  });

  it('groups by hub, then worker, then lane; filters by hub, worker, kind and state', () => {
    expect(groupTiles(tiles).map((g) => [g.hubId, g.workers.map((w) => [w.workerId, w.tiles.map((t) => t.lane)])])).toEqual([
      ['h0', [['w3', [0]]]],
      ['h1', [['w1', [0]], ['w2', [0, 1]]]],
    ]);
    const keys = (f: Partial<typeof emptyWallFilter>) => filterTiles(tiles, { ...emptyWallFilter, ...f }, NOW).map((t) => t.key);
    expect(keys({ hub: 'h0' })).toEqual(['w3/0']);
    expect(keys({ worker: 'W2' })).toEqual(['w2/0', 'w2/1']);
    expect(keys({ kind: 'macro' })).toEqual(['w2/0']);
    expect(keys({ state: 'idle' })).toEqual(['w1/0']);
    expect(keys({ state: 'late' })).toEqual(['w2/0']);
    expect(keys({ state: 'busy' })).toEqual(['w3/0', 'w2/0', 'w2/1']);
  });

  it('keeps the previous tile object where nothing changed', () => {
    const before = new Map(tiles.map((t) => [t.key, t]));
    const again = reuseEqualTiles(laneTiles(workers, running), before);
    expect(again.every((t) => t === before.get(t.key))).toBe(true);
    const changed = reuseEqualTiles(laneTiles([{ ...workers[1], lanes: [{ index: 0, view_url: 'sim://x', busy: true, job_id: null }] }, workers[0], workers[2]], running), before);
    expect(changed.find((t) => t.key === 'w1/0')).not.toBe(before.get('w1/0'));
    expect(changed.find((t) => t.key === 'w2/0')).toBe(before.get('w2/0'));
  });
});
