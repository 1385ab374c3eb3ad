// The lane wall: every lane of the fleet as a tile, grouped by hub and worker — what holds it
// (job id and kind, or a session/CDP client), for how long, red past 80 % of its deadline.
// A click opens the lane's live view (a signed grant from the hub); each tile shows the lane's
// thumbnail, about a frame a second, relayed by the hub (live/wall-thumbs.ts).
import { useVirtualizer } from '@tanstack/react-virtual';
import { memo, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useStore } from 'zustand';
import { useActions } from '../components/console-context.ts';
import { TileScreen } from '../components/TileScreen.tsx';
import { WallThumbsContext } from '../components/wall-thumbs-context.ts';
import type { WallThumbs } from '../live/wall-thumbs.ts';
import { useNow } from '../components/use-now.ts';
import { deadlineUsed, elapsedMs, filterTiles, groupTiles, isLate, laneTiles, reuseEqualTiles, type LaneTile } from '../model/lane-wall.ts';
import { fleetStore } from '../stores/fleet.ts';
import { hubsStore } from '../stores/hubs.ts';
import { wallStore } from '../stores/wall.ts';

function elapsedText(ms: number | null): string {
  if (ms === null) return '';
  const s = Math.floor(ms / 1000);
  return s < 60 ? `${s}s` : s < 3600 ? `${Math.floor(s / 60)}m ${s % 60}s` : `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

/** `now` is 0 for tiles without a job: only busy tiles re-render as the clock ticks. */
const Tile = memo(function Tile({ t, now, onOpen }: { t: LaneTile; now: number; onOpen(workerId: string, lane: number): void }) {
  const late = isLate(t, now);
  const used = deadlineUsed(t, now);
  const cls = `tile${t.busy ? ' busy' : ''}${late ? ' late' : ''}${t.alive ? '' : ' dead'}`;
  const what = t.holder === 'job' ? `${t.kind ?? 'job'} ${t.jobId!.slice(0, 8)}` : t.holder === 'session' ? 'session / CDP client' : t.alive ? 'idle' : 'offline';
  const title = `${t.workerId} lane ${t.lane}${t.jobId ? `\njob ${t.jobId}` : ''}${used !== null ? `\n${Math.round(used * 100)}% of its deadline used` : ''}${t.viewable ? '\nclick: live view' : ''}`;
  return (
    <button className={cls} title={title} disabled={!t.viewable} onClick={() => onOpen(t.workerId, t.lane)} data-testid="lane-tile" data-lane-key={t.key} data-late={late ? '1' : '0'}>
      <span className="tile-head">
        <span className="mono">lane {t.lane}</span>
        <span className="num">{elapsedText(elapsedMs(t, now))}</span>
      </span>
      <TileScreen workerId={t.workerId} lane={t.lane} watch={t.alive} busy={t.busy} />
      <span className="tile-what mono">{what}</span>
    </button>
  );
});

type WallItem = { kind: 'hub'; key: string; hubId: string } | { kind: 'worker'; key: string; workerId: string; alive: boolean; tiles: LaneTile[] };

const WorkerGroup = memo(function WorkerGroup({ workerId, alive, tiles, now, onOpen }: { workerId: string; alive: boolean; tiles: LaneTile[]; now: number; onOpen(workerId: string, lane: number): void }) {
  return (
    <>
      <div className={`wall-worker-name mono${alive ? '' : ' dim'}`} title={workerId}>
        {workerId}
      </div>
      <div className="tiles">
        {tiles.map((t) => (
          <Tile key={t.key} t={t} now={t.assignedMs === null ? 0 : now} onOpen={onOpen} />
        ))}
      </div>
    </>
  );
});

/** The wall and its thumbnail socket, which lives while the wall is shown; tiles subscribe to it as they mount. */
export function WallView() {
  const actions = useActions();
  const [thumbs, setThumbs] = useState<WallThumbs | null>(null);
  useEffect(() => {
    const t = actions.openWallThumbs();
    setThumbs(t);
    return () => {
      t.stop();
      setThumbs(null);
    };
  }, [actions]);
  return (
    <WallThumbsContext.Provider value={thumbs}>
      <Wall />
    </WallThumbsContext.Provider>
  );
}

function Wall() {
  const actions = useActions();
  const workers = useStore(fleetStore, (s) => s.workers);
  const hubs = useStore(hubsStore, (s) => s.hubs);
  const running = useStore(wallStore, (s) => s.running);
  const filter = useStore(wallStore, (s) => s.filter);
  const error = useStore(wallStore, (s) => s.error);
  const now = useNow();
  useEffect(() => actions.watchRunning(), [actions]);
  // Tiles equal to the last render's are the same objects, so their memo holds when a snapshot changes other lanes.
  const previous = useRef(new Map<string, LaneTile>());
  const tiles = useMemo(() => {
    const next = reuseEqualTiles(laneTiles(workers, running), previous.current);
    previous.current = new Map(next.map((t) => [t.key, t]));
    return next;
  }, [workers, running]);
  // The clock matters to the "late" filter only.
  const shown = useMemo(() => filterTiles(tiles, filter, filter.state === 'late' ? now : 0), [tiles, filter, filter.state === 'late' ? now : 0]);
  const groups = useMemo(() => groupTiles(shown), [shown]);
  const kinds = useMemo(() => [...new Set(tiles.map((t) => t.kind).filter((k): k is string => !!k))].sort(), [tiles]);
  const busy = tiles.filter((t) => t.busy).length;
  const late = useMemo(() => tiles.filter((t) => isLate(t, now)).length, [tiles, now]);
  // Virtualised by rows (a hub heading, or one worker's tiles): 4,000 tiles in the DOM took
  // seconds per snapshot; only the rows near the viewport are rendered, measured as they mount.
  const items = useMemo(() => {
    const out: WallItem[] = [];
    for (const g of groups) {
      out.push({ kind: 'hub', key: `hub:${g.hubId}`, hubId: g.hubId });
      for (const w of g.workers) out.push({ kind: 'worker', key: `w:${w.workerId}`, workerId: w.workerId, alive: w.alive, tiles: w.tiles });
    }
    return out;
  }, [groups]);
  const scrollRef = useRef<HTMLElement>(null);
  const wallRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: items.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: (i) => (items[i].kind === 'hub' ? 22 : 133),
    overscan: 6,
    getItemKey: (i) => items[i].key,
    scrollMargin: wallRef.current?.offsetTop ?? 0,
  });
  const open = useCallback((workerId: string, lane: number) => void actions.openLaneView(workerId, lane), [actions]);
  const set = wallStore.getState().setFilter;

  return (
    <section className="view view-wall" data-testid="wall" ref={scrollRef}>
      <div className="toolbar">
        <label>
          Hub
          <select value={filter.hub} onChange={(e) => set({ hub: e.target.value })} data-testid="wall-hub">
            <option value="">all</option>
            {hubs.map((h) => (
              <option key={h.hub_id} value={h.hub_id}>
                {h.hub_id}
              </option>
            ))}
          </select>
        </label>
        <input className="search" type="search" placeholder="Worker id…" value={filter.worker} onChange={(e) => set({ worker: e.target.value })} data-testid="wall-worker" />
        <label>
          Kind
          <select value={filter.kind} onChange={(e) => set({ kind: e.target.value })} data-testid="wall-kind">
            <option value="">all</option>
            {kinds.map((k) => (
              <option key={k}>{k}</option>
            ))}
          </select>
        </label>
        <label>
          State
          <select value={filter.state} onChange={(e) => set({ state: e.target.value as typeof filter.state })} data-testid="wall-state">
            <option value="">all</option>
            <option value="busy">busy</option>
            <option value="idle">idle</option>
            <option value="late">past 80 % of deadline</option>
          </select>
        </label>
        <span className="muted count">
          {shown.length} of {tiles.length} lanes · {busy} busy · {late} late
        </span>
      </div>
      {error && <div className="inline-error">Running jobs unavailable ({error}): tiles show lanes without kind or elapsed time.</div>}
      {groups.length === 0 && <div className="empty">{tiles.length === 0 ? 'No lanes in the fleet.' : 'No lane matches.'}</div>}
      <div className="wall" ref={wallRef} style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
        {virtualizer.getVirtualItems().map((v) => {
          const it = items[v.index];
          const style = { top: v.start - virtualizer.options.scrollMargin };
          return it.kind === 'hub' ? (
            <div key={v.key} data-index={v.index} ref={virtualizer.measureElement} className="wall-row wall-hub" style={style}>
              <h3 className="mono">{it.hubId}</h3>
            </div>
          ) : (
            <div key={v.key} data-index={v.index} ref={virtualizer.measureElement} className="wall-row wall-worker" data-testid="wall-worker-group" style={style}>
              <WorkerGroup workerId={it.workerId} alive={it.alive} tiles={it.tiles} now={now} onOpen={open} />
            </div>
          );
        })}
      </div>
    </section>
  );
}
