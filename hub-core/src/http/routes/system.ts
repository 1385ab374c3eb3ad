// /healthz, /metrics and the console (renderer/dist) at /.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Hub } from '../../hub/hub.ts';
import { packageFile } from '../../package-files.ts';
import { openGroups } from '../auth.ts';
import { consoleCsp } from '../browser-guards.ts';
import { contentTypeFor } from '../content-types.ts';

export const DEFAULT_CONSOLE_DIR = packageFile(import.meta.url, 'renderer/dist', '../../../../renderer/dist');
const NOT_BUILT = `<!doctype html><meta charset="utf-8"><title>Paprika hub</title>
<body style="font-family:sans-serif;margin:3em"><h1>Paprika hub</h1>
<p>The console is not built yet. Run <code>npm run build</code>, then reload.</p>
<p>The API answers: <a href="/admin/workers">/admin/workers</a>, <a href="/healthz">/healthz</a>.</p></body>`;

async function timed<T>(p: Promise<T>, ms: number): Promise<boolean> {
  let t: NodeJS.Timeout | undefined;
  try {
    await Promise.race([p, new Promise((_, reject) => (t = setTimeout(() => reject(new Error('timeout')), ms)))]);
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(t);
  }
}

export function systemRoutes(hub: Hub, consoleDir = DEFAULT_CONSOLE_DIR) {
  return async (app: FastifyInstance) => {
    // PAPRIKA_INSECURE says so where monitoring looks, with the groups anyone may use.
    const open = openGroups(hub.config);
    const insecure = hub.config.insecure && open.length > 0 ? { insecure: true, open_groups: open } : {};
    app.get('/healthz', async (_req, reply) => {
      const [db, registry] = await Promise.all([timed(hub.store.ping(), 2000), timed(hub.registry.ping(), 2000)]);
      const ok = db && registry && !hub.jobs.stopping;
      return reply.status(ok ? 200 : 503).send({ status: ok ? 'ok' : hub.jobs.stopping ? 'stopping' : 'degraded', hub_id: hub.config.hubId, checks: { database: db, registry }, workers: hub.fleet.size, ...insecure });
    });

    app.get('/metrics', async (_req, reply) => {
      return reply.type(hub.metrics.contentType).send(await hub.metrics.text());
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
