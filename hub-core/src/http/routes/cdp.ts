// GET /cdp: a whole browser for an unmodified Puppeteer or Playwright script (hub/cdp-service.ts
// places it); GET /workers/:id/cdp/:cdp_id: the worker's tunnel back for one such client. Both are
// refused with an ordinary HTTP answer (401, 403, 503 + Retry-After) before any upgrade.
import type { FastifyInstance } from 'fastify';
import type { WebSocketServer } from 'ws';
import type { CdpService } from '../../hub/cdp-service.ts';
import { FORWARDED_HEADER } from '../../hub/forwarder.ts';
import { PaprikaError } from '../../wire/errors.ts';
import { completeUpgrade, pendingUpgrade } from '../upgrades.ts';

const WORKER_ID = /^[A-Za-z0-9_-]{1,100}$/;
const CDP_ID = /^[0-9a-f-]{36}$/;
export const TUNNEL_TOKEN_HEADER = 'x-paprika-tunnel-token';

export interface CdpRouteDeps {
  cdp: Pick<CdpService, 'limits' | 'place' | 'splice' | 'claimTunnel'>;
  /** How long a connect waits for a free lane (PAPRIKA_ASSIGN_WAIT_S). */
  assignWaitS: number;
  /** The hub is stopping: connects are refused. */
  stopping: () => boolean;
}

export function cdpRoutes({ cdp, assignWaitS, stopping }: CdpRouteDeps, wss: WebSocketServer) {
  return async (app: FastifyInstance) => {
    app.get('/cdp', async (req, reply) => {
      const up = pendingUpgrade(req.raw);
      if (!up) throw new PaprikaError('upgrade_required', { path: '/cdp' });
      if (stopping()) throw new PaprikaError('shutting_down', null, undefined, 1);
      const limits = cdp.limits(req.query as Record<string, unknown>);
      // The auth hook kept this header only for a proven peer: such a connect never goes further, and does not wait.
      const forwarded = req.headers[FORWARDED_HEADER] !== undefined;
      const gone = new AbortController();
      const onGone = () => gone.abort();
      up.socket.once('close', onGone);
      let upstream;
      try {
        upstream = await cdp.place(limits, { forwarded, waitS: forwarded ? 0 : assignWaitS, signal: gone.signal });
      } finally {
        up.socket.off('close', onGone);
      }
      if (gone.signal.aborted) {
        upstream.ws.terminate();
        upstream.end('client left before the upgrade');
        return reply.hijack();
      }
      reply.hijack();
      completeUpgrade(wss, req.raw, up, (ws) => cdp.splice(ws, upstream, limits));
    });

    app.get('/workers/:id/cdp/:cdp_id', (req, reply) => {
      const { id, cdp_id } = req.params as { id: string; cdp_id: string };
      if (!WORKER_ID.test(id) || !CDP_ID.test(cdp_id)) throw new PaprikaError('bad_request', { id, cdp_id }, 'not a worker or CDP id');
      const up = pendingUpgrade(req.raw);
      if (!up) throw new PaprikaError('upgrade_required', { path: '/workers/:id/cdp/:cdp_id' });
      const token = req.headers[TUNNEL_TOKEN_HEADER];
      const take = cdp.claimTunnel(id, cdp_id, typeof token === 'string' ? token : undefined);
      reply.hijack();
      completeUpgrade(wss, req.raw, up, take);
    });
  };
}
