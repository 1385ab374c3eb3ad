// Workers: filters, the virtualised table, and the confirm steps before draining busy workers
// and before resetting a worker's credentials.
import { useCallback, useMemo, useRef, useState } from 'react';
import type { Worker } from '../api/types.ts';
import { useStore } from 'zustand';
import { ConfirmDialog } from '../components/ConfirmDialog.tsx';
import { useActions } from '../components/console-context.ts';
import { WorkerTable } from '../components/WorkerTable.tsx';
import { WorkerToolbar } from '../components/WorkerToolbar.tsx';
import { WorkerDrawer } from '../components/WorkerDrawer.tsx';
import type { PendingConfirm } from '../live/console-actions.ts';
import { visibleWorkers } from '../model/worker-table.ts';
import { connectionStore } from '../stores/connection.ts';
import { fleetStore } from '../stores/fleet.ts';

export function WorkersView() {
  const actions = useActions();
  const workers = useStore(fleetStore, (s) => s.workers);
  const filter = useStore(fleetStore, (s) => s.filter);
  const sort = useStore(fleetStore, (s) => s.sort);
  const actionError = useStore(fleetStore, (s) => s.actionError);
  const config = useStore(connectionStore, (s) => s.config);
  const [confirm, setConfirm] = useState<PendingConfirm | null>(null);
  const [resetting, setResetting] = useState<string | null>(null);
  // The last order seeds the next sort: a snapshot that moved no row sorts in one pass.
  const lastRows = useRef<Worker[]>([]);
  const rows = useMemo(() => (lastRows.current = visibleWorkers(workers, filter, sort, config, lastRows.current)), [workers, filter, sort, config]);

  const onSetStatus = useCallback((id: string, status: string) => setConfirm(actions.requestStatus(id, status)), [actions]);
  const cancel = useCallback(() => setConfirm(null), []);
  const onResetCredentials = useCallback((id: string) => setResetting(id), []);
  const cancelReset = useCallback(() => setResetting(null), []);
  const onForget = useCallback((id: string) => void actions.forgetWorker(id), [actions]);
  const onOpen = useCallback((id: string) => actions.openWorker(id), [actions]);

  return (
    <section className="view view-workers">
      <WorkerToolbar shown={rows.length} total={workers.length} />
      {actionError && (
        <div className="inline-error" role="alert">
          {actionError}{' '}
          <button className="btn small" onClick={() => fleetStore.getState().setActionError(null)}>
            dismiss
          </button>
        </div>
      )}
      <WorkerTable rows={rows} config={config} onSetStatus={onSetStatus} onOpen={onOpen} />
      <WorkerDrawer onResetCredentials={onResetCredentials} onForget={onForget} />
      {confirm && (
        <ConfirmDialog
          title={`Set ${confirm.workerId} to ${confirm.status}?`}
          confirmLabel={`Set ${confirm.status}`}
          onCancel={cancel}
          onConfirm={() => {
            void actions.setWorkerStatus(confirm.workerId, confirm.status);
            setConfirm(null);
          }}
        >
          <p>
            {confirm.workerId} has <b>{confirm.inFlight}</b> job{confirm.inFlight === 1 ? '' : 's'} in flight. They run to completion; the scheduler stops
            giving it new work.
          </p>
        </ConfirmDialog>
      )}
      {resetting && (
        <ConfirmDialog
          title={`Reset credentials of ${resetting}?`}
          confirmLabel="Reset credentials"
          onCancel={cancelReset}
          onConfirm={() => {
            void actions.resetCredentials(resetting);
            setResetting(null);
          }}
        >
          <p>
            The hub forgets {resetting}'s secret, so the next registration for this id succeeds — whoever makes it. Do this when the worker lost its credential
            file or its machine was replaced. A link that is up now stays up; at its next link the worker must enroll again.
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}
