// One worker in depth: its verdict now (the hub's scheduler filter), lanes, disk/CPU/memory
// sparklines from its heartbeats, version and kinds, the audit of its status changes, and its
// last 50 jobs.
import { useEffect, useMemo } from 'react';
import { useStore } from 'zustand';
import { jobsRouteHash } from '../model/view-route.ts';
import { ageText, dateTimeText } from '../model/time-format.ts';
import { workerDetailStore } from '../stores/worker-detail.ts';
import { useActions } from './console-context.ts';
import { LaneLinks } from './LaneLinks.tsx';
import { Sparkline } from './Sparkline.tsx';
import { useNow } from './use-now.ts';

function statusChange(details: unknown): string {
  const d = (details ?? {}) as { from?: unknown; to?: unknown };
  return typeof d.to === 'string' ? `${typeof d.from === 'string' ? d.from : '?'} → ${d.to}` : JSON.stringify(details);
}

export function WorkerDrawer({ onResetCredentials, onForget }: { onResetCredentials(id: string): void; onForget(id: string): void }) {
  const actions = useActions();
  const id = useStore(workerDetailStore, (s) => s.openId);
  const d = useStore(workerDetailStore, (s) => s.detail);
  const error = useStore(workerDetailStore, (s) => s.error);
  const now = useNow();
  const spark = useMemo(() => ({ disk: d?.vitals.map((v) => v.disk_pct) ?? [], cpu: d?.vitals.map((v) => v.cpu_pct) ?? [], mem: d?.vitals.map((v) => v.mem_pct) ?? [] }), [d]);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && actions.openWorker(null);
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [actions]);
  if (!id) return null;
  const w = d?.worker;
  return (
    <aside className="drawer" data-testid="worker-drawer" data-worker-id={id} aria-label={`worker ${id}`}>
      <div className="detail-head">
        <h2 className="mono">{id}</h2>
        {w && <span className={`pill st-${w.status}`}>{w.status}</span>}
        <button className="btn small" onClick={() => actions.openWorker(null)} aria-label="close">
          ✕
        </button>
      </div>
      {error && <div className="inline-error">{error}</div>}
      {!d && !error && <p className="muted">Loading…</p>}
      {d && (
        <>
          <dl className="facts">
            <dt>Link</dt>
            <dd>{w ? (w.alive ? `alive · heartbeat ${ageText(w.last_seen, now)} ago` : `offline since ${ageText(w.last_seen, now)}`) : 'not in the fleet'}</dd>
            <dt>Hub</dt>
            <dd className="mono">{w?.hub_id ?? '—'}</dd>
            <dt>Version</dt>
            <dd className="mono">{w?.version ?? '—'}</dd>
            <dt>Platform</dt>
            <dd>{w?.platform ?? '—'}</dd>
            <dt>Kinds</dt>
            <dd data-testid="drawer-kinds-declared">{w?.kinds ? w.kinds.join(', ') : 'every kind (none declared)'}</dd>
            <dt>Kinds run</dt>
            <dd data-testid="drawer-kinds">{d.kinds_run.length ? d.kinds_run.join(', ') : 'none in its last jobs'}</dd>
          </dl>
          <h3>Placement now</h3>
          {d.verdict ? (
            <p data-testid="drawer-verdict" data-excluded-by={d.verdict.excluded_by ?? ''}>
              <span className={d.verdict.excluded_by ? 'pill verdict-out' : 'pill verdict-ok'}>{d.verdict.excluded_by ?? 'candidate'}</span> {d.verdict.reason}
            </p>
          ) : (
            <p className="muted">Not in the fleet: no verdict.</p>
          )}
          {w && (
            <>
              <h3>Lanes</h3>
              <ul className="drawer-lanes">
                {w.lanes.map((l) => (
                  <li key={l.index}>
                    <LaneLinks workerId={w.worker_id} lanes={[l]} /> {l.busy ? (l.job_id ? <span className="mono">job {l.job_id.slice(0, 8)}</span> : 'busy (session or client)') : <span className="muted">idle</span>}
                  </li>
                ))}
              </ul>
            </>
          )}
          <h3>Credentials</h3>
          <p>
            <button className="btn small" onClick={() => onResetCredentials(id)} data-testid="reset-credentials" title="Let this worker id enroll again (after a lost credential file or a replaced machine)">
              Reset credentials…
            </button>{' '}
            {w && !w.alive && (
              <button className="btn small" onClick={() => (onForget(id), actions.openWorker(null))} data-testid="forget-worker" title="Remove this offline worker from the fleet now (it comes back if it links again)">
                Forget
              </button>
            )}
          </p>
          <h3>Last {d.vitals.length} heartbeat samples</h3>
          <Sparkline label="disk" values={spark.disk} />
          <Sparkline label="cpu" values={spark.cpu} />
          <Sparkline label="mem" values={spark.mem} />
          <h3>Status changes</h3>
          {d.audit.length === 0 ? (
            <p className="muted">None recorded.</p>
          ) : (
            <ul className="audit" data-testid="drawer-audit">
              {d.audit.map((a, i) => (
                <li key={i}>
                  <span className="dim">{dateTimeText(a.at)}</span> <span className="mono">{a.action === 'worker.status' ? statusChange(a.details) : a.action}</span> <span className="dim">by {a.actor}</span>
                </li>
              ))}
            </ul>
          )}
          <h3>Last {d.jobs.length} jobs</h3>
          <table className="dtable compact" data-testid="drawer-jobs">
            <tbody>
              {d.jobs.map((j) => (
                <tr key={j.id}>
                  <td className="mono">
                    <a href={jobsRouteHash({ statusFilter: '', search: '', jobId: j.id })} title={j.id}>
                      {j.id.slice(0, 8)}
                    </a>
                  </td>
                  <td>{j.kind}</td>
                  <td>
                    <span className={`pill js-${j.status}`}>{j.status}</span>
                  </td>
                  <td className="dim">{ageText(j.created_at, now)} ago</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </aside>
  );
}
