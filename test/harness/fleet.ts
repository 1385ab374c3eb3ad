// Several `paprika hub` processes behind real nginx, on one database and one Redis prefix,
// with simulated agents linked through nginx. Shared by the multi-hub tests and benchmarks.
import { capturedLog, startSimAgent, type SimAgent } from './agents.ts';
import { realBackends } from './hub.ts';
import { startNginx, type Nginx } from './nginx.ts';
import { spawnHub, stablePort, type HubProcess } from './processes.ts';

export interface Fleet {
  nginx: Nginx;
  hubs: Array<{ id: string; port: number; proc: HubProcess }>;
  agents: SimAgent[];
  /** Each agent's log lines (same order as agents), when started with captureAgentLogs. */
  agentLogs: Array<ReturnType<typeof capturedLog>['lines']>;
  env: Record<string, string>;
  restartHub(i: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startFleet(o: { hubs: number; agents: number; lanes: number; env?: Record<string, string>; heartbeatS?: number; workerToken?: string; captureAgentLogs?: boolean }): Promise<Fleet> {
  const backends = await realBackends();
  const env = { ...backends.env, PAPRIKA_HEARTBEAT_S: String(o.heartbeatS ?? 0.3), PAPRIKA_WORKER_TTL_S: '2', PAPRIKA_HUB_HEARTBEAT_S: '0.3', PAPRIKA_HUB_TTL_S: '1.5', ...o.env };
  const hubs: Fleet['hubs'] = [];
  for (let i = 0; i < o.hubs; i++) {
    const port = await stablePort();
    const id = `hub-${i + 1}`;
    hubs.push({ id, port, proc: await spawnHub(port, { ...env, PAPRIKA_HUB_ID: id }) });
  }
  const nginx = await startNginx(hubs.map((h) => `127.0.0.1:${h.port}`));
  const agents: SimAgent[] = [];
  const agentLogs: Fleet['agentLogs'] = [];
  for (let i = 0; i < o.agents; i++) {
    const captured = o.captureAgentLogs ? capturedLog() : undefined;
    if (captured) agentLogs.push(captured.lines);
    agents.push(await startSimAgent(nginx.url, o.lanes, { heartbeatS: o.heartbeatS ?? 0.3, token: o.workerToken, log: captured?.log }));
  }
  return {
    nginx,
    hubs,
    agents,
    agentLogs,
    env,
    async restartHub(i) {
      const h = hubs[i];
      await h.proc.kill('SIGKILL');
      h.proc = await spawnHub(h.port, { ...env, PAPRIKA_HUB_ID: h.id });
    },
    async stop() {
      await Promise.all(agents.map((a) => a.stop().catch(() => {})));
      await Promise.all(hubs.map((h) => h.proc.kill()));
      await nginx.stop();
      await backends.drop();
    },
  };
}
