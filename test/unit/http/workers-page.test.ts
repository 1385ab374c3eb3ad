// GET /admin/workers is sent as bytes made of each row's kept JSON: the document must be the
// one JSON.stringify made of the WorkersPageJson before, and a kept table must follow its rows.
import { describe, expect, it } from 'vitest';
import type { FleetView, FleetWorker } from '../../../hub-core/src/hub/fleet-view.ts';
import { workerJson } from '../../../hub-core/src/http/json.ts';
import { WorkersPage } from '../../../hub-core/src/http/workers-page.ts';

const row = (id: string, over: Partial<FleetWorker> = {}): FleetWorker => ({
  worker_id: id,
  hub_id: 'hub-b',
  lan_ip: '10.0.0.1',
  hostname: `host "${id}" ✓`,
  status: 'active',
  in_flight: 1,
  max_concurrent: 2,
  lane_novnc_urls: ['u0'],
  novnc_url: null,
  disk_pct: 12.5,
  cpu_pct: 3,
  mem_pct: 40,
  last_seen_ms: 1_700_000_000_000,
  version: '1',
  platform: 'linux-x64',
  lanes: [{ index: 0, view_url: 'u0', busy: true, job_id: 'j1', session_id: null, since_ms: 1_700_000_000_500 }],
  kinds: ['sleep'],
  left_at_ms: null,
  alive: true,
  local: false,
  ...over,
});

const text = (page: WorkersPage, view: FleetView) => Buffer.concat(page.pieces(view)).toString('utf8');
const expected = (view: FleetView) => JSON.stringify({ workers: view.workers.map(workerJson), as_of: new Date(view.as_of).toISOString(), stale: view.stale });

describe('WorkersPage', () => {
  it('makes the document JSON.stringify makes of the page, escapes and non-ASCII included', () => {
    const view: FleetView = { workers: [row('w1'), row('w2', { alive: false, kinds: null, status: 'drain' })], as_of: 1_700_000_001_000, stale: true, partial: false };
    expect(text(new WorkersPage(), view)).toBe(expected(view));
    const empty: FleetView = { workers: [], as_of: 0, stale: false, partial: false };
    expect(text(new WorkersPage(), empty)).toBe(expected(empty));
  });

  it('reuses the encoded table while the rows are the same objects; a new row object or a new as_of shows', () => {
    const page = new WorkersPage();
    const rows = [row('w1'), row('w2')];
    const first = page.pieces({ workers: rows, as_of: 1000, stale: false, partial: false });
    const again = page.pieces({ workers: [...rows], as_of: 2000, stale: false, partial: false });
    expect(again[0]).toBe(first[0]);
    expect(JSON.parse(Buffer.concat(again).toString()).as_of).toBe(new Date(2000).toISOString());
    const changed: FleetView = { workers: [rows[0], row('w2', { in_flight: 2 })], as_of: 3000, stale: false, partial: false };
    expect(text(page, changed)).toBe(expected(changed));
    const fewer: FleetView = { workers: [rows[0]], as_of: 3000, stale: false, partial: false };
    expect(text(page, fewer)).toBe(expected(fewer));
  });
});
