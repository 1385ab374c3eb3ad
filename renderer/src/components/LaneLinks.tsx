// A worker's lanes as small squares linking to their live views (filled = busy). A click asks
// the hub for a short-lived view link first: the bare view_url opens nothing by itself.
import type { Lane } from '../api/types.ts';
import { useActions } from './console-context.ts';

const isHttp = (u: string | null): u is string => !!u && /^https?:\/\//i.test(u);

export function LaneLinks({ workerId, lanes }: { workerId: string; lanes: Lane[] }) {
  const actions = useActions();
  return (
    <div className="lanes">
      {lanes.map((l) => {
        const holder = l.holder === 'cdp' ? ` · CDP client${l.since ? ` since ${new Date(l.since).toLocaleTimeString()}` : ''}` : l.job_id ? ` · job ${l.job_id}` : '';
        const title = `lane ${l.index}${l.busy ? ` · busy${holder}` : ' · idle'}${isHttp(l.view_url) ? '\nopen the live view' : ''}`;
        const cls = l.busy ? (l.holder === 'cdp' ? 'lane busy cdp' : 'lane busy') : 'lane';
        // Only http(s) views are links: simulated lanes (sim://) and missing URLs are not.
        return isHttp(l.view_url) ? (
          <a
            key={l.index}
            className={cls}
            href={l.view_url}
            target="_blank"
            rel="noopener noreferrer"
            title={title}
            data-testid="lane-link"
            onClick={(e) => {
              e.preventDefault();
              void actions.openLaneView(workerId, l.index);
            }}
          >
            {l.index}
          </a>
        ) : (
          <span key={l.index} className={cls} title={title}>
            {l.index}
          </span>
        );
      })}
    </div>
  );
}
