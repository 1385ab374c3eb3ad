// Tells the operator when what they see is not live, and since when.
import { useStore } from 'zustand';
import { bannerFor, silentAfterMs } from '../model/connection-state.ts';
import { ageText, clockText } from '../model/time-format.ts';
import { connectionStore } from '../stores/connection.ts';
import { useNow } from './use-now.ts';

const TEXT: Record<string, string> = {
  connecting: 'Connecting to the hub…',
  auth: 'The hub requires an admin token.',
  lost: 'Link to the hub lost — data on screen is frozen.',
  stale: 'Fleet data is stale.',
  polling: 'Live feed down — polling every 3 s.',
};

export function ConnectionBanner() {
  const link = useStore(connectionStore, (s) => s.link);
  const heartbeatS = useStore(connectionStore, (s) => s.config?.heartbeat_s);
  const now = useNow();
  const b = bannerFor(link, now, silentAfterMs(heartbeatS));
  if (b.kind === 'none') return null;
  return (
    <div className={`banner banner-${b.kind}`} data-testid="connection-banner" data-kind={b.kind} role="status">
      <strong>{TEXT[b.kind]}</strong>
      {b.since !== null && (
        <span>
          {' '}
          Since {clockText(b.since)} ({ageText(b.since, now)} ago).
        </span>
      )}
      {b.detail && <span className="banner-detail"> {b.detail}</span>}
      {link.lastOkAt !== null && b.kind === 'lost' && <span className="banner-detail"> Last update {clockText(link.lastOkAt)}.</span>}
    </div>
  );
}
