// Which hub answers. Behind nginx any live hub answers a request (they share the fleet and the
// jobs), so the header names the hub whose live feed this console holds (a WebSocket stays on
// one hub), and how many hubs could answer: it does not flip from request to request.
import { useStore } from 'zustand';
import { connectionStore } from '../stores/connection.ts';
import { hubsStore } from '../stores/hubs.ts';

export function HubIdent() {
  const hubs = useStore(hubsStore, (s) => s.hubs);
  const config = useStore(connectionStore, (s) => s.config);
  const hubUrl = useStore(connectionStore, (s) => s.hubUrl);
  const feedHub = hubs.find((h) => h.local)?.hub_id ?? null;
  const alive = hubs.filter((h) => h.alive).length;
  const title = [
    feedHub ? `Live feed from hub ${feedHub}.` : 'No live feed yet.',
    alive > 1 ? `Any of the ${alive} live hubs answers a request (behind nginx, round robin); they share one fleet and one job store, so every answer is the same view.` : 'One live hub.',
    `Console served from ${hubUrl}.`,
  ].join(' ');
  return (
    <span className="hub-name" title={title} data-testid="hub-ident">
      {feedHub ?? '…'}
      {alive > 1 ? ` · ${alive} hubs live` : ''}
      {config ? ` · v${config.version}` : ''}
    </span>
  );
}
