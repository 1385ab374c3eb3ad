// The console's address: `#/view?key=value`. The Jobs view keeps its filter and open job there,
// so a link to a view shows the same list to whoever opens it.

export interface ViewRoute {
  view: string;
  params: Record<string, string>;
}

export function parseRoute(hash: string): ViewRoute {
  const h = hash.replace(/^#\/?/, '');
  const q = h.indexOf('?');
  const view = q < 0 ? h : h.slice(0, q);
  const params: Record<string, string> = {};
  if (q >= 0) for (const [k, v] of new URLSearchParams(h.slice(q + 1))) params[k] = v;
  return { view, params };
}

/** Empty values are left out: `#/jobs` is the unfiltered list. */
export function formatRoute(view: string, params: Record<string, string | null | undefined> = {}): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) p.set(k, v);
  const qs = p.toString();
  return `#/${view}${qs ? `?${qs}` : ''}`;
}

export interface JobsRoute {
  statusFilter: string;
  search: string;
  jobId: string | null;
}

const JOB_ID = /^[0-9a-fA-F-]{36}$/;

/** The jobs filter from the address; a status the hub does not know is dropped, not trusted. */
export function jobsRouteFrom(params: Record<string, string>, statuses: readonly string[] | null): JobsRoute {
  const status = params.status ?? '';
  return {
    statusFilter: status && (!statuses || statuses.includes(status)) ? status : '',
    search: (params.q ?? '').slice(0, 200),
    jobId: params.job && JOB_ID.test(params.job) ? params.job : null,
  };
}

export function jobsRouteHash(r: JobsRoute): string {
  return formatRoute('jobs', { status: r.statusFilter, q: r.search, job: r.jobId });
}
