// /healthz, /metrics and the console (renderer/dist) at /.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config.ts';
import { packageFile } from '../../package-files.ts';
import { withDeadline, type Clock } from '../../ports/clock.ts';
import { openGroups } from '../auth.ts';
import { consoleCsp } from '../browser-guards.ts';
import { contentTypeFor } from '../content-types.ts';

export const DEFAULT_CONSOLE_DIR = packageFile(import.meta.url, 'renderer/dist', '../../../../renderer/dist');
const NOT_BUILT = `<!doctype html><meta charset="utf-8"><title>Paprika hub</title>
<body style="font-family:sans-serif;margin:3em"><h1>Paprika hub</h1>
<p>The console is not built yet. Run <code>npm run build</code>, then reload.</p>
<p>The API answers: <a href="/admin/workers">/admin/workers</a>, <a href="/healthz">/healthz</a>.</p></body>`;

const HEALTH_CHECK_MS = 2000;

export interface SystemRouteDeps {
  config: Config;
  clock: Clock;
  /** Each answers (resolves) when its service is reachable. */
  checks: { database(): Promise<unknown>; registry(): Promise<unknown> };
  /** This hub's state for /healthz: stopping (refusing new jobs) and the workers linked here. */
  state(): { stopping: boolean; workers: number };
  metrics: { readonly contentType: string; text(): Promise<string> };
  consoleDir?: string;
}

export function systemRoutes({ config, clock, checks, state, metrics, consoleDir = DEFAULT_CONSOLE_DIR }: SystemRouteDeps) {
  const healthy = (what: string, check: () => Promise<unknown>) =>
    withDeadline(clock, HEALTH_CHECK_MS, what, check()).then(
      () => true,
      () => false,
    );
  return async (app: FastifyInstance) => {
    // PAPRIKA_INSECURE says so where monitoring looks, with the groups anyone may use.
    const open = openGroups(config);
    const insecure = config.insecure && open.length > 0 ? { insecure: true, open_groups: open } : {};
    app.get('/healthz', async (_req, reply) => {
      const [db, registry] = await Promise.all([healthy('database ping', checks.database), healthy('registry ping', checks.registry)]);
      const { stopping, workers } = state();
      const ok = db && registry && !stopping;
      return reply.status(ok ? 200 : 503).send({ status: ok ? 'ok' : stopping ? 'stopping' : 'degraded', hub_id: config.hubId, checks: { database: db, registry }, workers, ...insecure });
    });

    app.get('/metrics', async (_req, reply) => {
      return reply.type(metrics.contentType).send(await metrics.text());
    });

    const serve = async (file: string): Promise<{ type: string; data: Buffer } | undefined> => {
      const resolved = path.resolve(consoleDir, file);
      if (!resolved.startsWith(consoleDir + path.sep) && resolved !== consoleDir) return undefined;
      try {
        return { type: contentTypeFor(resolved), data: await fs.readFile(resolved) };
      } catch {
        return undefined;
      }
    };

    app.get('/', async (req, reply) => {
      const index = await serve('index.html');
      reply.header('content-security-policy', consoleCsp(req.headers.host));
      return index ? reply.type(index.type).send(index.data) : reply.type('text/html; charset=utf-8').send(NOT_BUILT);
    });

    app.get('/assets/*', async (req, reply) => {
      const file = await serve(path.join('assets', (req.params as { '*': string })['*']));
      if (!file) return reply.status(404).send({ error: 'No such file', code: 'not_found', details: null });
      return reply.header('cache-control', 'public, max-age=31536000, immutable').header('content-security-policy', consoleCsp(req.headers.host)).type(file.type).send(file.data);
    });
  };
}
