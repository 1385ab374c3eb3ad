// The hub registry: live hubs and recently dead ones, workers per hub, last seen.
import { useMemo } from 'react';
import { useStore } from 'zustand';
import { useNow } from '../components/use-now.ts';
import { ageText, dateTimeText } from '../model/time-format.ts';
import { fleetStore } from '../stores/fleet.ts';
import { hubsStore } from '../stores/hubs.ts';

export function HubsView() {
  const hubs = useStore(hubsStore, (s) => s.hubs);
  const workers = useStore(fleetStore, (s) => s.workers);
  const now = useNow();
  // Live link counts from the fleet view, next to the count each hub last published.
  const aliveByHub = useMemo(() => {
    const m = new Map<string, number>();
    for (const w of workers) if (w.alive && w.hub_id) m.set(w.hub_id, (m.get(w.hub_id) ?? 0) + 1);
    return m;
  }, [workers]);

  return (
    <section className="view">
      <table className="dtable" data-testid="hubs-table">
        <thead>
          <tr>
            <th>Hub</th>
            <th>State</th>
            <th>URL</th>
            <th className="num">Workers</th>
            <th className="num">Alive in fleet view</th>
            <th>Last seen</th>
            <th>Started</th>
          </tr>
        </thead>
        <tbody>
          {hubs.length === 0 && (
            <tr>
              <td colSpan={7} className="empty">
                No hubs reported yet.
              </td>
            </tr>
          )}
          {hubs.map((h) => (
            <tr key={h.hub_id} className={h.alive ? '' : 'offline'} data-testid="hub-row" data-hub-id={h.hub_id}>
              <td className="mono strong">
                {h.hub_id}
                {h.local && <span className="tag">this hub</span>}
              </td>
              <td>
                <span className={h.alive ? 'pill st-active' : 'pill st-offline'}>{h.alive ? 'alive' : 'dead'}</span>
              </td>
              <td className="mono dim">{h.url ?? '—'}</td>
              <td className="num">{h.workers}</td>
              <td className="num">{aliveByHub.get(h.hub_id) ?? 0}</td>
              <td title={h.last_seen}>{ageText(h.last_seen, now)} ago</td>
              <td>{dateTimeText(h.started_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
