// WebSocket upgrades routed through Fastify (http/upgrades.ts): once a socket is upgraded, the
// hub keeps neither the upgrade request nor the HTTP answer made for it, which it held for the
// socket's whole life before (about 1 KB a linked worker). Checked with WeakRefs and a forced
// collection while the sockets stay open and answer.
import v8 from 'node:v8';
import vm from 'node:vm';
import type { IncomingMessage } from 'node:http';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { completeUpgrade, pendingUpgrade, routeUpgradesThroughFastify } from '../../hub-core/src/http/upgrades.ts';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

let app: FastifyInstance | undefined;
const clients: WebSocket[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.terminate();
  await app?.close();
  app = undefined;
});

describe('upgraded sockets', () => {
  it('let go of the upgrade request and its HTTP answer, and keep working', async () => {
    app = Fastify();
    routeUpgradesThroughFastify(app);
    const wss = new WebSocketServer({ noServer: true });
    const requests: Array<WeakRef<IncomingMessage>> = [];
    app.get('/ws', (req, reply) => {
      requests.push(new WeakRef(req.raw));
      const up = pendingUpgrade(req.raw);
      if (!up) return reply.code(426).send({ error: 'upgrade required' });
      reply.hijack();
      completeUpgrade(wss, req.raw, up, (ws) => ws.on('message', (m) => ws.send(`echo ${String(m)}`)));
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as { port: number }).port;

    for (let i = 0; i < 20; i++) {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`);
      clients.push(ws);
      await new Promise((resolve, reject) => {
        ws.once('open', resolve);
        ws.once('error', reject);
      });
    }
    expect(requests).toHaveLength(20);
    for (let round = 0; round < 5 && requests.some((r) => r.deref()); round++) {
      await new Promise((r) => setImmediate(r));
      gc();
    }
    expect(requests.filter((r) => r.deref() !== undefined)).toHaveLength(0);

    const answers = await Promise.all(clients.map((ws, i) => new Promise((resolve) => {
      ws.once('message', (m) => resolve(String(m)));
      ws.send(`hi ${i}`);
    })));
    expect(answers).toEqual(clients.map((_, i) => `echo hi ${i}`));
  });

  it('a refused upgrade is still an ordinary HTTP answer on the socket', async () => {
    app = Fastify();
    routeUpgradesThroughFastify(app);
    app.get('/ws', (_req, reply) => reply.code(401).send({ error: 'no' }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as { port: number }).port;
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`);
    ws.on('error', () => {}); // the refusal ends the handshake
    clients.push(ws);
    const status = await new Promise<number>((resolve) => ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)));
    expect(status).toBe(401);
  });
});
