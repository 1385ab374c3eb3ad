// cdp: the round trip of one CDP command (Browser.getVersion, sequential) from a client through
// GET /cdp — one hub (hub → tunnel → the worker's fresh Chrome over its pipe), and two hubs (the
// client's hub proxies to the hub whose worker holds the lane) — against a direct WebSocket to a
// Chrome of the same binary started with --remote-debugging-port. Peer: that direct connection.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WebSocket } from 'ws';
import { CHROME_ARGS } from '../worker-agent/src/chrome/chrome-process.ts';
import { chromePool } from '../worker-agent/src/chrome/chrome-lane.ts';
import { startSimAgent } from '../test/harness/agents.ts';
import { realBackends, startTestHub } from '../test/harness/hub.ts';
import { waitFor } from '../test/harness/processes.ts';
import { summary, type Figure } from './report.ts';

const CHROMIUM = process.env.PAPRIKA_CHROME_PATH ?? '/usr/bin/chromium';

/** Sequential round trips on one connection, after a warm-up; milliseconds each. */
async function roundTrips(url: string, n: number, headers: Record<string, string> = {}): Promise<number[]> {
  const ws = new WebSocket(url, { headers, perMessageDeflate: false, maxPayload: 0 });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('unexpected-response', (_q, res) => reject(new Error(`connect to ${url.split('?')[0]}: ${res.statusCode}`)));
  });
  const pending = new Map<number, () => void>();
  ws.on('message', (m) => pending.get((JSON.parse(String(m)) as { id: number }).id)?.());
  let id = 0;
  const one = () =>
    new Promise<number>((resolve) => {
      const t0 = performance.now();
      const my = ++id;
      pending.set(my, () => {
        pending.delete(my);
        resolve(performance.now() - t0);
      });
      ws.send(JSON.stringify({ id: my, method: 'Browser.getVersion' }));
    });
  for (let i = 0; i < 20; i++) await one();
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await one());
  ws.close();
  return out;
}

async function directChrome(): Promise<{ url: string; stop: () => Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-bench-cdp-'));
  // Its own process group: stop() kills the browser with its renderers and helpers, which
  // otherwise outlive a killed browser for a moment and write into the profile as it is removed.
  const proc = spawn(CHROMIUM, [...CHROME_ARGS, '--headless', '--remote-debugging-port=0', `--user-data-dir=${dir}`, 'about:blank'], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  const url = await new Promise<string>((resolve, reject) => {
    let err = '';
    proc.stderr.on('data', (d) => {
      err += String(d);
      const m = /DevTools listening on (ws:\/\/\S+)/.exec(err);
      if (m) resolve(m[1]);
    });
    proc.once('exit', (code) => reject(new Error(`chromium exited ${code}: ${err.slice(0, 300)}`)));
  });
  return {
    url,
    stop: async () => {
      const group = -(proc.pid ?? 0);
      const groupAlive = () => {
        try {
          process.kill(group, 0);
          return true;
        } catch {
          return false;
        }
      };
      if (groupAlive()) process.kill(group, 'SIGKILL');
      await new Promise((r) => (proc.exitCode !== null || proc.signalCode !== null ? r(null) : proc.once('exit', r)));
      // Every process of the group gone (reaped by init once the browser, their parent, died).
      // Cleanup never fails the bench: where a helper lingers (an init that does not reap), the
      // profile is left behind and named.
      try {
        await waitFor('the direct Chromium and its helpers to exit', async () => !groupAlive(), 10_000);
        fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
      } catch (err) {
        console.warn(`bench cdp: left ${dir} behind: ${String(err)}`);
      }
    },
  };
}

export async function cdpFigures(o: { roundTrips: number }): Promise<Figure[]> {
  const direct = await directChrome();
  const backends = await realBackends();
  const env = { ...backends.env, PAPRIKA_LOG_LEVEL: 'silent', PAPRIKA_API_TOKEN: 'bench', PAPRIKA_PEER_TOKEN: 'bench-peer', PAPRIKA_WORKER_TOKEN: 'bench-w', PAPRIKA_ADMIN_TOKEN: 'bench-a', PAPRIKA_HEARTBEAT_S: '0.3', PAPRIKA_HUB_HEARTBEAT_S: '0.3', PAPRIKA_WORKER_TTL_S: '3' };
  const a = await startTestHub({ ...env, PAPRIKA_HUB_ID: 'bench-cdp-a' });
  const b = await startTestHub({ ...env, PAPRIKA_HUB_ID: 'bench-cdp-b' });
  const agent = await startSimAgent(a.url, 1, { token: 'bench-w', heartbeatS: 0.3, pool: chromePool({ lanes: 1, chromePath: CHROMIUM, singleChrome: false }) });
  const free = () => a.hub.localLinks.all().every((l) => l.in_flight === 0);
  try {
    const directMs = await roundTrips(direct.url, o.roundTrips);
    const oneHubMs = await roundTrips(`${a.url.replace('http', 'ws')}/cdp?token=bench`, o.roundTrips);
    await waitFor('lane free again', async () => free(), 15_000);
    await waitFor('the peer sees the free lane', async () => (await b.hub.forwarder.bestPeer())?.hubId === 'bench-cdp-a', 15_000);
    const twoHubsMs = await roundTrips(`${b.url.replace('http', 'ws')}/cdp?token=bench`, o.roundTrips);
    const d = summary(directMs);
    const one = summary(oneHubMs);
    const two = summary(twoHubsMs);
    const fig = (name: string, s: ReturnType<typeof summary>): Figure => ({
      name,
      unit: 'ms p50 round trip',
      paprika: s.p50,
      peer: d.p50,
      peerName: 'direct WebSocket to Chrome',
      higherIsBetter: false,
      extra: { added_p50_ms: s.p50 - d.p50, p99_ms: s.p99, direct_p99_ms: d.p99, round_trips: s.n },
    });
    const figures = [fig('cdp one hub', one), fig('cdp two hubs', two)];
    for (const f of figures) console.log(`${f.name}: adds ${(f.extra!.added_p50_ms as number).toFixed(2)} ms p50 (p99 ${(f.extra!.p99_ms as number).toFixed(2)} ms vs ${d.p99.toFixed(2)} ms direct)`);
    return figures;
  } finally {
    await agent.stop();
    await b.stop();
    await a.stop();
    await backends.drop();
    await direct.stop();
  }
}
