import { describe, expect, it } from 'vitest';
import type { AdminConfig, Worker } from '../../../renderer/src/api/types.ts';
import { compareWorkers, diskWarning, displayStatus, emptyFilter, needsConfirm, summarise, toggleSort, visibleWorkers } from '../../../renderer/src/model/worker-table.ts';

const cfg: AdminConfig = { hub_id: 'h1', disk_max_pct: 90, worker_ttl_s: 120, heartbeat_s: 15, statuses: ['active', 'drain', 'standby'], job_statuses: [], version: '0' };

function w(id: string, over: Partial<Worker> = {}): Worker {
  return { worker_id: id, hub_id: 'hub-a', status: 'active', alive: true, in_flight: 0, max_concurrent: 2, disk_pct: 10, cpu_pct: 5, mem_pct: 20, last_seen: '2026-01-01T00:00:00Z', version: '1', platform: 'linux', lan_ip: '10.0.0.1', hostname: 'h', lanes: [], ...over };
}

const ids = (ws: Worker[]) => ws.map((x) => x.worker_id);

describe('worker status display', () => {
  it('shows "drained" only once a draining worker has nothing in flight', () => {
    expect(displayStatus({ status: 'drain', in_flight: 2 })).toBe('drain');
    expect(displayStatus({ status: 'drain', in_flight: 0 })).toBe('drained');
    expect(displayStatus({ status: 'standby', in_flight: 0 })).toBe('standby');
  });

  it('warns on disk at or above the hub limit, from /admin/config', () => {
    expect(diskWarning({ disk_pct: 89.9 }, cfg)).toBe(false);
    expect(diskWarning({ disk_pct: 90 }, cfg)).toBe(true);
    expect(diskWarning({ disk_pct: 95 }, { disk_max_pct: 96 })).toBe(false);
    expect(diskWarning({ disk_pct: 99 }, null)).toBe(false);
    expect(diskWarning({ disk_pct: null }, cfg)).toBe(false);
  });

  it('asks to confirm only when taking a busy worker out of rotation', () => {
    expect(needsConfirm({ status: 'active', in_flight: 1 }, 'drain')).toBe(true);
    expect(needsConfirm({ status: 'active', in_flight: 0 }, 'drain')).toBe(false);
    expect(needsConfirm({ status: 'drain', in_flight: 3 }, 'active')).toBe(false);
    expect(needsConfirm({ status: 'drain', in_flight: 3 }, 'drain')).toBe(false);
  });
});

describe('worker table filter and sort', () => {
  const fleet = [
    w('w10', { in_flight: 2, max_concurrent: 2, disk_pct: 95, hub_id: 'hub-b' }),
    w('w2', { status: 'drain', in_flight: 0, platform: 'win32' }),
    w('w3', { alive: false, cpu_pct: null }),
    w('w1', { status: 'standby', in_flight: 1, max_concurrent: 4 }),
  ];

  it('sorts ids numerically, ties broken by id, nulls last both ways', () => {
    expect(ids(visibleWorkers(fleet, emptyFilter, { key: 'worker_id', dir: 'asc' }, cfg))).toEqual(['w1', 'w2', 'w3', 'w10']);
    expect(ids(visibleWorkers(fleet, emptyFilter, { key: 'load', dir: 'desc' }, cfg))).toEqual(['w10', 'w1', 'w2', 'w3']);
    expect(ids(visibleWorkers(fleet, emptyFilter, { key: 'cpu_pct', dir: 'asc' }, cfg)).at(-1)).toBe('w3');
    expect(ids(visibleWorkers(fleet, emptyFilter, { key: 'cpu_pct', dir: 'desc' }, cfg)).at(-1)).toBe('w3');
  });

  it('filters by liveness, hub, status (including drained) and disk warning', () => {
    expect(ids(visibleWorkers(fleet, { ...emptyFilter, liveness: 'offline' }, { key: 'worker_id', dir: 'asc' }, cfg))).toEqual(['w3']);
    expect(ids(visibleWorkers(fleet, { ...emptyFilter, hub: 'hub-b' }, { key: 'worker_id', dir: 'asc' }, cfg))).toEqual(['w10']);
    expect(ids(visibleWorkers(fleet, { ...emptyFilter, status: 'drained' }, { key: 'worker_id', dir: 'asc' }, cfg))).toEqual(['w2']);
    expect(ids(visibleWorkers(fleet, { ...emptyFilter, status: 'active' }, { key: 'worker_id', dir: 'asc' }, cfg))).toEqual(['w3', 'w10']);
    expect(ids(visibleWorkers(fleet, { ...emptyFilter, diskWarnOnly: true }, { key: 'worker_id', dir: 'asc' }, cfg))).toEqual(['w10']);
  });

  it('searches every term across id, hub, platform and shown status', () => {
    expect(ids(visibleWorkers(fleet, { ...emptyFilter, search: 'win32' }, { key: 'worker_id', dir: 'asc' }, cfg))).toEqual(['w2']);
    expect(ids(visibleWorkers(fleet, { ...emptyFilter, search: 'hub-a standby' }, { key: 'worker_id', dir: 'asc' }, cfg))).toEqual(['w1']);
    expect(ids(visibleWorkers(fleet, { ...emptyFilter, search: '  W1  ' }, { key: 'worker_id', dir: 'asc' }, cfg))).toEqual(['w1', 'w10']);
  });

  it('toggles direction on the same column and starts ascending on a new one', () => {
    expect(toggleSort({ key: 'disk_pct', dir: 'asc' }, 'disk_pct')).toEqual({ key: 'disk_pct', dir: 'desc' });
    expect(toggleSort({ key: 'disk_pct', dir: 'desc' }, 'cpu_pct')).toEqual({ key: 'cpu_pct', dir: 'asc' });
  });

  it('does not mutate its input and filters and sorts 2,000 rows (speed is measured in the console benchmark, not here)', () => {
    const big = Array.from({ length: 2000 }, (_, i) => w(`w${i}`, { in_flight: i % 5, disk_pct: i % 100 }));
    const copy = ids(big);
    const out = visibleWorkers(big, { ...emptyFilter, search: 'w1' }, { key: 'disk_pct', dir: 'desc' }, cfg);
    expect(out.length).toBe(big.filter((x) => x.worker_id.includes('w1')).length);
    expect(ids(big)).toEqual(copy);
    expect(out.every((x) => x.worker_id.includes('w1'))).toBe(true);
    for (let i = 1; i < out.length; i++) expect(compareWorkers(out[i - 1], out[i], { key: 'disk_pct', dir: 'desc' })).toBeLessThanOrEqual(0);
  });

  it('gives the same order when seeded with the previous result, whatever changed since', () => {
    const big = Array.from({ length: 300 }, (_, i) => w(`w${i}`, { in_flight: i % 5, disk_pct: i % 100 }));
    const sort = { key: 'disk_pct', dir: 'desc' } as const;
    const first = visibleWorkers(big, emptyFilter, sort, cfg);
    // Some rows moved, some left, some arrived, one matches the filter no more.
    const next = big.filter((_, i) => i % 7 !== 0).map((x, i) => (i % 11 === 0 ? { ...x, disk_pct: (x.disk_pct ?? 0) + 37 } : x));
    next.push(w('w-new', { disk_pct: 50 }), w('w-new2', { disk_pct: null }));
    const filter = { ...emptyFilter, search: 'w' };
    expect(ids(visibleWorkers(next, filter, sort, cfg, first))).toEqual(ids(visibleWorkers(next, filter, sort, cfg)));
    expect(ids(visibleWorkers(next, emptyFilter, { key: 'worker_id', dir: 'asc' }, cfg, first))).toEqual(ids(visibleWorkers(next, emptyFilter, { key: 'worker_id', dir: 'asc' }, cfg)));
  });

  it('counts capacity and load over alive workers only', () => {
    expect(summarise(fleet, cfg)).toEqual({ total: 4, alive: 3, inFlight: 3, capacity: 8, diskWarn: 1 });
  });
});
