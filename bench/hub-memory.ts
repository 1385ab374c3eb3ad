// hub memory: RSS of a `paprika hub` process with N linked simulated workers (one WebSocket
// each), per worker. Peer: a bare `ws` server process holding as many sockets (the floor).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { WebSocket } from 'ws';
import { encode } from '../hub-core/src/protocol.ts';
import { realBackends } from '../test/harness/hub.ts';
import { freePort, spawnHub, waitFor } from '../test/harness/processes.ts';
import type { Figure } from './report.ts';

const rssKb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);

async function connectAll(url: (i: number) => string, n: number, onOpen: (ws: WebSocket, i: number) => void): Promise<WebSocket[]> {
  const sockets: WebSocket[] = [];
  for (let i = 0; i < n; i += 100) {
    const batch = Array.from({ length: Math.min(100, n - i) }, (_, k) => {
      const ws = new WebSocket(url(i + k));
      sockets.push(ws);
      return new Promise<void>((resolve, reject) => {
        ws.once('open', () => {
          onOpen(ws, i + k);
          resolve();
        });
        ws.once('error', reject);
      });
    });
    await Promise.all(batch);
  }
  return sockets;
}

async function settle(pid: number): Promise<number> {
  await new Promise((r) => setTimeout(r, 1500));
  return rssKb(pid);
}

interface Sample { before: number; after: number }

// RSS growth of a hub process while `workers` simulated workers link and beat once.
async function hubSample(workers: number): Promise<Sample> {
  const port = await freePort();
  const backends = await realBackends();
  const hub = await spawnHub(port, { ...backends.env, PAPRIKA_LOG_LEVEL: 'silent', PAPRIKA_HEARTBEAT_S: '3600', PAPRIKA_WORKER_TTL_S: '7200' });
  const pid = hub.child.pid!;
  const caps = { max_concurrent: 2, lane_novnc_urls: ['sim://x/0', 'sim://x/1'], novnc_url: null, version: 'bench', platform: 'bench' };
  // Warm the hub up (JIT, first link, first fleet read) so the baseline is not start-up noise.
  const warm = await connectAll((i) => `ws://127.0.0.1:${port}/workers/wwarm${i}/link`, 10, (ws, i) => ws.send(encode({ type: 'hello', worker_id: `wwarm${i}`, capabilities: caps })));
  await fetch(`${hub.url}/admin/workers`);
  for (const s of warm) s.terminate();
  const before = await settle(pid);
  const sockets = await connectAll((i) => `ws://127.0.0.1:${port}/workers/wm${i}/link`, workers, (ws, i) => {
    ws.send(encode({ type: 'hello', worker_id: `wm${i}`, capabilities: caps }));
    ws.send(encode({ type: 'heartbeat', in_flight: 0, cpu_pct: 1, mem_pct: 1, disk_pct: 1, lanes: [] }));
  });
  let linked = 0;
  await waitFor('all linked', async () => (linked = ((await (await fetch(`${hub.url}/healthz`)).json()) as { workers: number }).workers) === workers, 60_000, 100).catch((err: unknown) => {
    throw new Error(`${String(err)} (${linked} of ${workers} linked)\n${hub.output().slice(-2000)}`);
  });
  const after = await settle(pid);
  for (const s of sockets) s.terminate();
  await hub.kill();
  await backends.drop();
  return { before, after };
}

// The floor: RSS growth of a process that only holds as many sockets.
async function floorSample(workers: number): Promise<Sample> {
  const floorPort = await freePort();
  const floor = spawn(process.execPath, ['-e', `const {WebSocketServer}=require('ws');new WebSocketServer({port:${floorPort},host:'127.0.0.1'});setInterval(()=>{},1e6)`], { stdio: 'ignore', cwd: process.cwd() });
  await waitFor('floor server', async () => new Promise<boolean>((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${floorPort}`);
    ws.once('open', () => (ws.close(), resolve(true)));
    ws.once('error', () => resolve(false));
  }), 10_000, 50);
  const before = await settle(floor.pid!);
  const sockets = await connectAll(() => `ws://127.0.0.1:${floorPort}`, workers, () => {});
  const after = await settle(floor.pid!);
  for (const s of sockets) s.terminate();
  floor.kill('SIGKILL');
  return { before, after };
}

// RSS is sampled without forcing a collection, so one sample can carry garbage not yet
// collected (seen: 11 and 23 KiB/worker on the same build); like the other figures, the
// lower of two runs counts.
const lower = (a: Sample, b: Sample) => (a.after - a.before <= b.after - b.before ? a : b);

export async function hubMemoryFigures(o: { workers: number }): Promise<Figure[]> {
  const hub = lower(await hubSample(o.workers), await hubSample(o.workers));
  const floor = lower(await floorSample(o.workers), await floorSample(o.workers));
  const perWorker = (hub.after - hub.before) / o.workers; // KiB
  const floorPer = (floor.after - floor.before) / o.workers;
  return [{ name: `hub memory (${o.workers.toLocaleString('en-US')} workers)`, unit: 'KiB/worker', paprika: perWorker, peer: floorPer, peerName: 'bare ws server', higherIsBetter: false, extra: { hub_rss_before_kb: hub.before, hub_rss_after_kb: hub.after, floor_before_kb: floor.before, floor_after_kb: floor.after } }];
}
