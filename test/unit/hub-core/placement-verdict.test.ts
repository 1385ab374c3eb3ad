import { describe, expect, it } from 'vitest';
import { excludedBy } from '../../../hub-core/src/domain/pick-worker.ts';
import { EXCLUSION_REASONS, placementVerdicts, type VerdictWorker } from '../../../hub-core/src/domain/placement-verdict.ts';

const cfg = { diskMaxPct: 90, workerTtlMs: 1000, nowMs: 1_000_000 };
const w = (id: string, over: Partial<VerdictWorker> = {}): VerdictWorker => ({ worker_id: id, status: 'active', in_flight: 0, max_concurrent: 2, lane_novnc_urls: ['http://x/0'], novnc_url: null, disk_pct: 10, alive: true, hub_id: 'h1', ...over });

describe('placement verdicts (the scheduler filter, per worker)', () => {
  it('names the filter that rules each worker out, candidates first', () => {
    const v = placementVerdicts(
      [w('w-dead', { alive: false }), w('w-drain', { status: 'drain' }), w('w-standby', { status: 'standby' }), w('w-full', { in_flight: 2 }), w('w-disk', { disk_pct: 95 }), w('w-noview', { lane_novnc_urls: [] }), w('w-ok', { in_flight: 1 })],
      cfg,
    );
    expect(v.map((x) => [x.worker_id, x.excluded_by, x.free_lanes])).toEqual([
      ['w-ok', null, 1],
      ['w-disk', 'disk_full', 2],
      ['w-drain', 'drain', 2],
      ['w-full', 'full', 0],
      ['w-noview', 'no_view_url', 2],
      ['w-dead', 'not_alive', 2],
      ['w-standby', 'standby', 2],
    ]);
    for (const x of v) expect(x.reason).toBe(x.excluded_by ? EXCLUSION_REASONS[x.excluded_by] : 'takes work now');
  });

  it('agrees with excludedBy for every worker (no rule of its own)', () => {
    for (const x of [w('a'), w('b', { status: 'drain', alive: false }), w('c', { ready: false }), w('d', { status: 'weird' })]) {
      const [v] = placementVerdicts([x], cfg);
      expect(v.excluded_by ?? undefined).toBe(excludedBy({ ...x, last_seen_ms: x.alive ? cfg.nowMs : -Infinity }, cfg));
    }
  });
});
