// ceilings: what bounds the dispatch path on this box, each at the dispatch run's client
// concurrency: a bare node:http server answering 201, the claim UPDATE alone, a Redis round
// trip, a WebSocket ping.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { WebSocket, WebSocketServer } from 'ws';
import { openJobStore } from '../hub-core/src/adapters/sql/sql-job-store.ts';
import { createTestDatabase, REDIS_TEST_URL } from '../test/harness/services.ts';
import { closedLoop } from './report.ts';

export interface Ceiling {
  name: string;
  opsPerS: number;
}

async function opsPerS(total: number, concurrency: number, one: (i: number) => Promise<void>): Promise<number> {
  await closedLoop(Math.min(200, total), concurrency, one);
  const ms = await closedLoop(total, concurrency, one);
  return (total / ms) * 1000;
}

export async function ceilings(o: { ops: number; concurrency: number }): Promise<Ceiling[]> {
  const out: Ceiling[] = [];

  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end('{"id":"x","status":"running"}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jobs`;
  const body = JSON.stringify({ kind: 'sleep', spec: { ms: 0 } });
  out.push({ name: 'bare node:http 201', opsPerS: await opsPerS(o.ops, o.concurrency, async () => void (await (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).text())) });
  server.closeAllConnections();
  server.close();

  const db = await createTestDatabase();
  const store = await openJobStore({ databaseUrl: db.url });
  const ids = Array.from({ length: o.ops + 200 }, () => randomUUID());
  for (let i = 0; i < ids.length; i += 500) {
    await store.db.query(`INSERT INTO jobs (id, kind, spec, status, created_at) SELECT unnest($1::uuid[]), 'sleep', '{"ms":0}', 'queued', now()`, [ids.slice(i, i + 500)]);
  }
  const now = new Date();
  out.push({ name: 'claim SQL alone', opsPerS: await opsPerS(o.ops, o.concurrency, async (i) => void (await store.claimQueuedJob(ids[i], { workerId: 'w', hubId: 'h', lane: 0, assignmentId: ids[i], novncUrl: null, now, deadlineAt: now }))) });
  await store.close();
  await db.drop();

  const redis = new Redis(REDIS_TEST_URL);
  out.push({ name: 'Redis round trip', opsPerS: await opsPerS(o.ops, o.concurrency, async () => void (await redis.ping())) });
  await redis.quit();

  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((r) => wss.once('listening', r));
  wss.on('connection', (ws) => ws.on('message', (m) => ws.send(m)));
  const sockets = await Promise.all(
    Array.from({ length: o.concurrency }, () => {
      const ws = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`);
      return new Promise<WebSocket>((resolve) => ws.once('open', () => resolve(ws)));
    }),
  );
  let k = 0;
  out.push({
    name: 'WebSocket ping',
    opsPerS: await opsPerS(o.ops, o.concurrency, () => {
      const ws = sockets[k++ % sockets.length];
      return new Promise<void>((resolve) => {
        ws.once('message', () => resolve());
        ws.send('{"type":"ping"}');
      });
    }),
  });
  for (const s of sockets) s.terminate();
  wss.close();
  return out;
}
