// The chaos run's fleet, every part a real process that can be killed: a Postgres and a Redis
// of its own (so restarting or pausing them touches no other test), `paprika hub` processes
// behind real nginx, and `paprika worker --simulate-lanes` processes linked through nginx.
import { Redis } from 'ioredis';
import { spawnWorker, type WorkerProcess } from '../agents.ts';
import { startNginx, type Nginx } from '../nginx.ts';
import { startPrivatePostgres, type PrivatePostgres } from '../private-postgres.ts';
import { spawnHub, stablePort, waitFor, type HubProcess } from '../processes.ts';
import { startPrivateRedis } from '../services.ts';
import type { AgentIncarnation } from './evidence.ts';

/** Scaled-down seed values: every loop and grace runs in seconds, not minutes. */
export const CHAOS_ENV = {
  PAPRIKA_HEARTBEAT_S: '0.5',
  PAPRIKA_WORKER_TTL_S: '4',
  PAPRIKA_HUB_HEARTBEAT_S: '0.5',
  PAPRIKA_HUB_TTL_S: '2',
  PAPRIKA_ASSIGN_WAIT_S: '1',
  PAPRIKA_FORWARD_TIMEOUT_S: '5',
  PAPRIKA_QUEUE_REDRIVE_INTERVAL_S: '0.3',
  PAPRIKA_REDRIVE_MIN_AGE_S: '2',
  PAPRIKA_RECONCILE_INTERVAL_S: '1',
  // Longer than a live worker can be away: a hub restart (all of them, in lone_hub_sigkill) plus
  // the agent's re-link backoff (up to 10 s), on a loaded machine (15 s was once 1 s short). Shorter, the reconciler fails jobs whose workers
  // are on their way back with the result, which is what the grace exists to prevent.
  PAPRIKA_ORPHAN_GRACE_S: '30',
  PAPRIKA_QUEUED_TIMEOUT_S: '20',
  PAPRIKA_JOB_TIMEOUT_S: '10',
  PAPRIKA_FLEET_TIMEOUT_MS: '300',
  PAPRIKA_FLEET_CACHE_S: '10',
  // Every agent enrolls at start through nginx, so all from one source address.
  PAPRIKA_REGISTER_BURST: '200',
} as const;

export interface ChaosHub {
  id: string;
  port: number;
  url: string;
  proc: HubProcess | undefined;
}

export interface ChaosAgent {
  lanIp: string;
  workerId: string;
  proc: WorkerProcess | undefined;
  startedAt: number;
  /** Finished incarnations' logs; the running one is read from `proc`. */
  past: AgentIncarnation[];
}

export class ChaosCluster {
  private constructor(
    readonly pg: PrivatePostgres,
    readonly redis: Awaited<ReturnType<typeof startPrivateRedis>>,
    readonly redisAdmin: Redis,
    readonly hubs: ChaosHub[],
    readonly nginx: Nginx,
    readonly agents: ChaosAgent[],
    readonly env: Record<string, string>,
    private readonly lanes: number,
  ) {}

  static async start(o: { hubs: number; agents: number; lanes: number; say: (line: string) => void }): Promise<ChaosCluster> {
    const pg = await startPrivatePostgres();
    const redis = await startPrivateRedis();
    const env: Record<string, string> = { ...CHAOS_ENV, DATABASE_URL: pg.url, REDIS_URL: redis.url, PAPRIKA_REDIS_PREFIX: 'chaos:', PAPRIKA_LOG_LEVEL: 'warn' };
    o.say(`postgres on ${pg.port}, redis at ${redis.url}`);
    const hubs: ChaosHub[] = [];
    for (let i = 0; i < o.hubs; i++) {
      const port = await stablePort();
      hubs.push({ id: `chaos-hub-${i + 1}`, port, url: `http://127.0.0.1:${port}`, proc: undefined });
    }
    const nginx = await startNginx(hubs.map((h) => `127.0.0.1:${h.port}`), { port: await stablePort() });
    const cluster = new ChaosCluster(pg, redis, new Redis(redis.url), hubs, nginx, [], env, o.lanes);
    // The first hub runs the migrations alone; the others start together.
    await cluster.startHub(0);
    await Promise.all(hubs.slice(1).map((_, i) => cluster.startHub(i + 1)));
    o.say(`${o.hubs} hubs behind nginx at ${nginx.url}`);
    for (let i = 0; i < o.agents; i++) {
      const lanIp = `127.0.210.${i + 1}`;
      cluster.agents.push({ lanIp, workerId: `w210${i + 1}`, proc: undefined, startedAt: 0, past: [] });
    }
    // Four at a time: each is a Node process compiling TypeScript on two cores.
    for (let i = 0; i < cluster.agents.length; i += 4) await Promise.all(cluster.agents.slice(i, i + 4).map((_, k) => cluster.startAgent(i + k)));
    await cluster.waitForFleet(o.agents, 60_000);
    o.say(`${o.agents} agents × ${o.lanes} simulated lanes linked`);
    return cluster;
  }

  async startHub(i: number): Promise<void> {
    const h = this.hubs[i];
    // A hub can fail to start while Postgres or Redis is down: try again, as a supervisor would.
    await waitFor(`hub ${h.id} up`, async () => {
      h.proc = await spawnHub(h.port, { ...this.env, PAPRIKA_HUB_ID: h.id });
      return true;
    }, 60_000, 200);
  }

  /**
   * SIGKILL, or SIGTERM and wait for the graceful stop (SIGKILL after 20 s: `hung`); returns
   * the exit code and the tail of its output.
   */
  async stopHub(i: number, signal: 'SIGKILL' | 'SIGTERM'): Promise<{ code: number | null | 'hung'; tail: string }> {
    const h = this.hubs[i];
    const proc = h.proc;
    h.proc = undefined;
    if (!proc) return { code: null, tail: '' };
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<'hung'>((r) => (timer = setTimeout(() => r('hung'), 20_000)));
    const code = await Promise.race([proc.kill(signal).then(() => proc.exited), hung]);
    clearTimeout(timer);
    if (code === 'hung') await proc.kill('SIGKILL');
    const signalled = proc.child.signalCode ? ` (ended by ${proc.child.signalCode})` : '';
    return { code, tail: `${signalled} ${proc.output().slice(-600)}` };
  }

  async startAgent(j: number): Promise<void> {
    const a = this.agents[j];
    a.startedAt = Date.now();
    a.proc = spawnWorker(['--hub', this.nginx.url, '--simulate-lanes', String(this.lanes), '--simulate-site', '--lan-ip', a.lanIp], { ...this.env, PAPRIKA_LOG_LEVEL: 'info' });
    const proc = a.proc;
    await waitFor(`agent ${a.workerId} linked`, async () => {
      if (proc.child.exitCode !== null) throw new Error(`agent ${a.workerId} exited:\n${proc.output().slice(-2000)}`);
      return proc.output().includes('"msg":"linked"');
    }, 60_000, 50).catch((err: unknown) => {
      throw new Error(`${String(err)}\nits output:\n${proc.output().slice(-3000)}`);
    });
  }

  /** Returns the exit code (null after SIGKILL). */
  async stopAgent(j: number, signal: 'SIGKILL' | 'SIGTERM'): Promise<number | null> {
    const a = this.agents[j];
    const proc = a.proc;
    a.proc = undefined;
    if (!proc) return null;
    await proc.kill(signal);
    a.past.push({ workerId: a.workerId, log: proc.output(), endedAt: Date.now() });
    return proc.exited;
  }

  incarnations(): AgentIncarnation[] {
    return this.agents.flatMap((a) => [...a.past, ...(a.proc ? [{ workerId: a.workerId, log: a.proc.output() }] : [])]);
  }

  async waitForFleet(n: number, timeoutMs: number): Promise<void> {
    await waitFor(`${n} workers alive on every hub`, async () => {
      const views = await Promise.all(this.hubs.map((h) => (h.proc ? fetch(`${h.url}/admin/workers`).then((r) => r.json() as Promise<{ workers: Array<{ alive: boolean }>; stale: boolean }>) : undefined)));
      return views.every((v) => v && !v.stale && v.workers.filter((w) => w.alive).length >= n);
    }, timeoutMs, 200);
  }

  async stop(): Promise<void> {
    await Promise.all(this.agents.map((_, j) => this.stopAgent(j, 'SIGKILL')));
    await Promise.all(this.hubs.map((_, i) => this.stopHub(i, 'SIGKILL')));
    await this.nginx?.stop();
    this.redisAdmin.disconnect();
    await this.redis.stop();
    await this.pg.stop();
  }
}
