// "Why is it waiting?": the queue by kind, the oldest job, and each worker's verdict for it as
// the hub's scheduler filter gives it (code and wording from the hub).
import { useEffect, useMemo } from 'react';
import { useStore } from 'zustand';
import { queueStore } from '../stores/queue.ts';
import { useActions } from './console-context.ts';

function ageS(s: number): string {
  return s < 60 ? `${Math.round(s)} s` : s < 3600 ? `${Math.floor(s / 60)} min ${Math.round(s % 60)} s` : `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

export function QueuePanel() {
  const actions = useActions();
  const queue = useStore(queueStore, (s) => s.queue);
  const error = useStore(queueStore, (s) => s.error);
  useEffect(() => actions.watchQueue(), [actions]);
  const tally = useMemo(() => {
    const t = new Map<string, number>();
    for (const v of queue?.verdicts ?? []) if (v.excluded_by) t.set(v.excluded_by, (t.get(v.excluded_by) ?? 0) + 1);
    return [...t.entries()];
  }, [queue]);

  if (error && !queue) return <div className="inline-error">Could not ask the hub why jobs wait: {error}</div>;
  if (!queue || queue.queued === 0) return null;
  return (
    <details className="panel queue-panel" open data-testid="queue-panel">
      <summary>
        <b>{queue.queued}</b> queued{queue.oldest ? `, the oldest for ${ageS(queue.oldest.age_s)}` : ''} —{' '}
        {queue.candidates > 0 ? `${queue.candidates} worker${queue.candidates === 1 ? '' : 's'} would take a job now` : 'no worker takes work now'}
        {tally.length > 0 && <span className="muted"> ({tally.map(([k, n]) => `${k} ×${n}`).join(', ')})</span>}
      </summary>
      <div className="queue-grid">
        <table className="dtable" data-testid="queue-by-kind">
          <thead>
            <tr>
              <th>Kind</th>
              <th className="num">Queued</th>
              <th className="num">Oldest</th>
            </tr>
          </thead>
          <tbody>
            {queue.by_kind.map((k) => (
              <tr key={k.kind}>
                <td>{k.kind}</td>
                <td className="num">{k.queued}</td>
                <td className="num">{ageS(k.oldest_age_s)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <div className="queue-verdicts">
          {queue.oldest && (
            <p className="muted">
              Placement of the oldest job,{' '}
              <button className="linkish mono" onClick={() => void actions.openJob(queue.oldest!.id)} title={queue.oldest.id}>
                {queue.oldest.id.slice(0, 8)}
              </button>{' '}
              ({queue.oldest.kind}), worker by worker — the hub's scheduler filter:
            </p>
          )}
          <table className="dtable" data-testid="queue-verdicts">
            <thead>
              <tr>
                <th>Worker</th>
                <th>Hub</th>
                <th>Verdict</th>
                <th>Why</th>
              </tr>
            </thead>
            <tbody>
              {queue.verdicts.length === 0 && (
                <tr>
                  <td colSpan={4} className="empty">
                    No worker in the fleet.
                  </td>
                </tr>
              )}
              {queue.verdicts.map((v) => (
                <tr key={v.worker_id} data-testid="queue-verdict" data-worker-id={v.worker_id} data-excluded-by={v.excluded_by ?? ''}>
                  <td className="mono">{v.worker_id}</td>
                  <td className="mono dim">{v.hub_id ?? '—'}</td>
                  <td>
                    <span className={v.excluded_by ? 'pill verdict-out' : 'pill verdict-ok'}>{v.excluded_by ?? 'candidate'}</span>
                  </td>
                  <td className="wrap">{v.reason}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </div>
    </details>
  );
}
