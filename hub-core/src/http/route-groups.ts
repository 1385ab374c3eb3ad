// Which credential each route needs, declared in one table (SPEC.md § Additions: security is
// declared, not inferred). server.ts copies the group onto every route as it is registered and
// refuses to start when a route is missing here; the onRequest hook then checks the token of
// the route the router matched (after its decoding), never a raw URL prefix.
export type RouteGroup = 'public' | 'api' | 'admin' | 'worker' | 'peer' | 'metrics';

export interface RouteDecl {
  group: RouteGroup;
  /** A WebSocket route: reached only through an upgrade (server.ts routes upgrades through Fastify). */
  ws?: true;
  /**
   * The token may also come as `?token=` (GET /cdp only: puppeteer.connect users can often set
   * nothing but a URL). Nowhere else: a token in a URL ends up in proxy logs.
   */
  queryToken?: true;
}

/** `METHOD /fastify/path` → its group. HEAD routes take their GET's entry. */
export const ROUTE_TABLE: Readonly<Record<string, RouteDecl>> = Object.freeze({
  'GET /': { group: 'public' },
  'GET /assets/*': { group: 'public' },
  'GET /healthz': { group: 'public' },
  'GET /favicon.ico': { group: 'public' },
  'GET /metrics': { group: 'metrics' },

  'POST /jobs': { group: 'api' },
  'POST /jobs/batch': { group: 'api' },
  'GET /jobs': { group: 'api' },
  'GET /jobs/:id': { group: 'api' },
  'POST /jobs/:id/cancel': { group: 'api' },
  'GET /jobs/:id/assets/:name': { group: 'api' },
  'POST /sessions': { group: 'api' },
  'POST /sessions/:id/commands': { group: 'api' },
  'DELETE /sessions/:id': { group: 'api' },
  'GET /cdp': { group: 'api', ws: true, queryToken: true },

  'POST /workers/register': { group: 'worker' },
  'GET /workers/:id/link': { group: 'worker', ws: true },
  // A worker's tunnel for one CDP client; also needs the one-time token its link received.
  'GET /workers/:id/cdp/:cdp_id': { group: 'worker', ws: true },

  'POST /internal/jobs/:id/assign': { group: 'peer' },
  'POST /internal/jobs/:id/cancel-on-worker': { group: 'peer' },
  // A peer hub watching wall tiles of the workers linked here (served from local links only).
  'GET /internal/wall': { group: 'peer', ws: true },

  'GET /admin/workers': { group: 'admin' },
  'PATCH /admin/workers/:id': { group: 'admin' },
  'DELETE /admin/workers/:id': { group: 'admin' },
  'POST /admin/workers/:id/reset-credentials': { group: 'admin' },
  'POST /admin/workers/:id/lanes/:index/view': { group: 'admin' },
  'GET /admin/hubs': { group: 'admin' },
  'GET /admin/stats': { group: 'admin' },
  'GET /admin/stats/history': { group: 'admin' },
  'GET /admin/queue': { group: 'admin' },
  'GET /admin/workers/:id/detail': { group: 'admin' },
  'GET /admin/config': { group: 'admin' },
  'GET /admin/audit': { group: 'admin' },
  'GET /admin/events': { group: 'admin', ws: true },
  'GET /admin/wall': { group: 'admin', ws: true },
  // Unknown /admin paths answer 404 only to an admin: nothing about them leaks to others.
  'GET /admin/*': { group: 'admin' },
});

export function routeDecl(method: string, url: string): RouteDecl | undefined {
  return ROUTE_TABLE[`${method === 'HEAD' ? 'GET' : method} ${url}`];
}
