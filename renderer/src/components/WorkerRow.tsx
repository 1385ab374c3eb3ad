// One worker. Every cell the e2e test reads carries a data-testid.
import { memo } from 'react';
import type { AdminConfig, Worker } from '../api/types.ts';
import { diskWarning, displayStatus, loadRatio } from '../model/worker-table.ts';
import { ageText, pctText } from '../model/time-format.ts';
import { LaneLinks } from './LaneLinks.tsx';

export interface WorkerRowProps {
  worker: Worker;
  config: AdminConfig | null;
  now: number;
  pending: string | undefined;
  top: number;
  odd: boolean;
  onSetStatus(id: string, status: string): void;
  onOpen(id: string): void;
}

function heartbeatClass(w: Worker, now: number, cfg: AdminConfig | null): string {
  if (!w.alive) return 'hb-dead';
  const age = (now - Date.parse(w.last_seen)) / 1000;
  // Two missed heartbeats: still within the TTL, but worth a glance.
  return cfg && age > 2 * cfg.heartbeat_s ? 'hb-late' : '';
}

export const WorkerRow = memo(function WorkerRow({ worker: w, config, now, pending, top, odd, onSetStatus, onOpen }: WorkerRowProps) {
  const shown = displayStatus(w);
  const warn = diskWarning(w, config);
  const ratio = loadRatio(w);
  return (
    <div
      className={`wrow${odd ? ' odd' : ''}${w.alive ? '' : ' offline'}`}
      role="row"
      style={{ top }}
      data-testid="worker-row"
      data-worker-id={w.worker_id}
    >
      <div className="mono strong" title={`${w.worker_id}: open its detail`}>
        <button className="linkish mono strong" onClick={() => onOpen(w.worker_id)} data-testid="worker-open">
          {w.worker_id}
        </button>
      </div>
      <div className="mono dim" title={w.hub_id ?? ''}>
        {w.hub_id ?? '—'}
      </div>
      <div data-testid="worker-status">
        <span className={`pill st-${shown}`}>{shown}</span>
        {pending && <span className="pending" title={`asked for ${pending}`}>…</span>}
      </div>
      <div className="seg">
        {(config?.statuses ?? []).map((s) => (
          <button
            key={s}
            className={w.status === s ? 'seg-btn on' : 'seg-btn'}
            disabled={w.status === s || pending !== undefined}
            onClick={() => onSetStatus(w.worker_id, s)}
            data-testid={`set-${s}`}
            title={config?.status_help?.[s] ? `${s}: ${config.status_help[s]}` : `set ${s}`}
          >
            {s}
          </button>
        ))}
      </div>
      <div data-testid="worker-alive" className={w.alive ? 'alive' : 'dead'}>
        {w.alive ? 'alive' : 'offline'}
      </div>
      <div data-testid="worker-inflight" className="load" title={`${w.in_flight} of ${w.max_concurrent} lanes busy`}>
        <span className="bar">
          <span className={ratio >= 1 ? 'fill full' : 'fill'} style={{ width: `${Math.min(100, ratio * 100)}%` }} />
        </span>
        <span className="num">
          {w.in_flight}/{w.max_concurrent}
        </span>
      </div>
      <div
        data-testid="worker-disk"
        className={warn ? 'num disk-warn' : 'num'}
        title={warn ? `disk at or above ${config?.disk_max_pct}%: scheduler stops picking this worker` : undefined}
      >
        <span>{pctText(w.disk_pct)}</span>
      </div>
      <div className="num">{pctText(w.cpu_pct)}</div>
      <div className="num">{pctText(w.mem_pct)}</div>
      <div className={`num ${heartbeatClass(w, now, config)}`} title={w.last_seen}>
        {ageText(w.last_seen, now)}
      </div>
      <div className="mono dim">{w.version ?? '—'}</div>
      <div className="dim" data-testid="worker-kinds" title={w.kinds ? `runs: ${w.kinds.join(', ')}` : 'runs any kind (not declared)'}>
        {w.platform ?? '—'}
        {w.kinds ? ` · ${w.kinds.join(', ')}` : ''}
      </div>
      <LaneLinks workerId={w.worker_id} lanes={w.lanes} />
    </div>
  );
});
