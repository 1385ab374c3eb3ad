// The one-hop rules between hubs, on fakes: which requests go to a peer, which stay, and that a
// forwarded request is never forwarded again.
import { describe, expect, it } from 'vitest';
import { PaprikaError } from '../../../hub-core/src/wire/errors.ts';
import type { ForwardResponse } from '../../../hub-core/src/hub/forwarder.ts';
import { PeerRouting, type Hop } from '../../../hub-core/src/hub/peer-routing.ts';
import type { JobRow } from '../../../hub-core/src/ports/job-store.ts';
import { RegistryUnavailableError } from '../../../hub-core/src/ports/registry.ts';

const HERE = 'hub-a';
const direct: Hop = { forwarded: false, auth: { authorization: 'Bearer client' } };
const forwarded: Hop = { forwarded: true, auth: {} };

function row(status: JobRow['status'], over: Partial<JobRow> = {}): JobRow {
  return { id: '00000000-0000-4000-8000-000000000001', kind: 'sleep', spec: {}, status, worker_id: null, lane: null, hub_id: null, session_id: null, novnc_url: null, error: null, result: null, attempts: 0, created_at: new Date(0), assigned_at: null, finished_at: null, deadline_at: null, released_at: null, idempotency_key: null, ...over };
}

function setup(o: { owner?: string; sessionOwner?: string; alive?: readonly string[]; peer?: boolean; answer?: ForwardResponse | Error; job?: JobRow; assign?: 'assigned' | 'no_lane' | 'taken' } = {}) {
  const forwards: Array<{ route: string; url: string; method: string; path: string; body: unknown; headers?: Record<string, string> }> = [];
  const assigned: string[] = [];
  const routing = new PeerRouting({
    config: { hubId: HERE },
    registry: { getOwner: async () => o.owner, getSessionOwner: async () => o.sessionOwner },
    forwarder: {
      hubUrl: async (id) => ((o.alive ?? []).includes(id) ? `http://${id}` : undefined),
      bestPeer: async () => (o.peer ? { hubId: 'hub-b', url: 'http://hub-b', free: 3 } : undefined),
      forward: async (route, url, method, path, body, headers) => {
        forwards.push({ route, url, method, path, body, headers });
        if (o.answer instanceof Error) throw o.answer;
        return o.answer ?? { status: 200, body: { ok: true }, headers: {} };
      },
    },
    jobs: { getJob: async () => o.job },
    dispatcher: {
      assign: async (job) => {
        assigned.push(job.id);
        return o.assign === 'assigned' ? { kind: 'assigned', job: { ...job, status: 'running' } } : o.assign === 'taken' ? { kind: 'taken', job: undefined } : { kind: 'no_lane' };
      },
    },
  });
  return { routing, forwards, assigned };
}

describe('PeerRouting.placeOnPeer (a new job still queued after the local wait)', () => {
  it.each([
    ['a forwarded request stays here', { peer: true }, row('queued'), forwarded, undefined, 0],
    ['a job that is no longer queued stays here', { peer: true }, row('running'), direct, undefined, 0],
    ['no peer with a free lane: stays queued here', { peer: false }, row('queued'), direct, undefined, 0],
    ['the peer took it: its answer', { peer: true }, row('queued'), direct, { ok: true }, 1],
    ['the peer had no lane either (409): stays queued here', { peer: true, answer: { status: 409, body: {}, headers: {} } }, row('queued'), direct, undefined, 1],
    ['the peer is unreachable: stays queued here', { peer: true, answer: new Error('down') }, row('queued'), direct, undefined, 1],
  ] as const)('%s', async (_name, o, job, hop, out, calls) => {
    const { routing, forwards } = setup(o);
    expect(await routing.placeOnPeer(job, hop)).toEqual(out);
    expect(forwards).toHaveLength(calls);
    if (calls) expect(forwards[0]).toMatchObject({ route: 'jobs.assign', url: 'http://hub-b', method: 'POST', path: `/internal/jobs/${job.id}/assign` });
  });
});

describe('PeerRouting.takeForwardedJob (a peer asks this hub to run a queued job)', () => {
  it('an unknown job is not found', async () => {
    expect(await setup({}).routing.takeForwardedJob('x')).toEqual({ kind: 'not_found' });
  });
  it('a job no longer queued is answered as it is, without an assignment', async () => {
    const s = setup({ job: row('succeeded') });
    expect(await s.routing.takeForwardedJob('x')).toMatchObject({ kind: 'answered', job: { status: 'succeeded' } });
    expect(s.assigned).toEqual([]);
  });
  it('a queued job assigned here is answered with its running row', async () => {
    expect(await setup({ job: row('queued'), assign: 'assigned' }).routing.takeForwardedJob('x')).toMatchObject({ kind: 'answered', job: { status: 'running' } });
  });
  it.each(['no_lane', 'taken'] as const)('a queued job not assigned here (%s) says why', async (assign) => {
    expect(await setup({ job: row('queued'), assign }).routing.takeForwardedJob('x')).toEqual({ kind: 'no_free_lane', outcome: assign });
  });
});

describe('PeerRouting.cancelAtOwner (a job canceled here, its worker linked elsewhere)', () => {
  const canceled = row('canceled', { worker_id: 'w1' });
  it.each([
    ['tells the owning hub', canceled, false, direct, { owner: 'hub-b', alive: ['hub-b'] }, 1],
    ['not when the cancel already reached the worker here', canceled, true, direct, { owner: 'hub-b', alive: ['hub-b'] }, 0],
    ['not for a forwarded request', canceled, false, forwarded, { owner: 'hub-b', alive: ['hub-b'] }, 0],
    ['not when the job did not end canceled', row('succeeded', { worker_id: 'w1' }), false, direct, { owner: 'hub-b', alive: ['hub-b'] }, 0],
    ['not for a job that never had a worker', row('canceled'), false, direct, { owner: 'hub-b', alive: ['hub-b'] }, 0],
    ['not when this hub owns the worker', canceled, false, direct, { owner: HERE, alive: [HERE] }, 0],
    ['not when the owner is dead', canceled, false, direct, { owner: 'hub-b', alive: [] }, 0],
  ] as const)('%s', async (_name, job, sent, hop, o, calls) => {
    const { routing, forwards } = setup(o);
    await routing.cancelAtOwner(job, sent, hop);
    expect(forwards).toHaveLength(calls);
    if (calls) expect(forwards[0]).toMatchObject({ route: 'jobs.cancel', url: 'http://hub-b', path: `/internal/jobs/${job.id}/cancel-on-worker` });
  });

  it('a stalled registry does not fail a cancel already committed (it answered 503)', async () => {
    const { routing, forwards } = setup({ owner: 'hub-b', alive: ['hub-b'] });
    (routing as unknown as { d: { registry: { getOwner(): Promise<never> } } }).d.registry.getOwner = async () => {
      throw new RegistryUnavailableError(new Error('Command timed out'));
    };
    await expect(routing.cancelAtOwner(canceled, false, direct)).resolves.toBeUndefined();
    expect(forwards).toHaveLength(0);
  });
});

describe('PeerRouting sessions', () => {
  const req = { method: 'DELETE', path: '/sessions/s1', body: undefined };
  it.each([
    ['a forwarded request is not found (never a second hop)', { sessionOwner: 'hub-b', alive: ['hub-b'] }, forwarded, 404, 'No such session'],
    ['no owner in the registry: not found', {}, direct, 404, 'No such session'],
    ['owned by this hub but not held: it ended', { sessionOwner: HERE }, direct, 404, 'Session ended'],
    ['the owner is dead: 502', { sessionOwner: 'hub-b', alive: [] }, direct, 502, 'The hub owning this session is not alive'],
  ] as const)('%s', async (_name, o, hop, status, message) => {
    const { routing, forwards } = setup(o);
    const err = await routing.toSessionOwner('s1', hop, req).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PaprikaError);
    expect(err).toMatchObject({ status, message });
    expect(forwards).toEqual([]);
  });
  it('a live owner elsewhere gets the request with the caller credentials', async () => {
    const { routing, forwards } = setup({ sessionOwner: 'hub-b', alive: ['hub-b'] });
    expect(await routing.toSessionOwner('s1', direct, req)).toMatchObject({ status: 200 });
    expect(forwards).toEqual([{ route: 'sessions', url: 'http://hub-b', method: 'DELETE', path: '/sessions/s1', body: undefined, headers: direct.auth }]);
  });
  it('opens on the best peer, never for a forwarded request', async () => {
    const s = setup({ peer: true });
    expect(await s.routing.openSessionOnPeer({}, forwarded)).toBeUndefined();
    expect(await s.routing.openSessionOnPeer({ idle_timeout_s: 5 }, direct)).toMatchObject({ status: 200 });
    expect(s.forwards).toEqual([{ route: 'sessions.open', url: 'http://hub-b', method: 'POST', path: '/sessions', body: { idle_timeout_s: 5 }, headers: direct.auth }]);
    expect(await setup({ peer: false }).routing.openSessionOnPeer({}, direct)).toBeUndefined();
  });
});
