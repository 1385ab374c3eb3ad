// A worker's lanes as small squares linking to their live views (filled = busy).
import type { Lane } from '../api/types.ts';
import { useActions } from './console-context.ts';

const isHttp = (u: string | null): u is string => !!u && /^https?:\/\//i.test(u);

export function LaneLinks({ lanes }: { lanes: Lane[] }) {
  const actions = useActions();
  return (
    <div className="lanes">
      {lanes.map((l) => {
        const title = `lane ${l.index}${l.busy ? ` · busy${l.job_id ? ` · job ${l.job_id}` : ''}` : ' · idle'}${l.view_url ? `\n${l.view_url}` : ''}`;
        const cls = l.busy ? 'lane busy' : 'lane';
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
              actions.openExternal(l.view_url!);
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
