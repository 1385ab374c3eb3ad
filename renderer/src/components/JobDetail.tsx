// One job: spec, timeline (created → assigned → finished), error, the failure screenshot,
// result and assets; rerun, and cancel (a running job asks first).
import { useEffect, useState } from 'react';
import { useStore } from 'zustand';
import { isImageAsset, timeline } from '../model/job-list.ts';
import { dateTimeText, durationText } from '../model/time-format.ts';
import { jobsStore } from '../stores/jobs.ts';
import { ConfirmDialog } from './ConfirmDialog.tsx';
import { useActions } from './console-context.ts';

const CANCELABLE = new Set(['queued', 'running']);
/** What a lane photographs when a job fails (worker-agent chrome-lane). */
const FAILURE_SHOT = 'failure.png';

export function JobDetail() {
  const actions = useActions();
  const job = useStore(jobsStore, (s) => s.detail);
  const error = useStore(jobsStore, (s) => s.detailError);
  const assets = useStore(jobsStore, (s) => s.assets);
  const selectedId = useStore(jobsStore, (s) => s.selectedId);
  const [confirmCancel, setConfirmCancel] = useState(false);
  // The question is about one job: another job selected closes it (its backdrop once covered the new job's buttons).
  useEffect(() => setConfirmCancel(false), [selectedId]);
  const names = job?.assets ?? [];
  const failureShot = job?.status === 'failed' && names.includes(FAILURE_SHOT) ? assets.find((a) => a.name === FAILURE_SHOT) : undefined;
  const others = failureShot ? names.filter((n) => n !== FAILURE_SHOT) : names;

  return (
    <aside className="detail" data-testid="job-detail">
      <div className="detail-head">
        <h2 className="mono" title={selectedId ?? ''}>
          {selectedId}
        </h2>
        {job && !CANCELABLE.has(job.status) && (
          <button className="btn small" onClick={() => void actions.rerunJob(job.id)} data-testid="job-rerun" title="Submit a new job with this job's kind and spec">
            Rerun
          </button>
        )}
        {job && CANCELABLE.has(job.status) && (
          <button
            className="btn warn small"
            onClick={() => (job.status === 'running' ? setConfirmCancel(true) : void actions.cancelJob(job.id))}
            data-testid="job-cancel"
          >
            Cancel job
          </button>
        )}
        <button className="btn small" onClick={() => actions.closeJob()} aria-label="close">
          ✕
        </button>
      </div>
      {error && <div className="inline-error">{error}</div>}
      {!job && !error && <p className="muted">Loading…</p>}
      {job && (
        <>
          <dl className="facts">
            <dt>Status</dt>
            <dd>
              <span className={`pill js-${job.status}`}>{job.status}</span>
            </dd>
            <dt>Kind</dt>
            <dd>{job.kind}</dd>
            <dt>Worker</dt>
            <dd className="mono">
              {job.worker_id ?? '—'}
              {job.lane !== null ? ` · lane ${job.lane}` : ''}
            </dd>
            <dt>Hub</dt>
            <dd className="mono">{job.hub_id ?? '—'}</dd>
            <dt>Attempts</dt>
            <dd>{job.attempts}</dd>
          </dl>
          <h3>Timeline</h3>
          <ol className="timeline" data-testid="job-timeline">
            {timeline(job).map((step, i, all) => (
              <li key={step.label + i} className={step.at ? 'done' : 'todo'}>
                <span className="tl-label">{step.label}</span>
                <span className="tl-at">{dateTimeText(step.at)}</span>
                {i > 0 && step.at && <span className="tl-dur">+{durationText(all[i - 1].at, step.at)}</span>}
              </li>
            ))}
          </ol>
          {job.error && (
            <>
              <h3>Error</h3>
              <pre className="code err">{job.error}</pre>
            </>
          )}
          {failureShot !== undefined || (job.status === 'failed' && names.includes(FAILURE_SHOT)) ? (
            <>
              <h3>Page when it failed</h3>
              {failureShot?.url ? (
                <img className="failure-shot" src={failureShot.url} alt="the lane's page when the job failed" data-testid="failure-screenshot" />
              ) : (
                <div className="asset-file">{failureShot?.error ?? 'loading…'}</div>
              )}
            </>
          ) : null}
          <h3>Spec</h3>
          <pre className="code">{JSON.stringify(job.spec, null, 2)}</pre>
          {job.result !== null && job.result !== undefined && (
            <>
              <h3>Result</h3>
              <pre className="code">{JSON.stringify(job.result, null, 2)}</pre>
            </>
          )}
          {others.length > 0 && (
            <>
              <h3>Assets</h3>
              <div className="assets">
                {others.map((name) => {
                  const a = assets.find((x) => x.name === name);
                  return (
                    <figure key={name} className="asset">
                      {isImageAsset(name) && a?.url ? <img src={a.url} alt={name} data-testid="job-asset-img" /> : <div className="asset-file">{a?.error ?? (isImageAsset(name) ? 'loading…' : 'file')}</div>}
                      <figcaption className="mono">{name}</figcaption>
                    </figure>
                  );
                })}
              </div>
            </>
          )}
        </>
      )}
      {confirmCancel && job && (
        <ConfirmDialog
          title={`Cancel running job ${job.id.slice(0, 8)}?`}
          confirmLabel="Cancel the job"
          dismissLabel="Keep it running"
          onCancel={() => setConfirmCancel(false)}
          onConfirm={() => {
            setConfirmCancel(false);
            void actions.cancelJob(job.id);
          }}
        >
          <p>
            It is running on {job.worker_id ?? 'a worker'}
            {job.lane !== null ? `, lane ${job.lane}` : ''}. The worker stops it; whatever it did so far is not undone.
          </p>
        </ConfirmDialog>
      )}
    </aside>
  );
}
