import { describe, expect, it } from 'vitest';
import { formatRoute, jobsRouteFrom, jobsRouteHash, parseRoute } from '../../../renderer/src/model/view-route.ts';

const ID = '0d6f1c1e-8a4b-4c55-9d1e-2f3a4b5c6d7e';

describe('the console address', () => {
  it('reads the view and its parameters, with or without a query', () => {
    expect(parseRoute('')).toEqual({ view: '', params: {} });
    expect(parseRoute('#/workers')).toEqual({ view: 'workers', params: {} });
    expect(parseRoute('#/jobs?status=failed&q=a%20b')).toEqual({ view: 'jobs', params: { status: 'failed', q: 'a b' } });
  });

  it('round-trips the jobs filter and open job, leaving empty values out', () => {
    const r = { statusFilter: 'failed', search: 'timeout & more', jobId: ID };
    expect(jobsRouteFrom(parseRoute(jobsRouteHash(r)).params, ['failed'])).toEqual(r);
    expect(jobsRouteHash({ statusFilter: '', search: '', jobId: null })).toBe('#/jobs');
    expect(formatRoute('charts', { range: null })).toBe('#/charts');
  });

  it('drops what it cannot trust: unknown statuses, ids that are not job ids, endless searches', () => {
    const r = jobsRouteFrom({ status: 'exploded', job: '../../admin', q: 'x'.repeat(5000) }, ['queued', 'failed']);
    expect(r).toEqual({ statusFilter: '', search: 'x'.repeat(200), jobId: null });
    // Before the hub's config arrives any status is kept: the hub answers a bad one with a 400.
    expect(jobsRouteFrom({ status: 'failed' }, null).statusFilter).toBe('failed');
  });
});
