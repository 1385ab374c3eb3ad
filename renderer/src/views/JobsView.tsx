// Jobs: counts by status (click to filter), the recent list, and the detail of one job.
import { useMemo, useState } from 'react';
import { ConfirmDialog } from '../components/ConfirmDialog.tsx';
import { useStore } from 'zustand';
import { useActions } from '../components/console-context.ts';
import { JobDetail } from '../components/JobDetail.tsx';
import { QueuePanel } from '../components/QueuePanel.tsx';
import { useNow } from '../components/use-now.ts';
import { filterJobs } from '../model/job-list.ts';
import { ageText } from '../model/time-format.ts';
import { connectionStore } from '../stores/connection.ts';
import { jobsStore } from '../stores/jobs.ts';

// A stable empty list: a fresh [] per call would make the store selector loop.
const NONE: string[] = [];

export function JobsView() {
  const actions = useActions();
  const counts = useStore(jobsStore, (s) => s.counts);
  const list = useStore(jobsStore, (s) => s.list);
  const statusFilter = useStore(jobsStore, (s) => s.statusFilter);
  const search = useStore(jobsStore, (s) => s.search);
  const selectedId = useStore(jobsStore, (s) => s.selectedId);
  const nextCursor = useStore(jobsStore, (s) => s.nextCursor);
  const listError = useStore(jobsStore, (s) => s.listError);
  const jobStatuses = useStore(connectionStore, (s) => s.config?.job_statuses ?? NONE);
  const apiAuth = useStore(connectionStore, (s) => s.apiAuth);
  const now = useNow();
  const rows = useMemo(() => filterJobs(list, statusFilter, search), [list, statusFilter, search]);
  const queuedShown = useMemo(() => rows.filter((j) => j.status === 'queued').map((j) => j.id), [rows]);
  const bulkNote = useStore(jobsStore, (s) => s.bulkNote);
  const [bulkAsk, setBulkAsk] = useState<string[] | null>(null);

  return (
    <section className="view view-jobs">
      <div className="counts" data-testid="job-counts">
        <button className={statusFilter === '' ? 'count-card on' : 'count-card'} onClick={() => actions.setJobFilter({ statusFilter: '' })}>
          <span className="count-n">{jobStatuses.reduce((n, s) => n + (counts[s] ?? 0), 0)}</span>
          <span className="count-l">all</span>
        </button>
        {jobStatuses.map((s) => (
          <button key={s} className={statusFilter === s ? `count-card on c-${s}` : `count-card c-${s}`} onClick={() => actions.setJobFilter({ statusFilter: s })} data-testid={`count-${s}`}>
            <span className="count-n">{counts[s] ?? 0}</span>
            <span className="count-l">{s}</span>
          </button>
        ))}
        <input className="search" type="search" placeholder="Filter by id, kind, worker, error…" value={search} onChange={(e) => actions.setJobFilter({ search: e.target.value })} />
      </div>
      <QueuePanel />
      {(queuedShown.length > 0 || bulkNote) && (
        <div className="toolbar">
          {queuedShown.length > 0 && (
            <button className="btn warn small" onClick={() => setBulkAsk(queuedShown)} data-testid="jobs-cancel-queued" title="Cancel every queued job in the list as shown (filter and search apply)">
              Cancel {queuedShown.length} queued job{queuedShown.length === 1 ? '' : 's'}…
            </button>
          )}
          {bulkNote && (
            <span className="muted" data-testid="jobs-bulk-note">
              {bulkNote}{' '}
              <button className="btn small" onClick={() => jobsStore.getState().setBulkNote(null)}>
                dismiss
              </button>
            </span>
          )}
        </div>
      )}
      {bulkAsk && (
        <ConfirmDialog
          title={`Cancel ${bulkAsk.length} queued job${bulkAsk.length === 1 ? '' : 's'}?`}
          confirmLabel={`Cancel ${bulkAsk.length}`}
          dismissLabel="Keep them"
          onCancel={() => setBulkAsk(null)}
          onConfirm={() => {
            void actions.cancelJobs(bulkAsk);
            setBulkAsk(null);
          }}
        >
          <p>
            The queued jobs in the list as shown will not run. One that a worker has taken since it was listed is canceled as it runs.
          </p>
        </ConfirmDialog>
      )}
      {apiAuth === 'dismissed' && (
        <div className="inline-error" data-testid="api-token-needed">
          The hub refuses the jobs list without its API token (PAPRIKA_API_TOKEN).{' '}
          <button className="btn small" onClick={() => actions.askApiToken()} data-testid="api-token-ask">
            Enter API token
          </button>
        </div>
      )}
      <div className="split">
        <div className="split-main">
          <table className="dtable clickable" data-testid="jobs-table">
            <thead>
              <tr>
                <th>Job</th>
                <th>Kind</th>
                <th>Status</th>
                <th>Worker</th>
                <th className="num opt">Lane</th>
                <th className="num opt">Attempts</th>
                <th>Created</th>
                <th>Error</th>
              </tr>
            </thead>
            <tbody>
              {rows.length === 0 && (
                <tr>
                  <td colSpan={8} className="empty" data-testid="jobs-empty">
                    {listError ? `Could not load the jobs: ${listError}` : `No jobs${statusFilter ? ` with status ${statusFilter}` : ''}.`}
                  </td>
                </tr>
              )}
              {rows.map((j) => (
                <tr key={j.id} className={j.id === selectedId ? 'selected' : ''} onClick={() => void actions.openJob(j.id)} data-testid="job-row" data-job-id={j.id}>
                  <td className="mono" title={j.id}>
                    {j.id.slice(0, 8)}
                  </td>
                  <td>{j.kind}</td>
                  <td>
                    <span className={`pill js-${j.status}`}>{j.status}</span>
                  </td>
                  <td className="mono">{j.worker_id ?? '—'}</td>
                  <td className="num opt">{j.lane ?? '—'}</td>
                  <td className="num opt">{j.attempts}</td>
                  <td title={j.created_at}>{ageText(j.created_at, now)} ago</td>
                  <td className="err-cell" title={j.error ?? ''}>
                    {j.error ?? ''}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {rows.length > 0 && listError && (
            <div className="inline-error" data-testid="jobs-load-error">
              Could not load more jobs: {listError}
            </div>
          )}
          {nextCursor && (
            <button className="btn small" onClick={() => void actions.loadMoreJobs()} data-testid="jobs-load-more">
              Load more
            </button>
          )}
        </div>
        {selectedId && <JobDetail />}
      </div>
    </section>
  );
}
