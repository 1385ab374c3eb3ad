// An operator's status change and a passed-on cancel, on fakes: stored first (through the ledger),
// applied on the link here, or forwarded once to the hub holding the link; `applied_by` says which.
import { describe, expect, it } from 'vitest';
import type { ForwardResponse } from '../../../hub-core/src/hub/forwarder.ts';
import type { Hop } from '../../../hub-core/src/hub/peer-routing.ts';
import { WorkerAdmin } from '../../../hub-core/src/hub/worker-admin.ts';

const direct: Hop = { forwarded: false, auth: { authorization: 'Bearer admin' } };
const forwarded: Hop = { forwarded: true, auth: {} };

function setup(o: { linkedHere?: boolean; ownerUrl?: string; answer?: ForwardResponse; row?: Record<string, unknown>; link?: { left_at_ms: number | null } } = {}) {
  const steps: string[] = [];
  const admin = new WorkerAdmin({
    config: { hubId: 'hub-a' },
    ledger: {
      recordWorkerStatus: async (id, status, actor) => void steps.push(`store ${id} ${status} ${actor}`),
      cancelOnWorker: async (id) => (steps.push(`cancel ${id}`), Boolean(o.linkedHere)),
      recordWorkerForgotten: async (id, actor, details) => void steps.push(`forgotten ${id} ${actor} ${JSON.stringify(details)}`),
    },
    links: { pushStatus: async (id, status) => (steps.push(`push ${id} ${status}`), Boolean(o.linkedHere)) },
    peers: { workerOwnerUrl: async () => (steps.push('owner'), o.ownerUrl) },
    forwarder: { forward: async (route, url, method, path, body, headers) => (steps.push(`forward ${route} ${url} ${method} ${path} ${JSON.stringify(body)} ${JSON.stringify(headers)}`), o.answer ?? { status: 200, body: { worker_id: 'w1', applied_by: 'hub-b' }, headers: {} }) },
    publisher: { flush: async () => void steps.push('flush') },
    fleetView: { read: async () => (steps.push('read'), { workers: [(o.row ?? { worker_id: 'w1' }) as never], as_of: 0, stale: false, partial: false }) },
    localLinks: { get: () => (o.link ? ({ ...o.link, meta: { hubId: 'hub-a' } } as never) : undefined) },
    registry: { forgetWorker: async (id) => (steps.push(`registry forget ${id}`), true) },
    events: { workersChanged: () => void steps.push('changed') },
    log: { warn: () => {} } as never,
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

describe('WorkerAdmin.forget', () => {
  const offline = { worker_id: 'w1', hub_id: 'hub-b', alive: false, lan_ip: '10.0.0.1', hostname: 'h', last_seen_ms: 0, left_at_ms: 5 };

  it('an offline worker: out of the registry, recorded (who, and what it was), announced', async () => {
    const { admin, steps } = setup({ row: offline });
    expect(await admin.forget('w1', 'admin@x')).toEqual({ worker_id: 'w1', forgotten: true });
    expect(steps).toEqual(['read', 'registry forget w1', `forgotten w1 admin@x ${JSON.stringify({ hub_id: 'hub-b', lan_ip: '10.0.0.1', hostname: 'h', last_seen: new Date(0).toISOString(), left: true })}`, 'changed']);
  });

  it.each([
    ['alive in the fleet view', { row: { ...offline, alive: true } }],
    ['linked here and not leaving, whatever the view says', { row: offline, link: { left_at_ms: null } }],
  ])('refuses a live worker (%s) with 409 worker_alive and changes nothing', async (_name, o) => {
    const { admin, steps } = setup(o);
    await expect(admin.forget('w1', 'admin@x')).rejects.toMatchObject({ code: 'worker_alive', status: 409 });
    expect(steps).toEqual(['read']);
  });

  it('a worker that said goodbye on a link still closing here can be forgotten', async () => {
    const { admin } = setup({ row: offline, link: { left_at_ms: 5 } });
    expect(await admin.forget('w1', 'admin@x')).toMatchObject({ forgotten: true });
  });

  it('an unknown worker: 404, nothing changed', async () => {
    const { admin, steps } = setup({ row: { ...offline, worker_id: 'other' } });
    await expect(admin.forget('w1', 'admin@x')).rejects.toMatchObject({ code: 'not_found', status: 404 });
    expect(steps).toEqual(['read']);
  });
});
