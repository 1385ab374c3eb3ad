// hub memory: RSS of a `paprika hub` process with N linked simulated workers (one WebSocket
// each), per worker. Peer: a bare `ws` server process holding as many sockets (the floor).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { WebSocket } from 'ws';
import { encode } from '../hub-core/src/wire/protocol.ts';
import { realBackends } from '../test/harness/hub.ts';
import { enrollRaw, provenHello } from '../test/harness/raw-link.ts';
import { freePort, spawnHub, waitFor } from '../test/harness/processes.ts';
import type { Figure } from './report.ts';

export const rssKb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);

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

/**
 * A full collection in the process listening for the inspector on `inspectPort`
 * (HeapProfiler.collectGarbage over its WebSocket), so RSS is sampled without the garbage a
 * sample happened to carry: single runs read 11-26 KiB/worker on one build before.
 */
async function collectGarbage(inspectPort: number): Promise<void> {
  const targets = (await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json()) as Array<{ webSocketDebuggerUrl: string }>;
  const ws = new WebSocket(targets[0].webSocketDebuggerUrl);
  try {
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    await new Promise<void>((resolve, reject) => {
      ws.on('message', (m) => {
        if ((JSON.parse(String(m)) as { id?: number }).id === 1) resolve();
      });
      ws.once('error', reject);
      ws.send(JSON.stringify({ id: 1, method: 'HeapProfiler.collectGarbage' }));
    });
  } finally {
    ws.close();
  }
}

async function settle(pid: number, inspectPort: number): Promise<number> {
  await new Promise((r) => setTimeout(r, 500));
  await collectGarbage(inspectPort);
  await new Promise((r) => setTimeout(r, 500));
  return rssKb(pid);
}

interface Sample { before: number; after: number }

/** Enroll every id first (outside the measured window), then each link answers its challenge. */
async function enrollAll(hubUrl: string, ids: string[]): Promise<Map<string, string>> {
  const secrets = new Map<string, string>();
  for (let i = 0; i < ids.length; i += 50) await Promise.all(ids.slice(i, i + 50).map(async (id) => secrets.set(id, await enrollRaw(hubUrl, id))));
  return secrets;
}

function onChallenge(ws: WebSocket, send: (nonce: string) => void): void {
  ws.once('message', (m) => send((JSON.parse(String(m)) as { nonce: string }).nonce));
}

// RSS growth of a hub process while `workers` simulated workers link and beat once.
async function hubSample(workers: number): Promise<Sample> {
  const port = await freePort();
  const backends = await realBackends();
  const inspectPort = await freePort();
  const hub = await spawnHub(port, { ...backends.env, PAPRIKA_LOG_LEVEL: 'silent', PAPRIKA_HEARTBEAT_S: '3600', PAPRIKA_WORKER_TTL_S: '7200', PAPRIKA_REGISTER_BURST: '100000', PAPRIKA_REGISTER_PER_MIN: '100000', PAPRIKA_LINK_PENDING_MAX: '100000', PAPRIKA_LINK_PENDING_PER_IP: '100000' }, { nodeArgs: [`--inspect=127.0.0.1:${inspectPort}`] });
  const pid = hub.child.pid!;
  const caps = { max_concurrent: 2, lane_novnc_urls: ['sim://x/0', 'sim://x/1'], novnc_url: null, version: 'bench', platform: 'bench' };
  // Warm the hub up (JIT, first link, first fleet read) so the baseline is not start-up noise.
  const secrets = await enrollAll(hub.url, [...Array.from({ length: 10 }, (_, i) => `wwarm${i}`), ...Array.from({ length: workers }, (_, i) => `wm${i}`)]);
  const warm = await connectAll((i) => `ws://127.0.0.1:${port}/workers/wwarm${i}/link`, 10, (ws, i) => onChallenge(ws, (nonce) => ws.send(provenHello(`wwarm${i}`, secrets.get(`wwarm${i}`)!, nonce, { capabilities: caps, disk_pct: undefined }))));
  await fetch(`${hub.url}/admin/workers`);
  for (const s of warm) s.terminate();
  const before = await settle(pid, inspectPort);
  const sockets = await connectAll((i) => `ws://127.0.0.1:${port}/workers/wm${i}/link`, workers, (ws, i) =>
    onChallenge(ws, (nonce) => {
      ws.send(provenHello(`wm${i}`, secrets.get(`wm${i}`)!, nonce, { capabilities: caps, disk_pct: undefined }));
      ws.send(encode({ type: 'heartbeat', in_flight: 0, cpu_pct: 1, mem_pct: 1, disk_pct: 1, lanes: [] }));
    }),
  );
  let linked = 0;
  await waitFor('all linked', async () => (linked = ((await (await fetch(`${hub.url}/healthz`)).json()) as { workers: number }).workers) === workers, 60_000, 100).catch((err: unknown) => {
    throw new Error(`${String(err)} (${linked} of ${workers} linked)\n${hub.output().slice(-2000)}`);
  });
  const after = await settle(pid, inspectPort);
  for (const s of sockets) s.terminate();
  await hub.kill();
  await backends.drop();
  return { before, after };
}

// The floor: RSS growth of a process that only holds as many sockets.
async function floorSample(workers: number): Promise<Sample> {
  const floorPort = await freePort();
  const inspectPort = await freePort();
  const floor = spawn(process.execPath, [`--inspect=127.0.0.1:${inspectPort}`, '-e', `const {WebSocketServer}=require('ws');new WebSocketServer({port:${floorPort},host:'127.0.0.1'});setInterval(()=>{},1e6)`], { stdio: 'ignore', cwd: process.cwd() });
  await waitFor('floor server', async () => new Promise<boolean>((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${floorPort}`);
    ws.once('open', () => (ws.close(), resolve(true)));
    ws.once('error', () => resolve(false));
  }), 10_000, 50);
  await waitFor('floor inspector', async () => fetch(`http://127.0.0.1:${inspectPort}/json/list`).then((r) => r.ok, () => false), 10_000, 50);
  const before = await settle(floor.pid!, inspectPort);
  const sockets = await connectAll(() => `ws://127.0.0.1:${floorPort}`, workers, () => {});
  const after = await settle(floor.pid!, inspectPort);
  for (const s of sockets) s.terminate();
  floor.kill('SIGKILL');
  return { before, after };
}

// RSS is sampled after a forced full collection in each process (collectGarbage); like the
// other figures, the lower of two runs counts.
const lower = (a: Sample, b: Sample) => (a.after - a.before <= b.after - b.before ? a : b);

export async function hubMemoryFigures(o: { workers: number }): Promise<Figure[]> {
  const hub = lower(await hubSample(o.workers), await hubSample(o.workers));
  const floor = lower(await floorSample(o.workers), await floorSample(o.workers));
  const perWorker = (hub.after - hub.before) / o.workers; // KiB
  const floorPer = (floor.after - floor.before) / o.workers;
  return [{ name: `hub memory (${o.workers.toLocaleString('en-US')} workers)`, unit: 'KiB/worker', paprika: perWorker, peer: floorPer, peerName: 'bare ws server', higherIsBetter: false, extra: { hub_rss_before_kb: hub.before, hub_rss_after_kb: hub.after, floor_before_kb: floor.before, floor_after_kb: floor.after } }];
}
