// An operator's status change and a passed-on cancel, on fakes: stored first (through the ledger),
// applied on the link here, or forwarded once to the hub holding the link; `applied_by` says which.
import { describe, expect, it } from 'vitest';
import type { ForwardResponse } from '../../../hub-core/src/hub/forwarder.ts';
import type { Hop } from '../../../hub-core/src/hub/peer-routing.ts';
import { WorkerAdmin } from '../../../hub-core/src/hub/worker-admin.ts';

const direct: Hop = { forwarded: false, auth: { authorization: 'Bearer admin' } };
const forwarded: Hop = { forwarded: true, auth: {} };

function setup(o: { linkedHere?: boolean; ownerUrl?: string; answer?: ForwardResponse } = {}) {
  const steps: string[] = [];
  const admin = new WorkerAdmin({
    config: { hubId: 'hub-a' },
    ledger: {
      recordWorkerStatus: async (id, status, actor) => void steps.push(`store ${id} ${status} ${actor}`),
      cancelOnWorker: async (id) => (steps.push(`cancel ${id}`), Boolean(o.linkedHere)),
    },
    links: { pushStatus: async (id, status) => (steps.push(`push ${id} ${status}`), Boolean(o.linkedHere)) },
    peers: { workerOwnerUrl: async () => (steps.push('owner'), o.ownerUrl) },
    forwarder: { forward: async (route, url, method, path, body, headers) => (steps.push(`forward ${route} ${url} ${method} ${path} ${JSON.stringify(body)} ${JSON.stringify(headers)}`), o.answer ?? { status: 200, body: { worker_id: 'w1', applied_by: 'hub-b' }, headers: {} }) },
    publisher: { flush: async () => void steps.push('flush') },
    fleetView: { read: async () => (steps.push('read'), { workers: [{ worker_id: 'w1' } as never], as_of: 0, stale: false, partial: false }) },
  });
  return { admin, steps };
}

describe('WorkerAdmin.setStatus', () => {
  it('linked here: stored, pushed on the link, published, applied by this hub', async () => {
    const { admin, steps } = setup({ linkedHere: true });
    expect(await admin.setStatus('w1', 'drain', 'admin@1.2.3.4', direct)).toEqual({ kind: 'stored', appliedBy: 'hub-a', row: { worker_id: 'w1' } });
    expect(steps).toEqual(['store w1 drain admin@1.2.3.4', 'push w1 drain', 'flush', 'read']);
  });

  it('linked to another live hub: stored, then forwarded once with the caller credentials; its answer passes through', async () => {
    const { admin, steps } = setup({ ownerUrl: 'http://hub-b' });
    expect(await admin.setStatus('w1', 'standby', 'admin@x', direct)).toEqual({ kind: 'forwarded', body: { worker_id: 'w1', applied_by: 'hub-b' } });
    expect(steps.slice(1)).toEqual(['push w1 standby', 'owner', 'forward admin.workers http://hub-b PATCH /admin/workers/w1 {"status":"standby"} {"authorization":"Bearer admin"}']);
  });

  it('the owning hub does not answer 200: stored only (applied by nobody)', async () => {
    const { admin } = setup({ ownerUrl: 'http://hub-b', answer: { status: 404, body: {}, headers: {} } });
    expect(await admin.setStatus('w1', 'drain', 'admin@x', direct)).toMatchObject({ kind: 'stored', appliedBy: 'nobody' });
  });

  it('offline: stored only, applied when it links (applied by nobody)', async () => {
    const { admin, steps } = setup({});
    expect(await admin.setStatus('w1', 'drain', 'admin@x', direct)).toMatchObject({ kind: 'stored', appliedBy: 'nobody' });
    expect(steps.some((s) => s.startsWith('forward'))).toBe(false);
  });

  it('a forwarded request not linked here is stored and never forwarded again', async () => {
    const { admin, steps } = setup({ ownerUrl: 'http://hub-b' });
    expect(await admin.setStatus('w1', 'active', 'hub:hub-b', forwarded)).toMatchObject({ kind: 'stored', appliedBy: 'hub-a' });
    expect(steps.filter((s) => s === 'owner' || s.startsWith('forward'))).toEqual([]);
  });
});

describe('WorkerAdmin.cancelOnWorker', () => {
  it.each([
    ['linked here: the ledger sends the cancel', true],
    ['not linked here: nothing is sent', false],
  ] as const)('%s', async (_name, linkedHere) => {
    const { admin, steps } = setup({ linkedHere });
    expect(await admin.cancelOnWorker('j1')).toBe(linkedHere);
    expect(steps).toEqual(['cancel j1']);
  });
});
