// The fleet in Redis (SPEC.md § Redis keys). Scripts are .lua files loaded once at start-up
// and called by name (the BullMQ way).
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { workerIdCandidates } from '../../domain/worker-id.ts';
import { packageFile } from '../../package-files.ts';
import { DeadlineError, systemClock, withDeadline, type Clock } from '../../ports/clock.ts';
import type { HubInfo, HubRow, Registry, WorkerSnapshot } from '../../ports/registry.ts';
import { HUB_HISTORY_S, RegistryUnavailableError } from '../../ports/registry.ts';
import { FORGOTTEN_LOG_MS, RedisFleetReader, type FleetScripts } from './redis-fleet-reader.ts';
import { RedisDoneChannel } from './redis-done-channel.ts';

const LUA_DIR = packageFile(import.meta.url, 'hub-core/src/adapters/redis/lua', 'lua');
const SCRIPTS = {
  releaseOwnerIfMine: 1,
  claimWorkerId: -1, // variable number of keys
  releaseWorkerIdIfUnlinked: 2,
  forgetWorker: 9,
  markWorkersChanged: 3,
  readFleetChanges: 6,
} as const;

type ScriptedRedis = FleetScripts & {
  releaseOwnerIfMine(key: string, hubId: string): Promise<number>;
  claimWorkerId(numKeys: number, ...args: string[]): Promise<string | null>;
  releaseWorkerIdIfUnlinked(index: string, worker: string, workerId: string, lanIp: string): Promise<number>;
  forgetWorker(index: string, worker: string, online: string, owner: string, rows: string, seq: string, changes: string, forgotten: string, floor: string, workerId: string, onlyIfExpired: string, logMs: string): Promise<number>;
  markWorkersChanged(epoch: string, seq: string, changes: string, newEpoch: string, ...workerIds: string[]): Promise<number>;
};

export function redisKeys(prefix: string) {
  return {
    workersIndex: `${prefix}workers:index`,
    /** One compact JSON row per published worker, beside its hash: the fleet read is one HGETALL. */
    workersRows: `${prefix}workers:rows`,
    /** The change log of the rows (markWorkersChanged.lua): a counter, the last change of each id, and the log's identity (gone when Redis forgot everything). */
    workersSeq: `${prefix}workers:seq`,
    workersChanges: `${prefix}workers:changes`,
    workersEpoch: `${prefix}workers:epoch`,
    /** When each forgotten id was forgotten, and the highest change dropped from the log since (forgetWorker.lua). */
    workersForgotten: `${prefix}workers:forgotten`,
    workersFloor: `${prefix}workers:floor`,
    worker: (id: string) => `${prefix}worker:${id}`,
    online: (id: string) => `${prefix}worker:${id}:online`,
    owner: (id: string) => `${prefix}worker:${id}:owner`,
    session: (id: string) => `${prefix}sessions:${id}`,
    hub: (id: string) => `${prefix}hubs:${id}`,
    hubsIndex: `${prefix}hubs:index`,
    /** Pub/sub channel (no key): the id of every job a hub saw end, for other hubs' long polls. */
    jobsDone: `${prefix}jobs:done`,
  };
}

function snapshotToHash(w: WorkerSnapshot): Record<string, string> {
  return {
    worker_id: w.worker_id,
    hub_id: w.hub_id,
    lan_ip: w.lan_ip,
    hostname: w.hostname,
    status: w.status,
    in_flight: String(w.in_flight),
    max_concurrent: String(w.max_concurrent),
    lane_novnc_urls: JSON.stringify(w.lane_novnc_urls),
    novnc_url: w.novnc_url ?? '',
    disk_pct: String(w.disk_pct),
    cpu_pct: String(w.cpu_pct),
    mem_pct: String(w.mem_pct),
    last_seen: String(w.last_seen_ms),
    version: w.version,
    platform: w.platform,
    lanes: JSON.stringify(w.lanes),
    kinds: JSON.stringify(w.kinds ?? null),
    left_at: w.left_at_ms == null ? '' : String(w.left_at_ms),
  };
}

/** A command that failed or timed out reaches callers as RegistryUnavailableError (the HTTP layer's 503). */
async function unavailableOnError<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (err) {
    throw err instanceof RegistryUnavailableError ? err : new RegistryUnavailableError(err);
  }
}

export class RedisRegistry implements Registry {
  private readonly k;
  private readonly fleet: RedisFleetReader;
  private readonly done: RedisDoneChannel;
  constructor(
    private readonly redis: ScriptedRedis,
    prefix: string,
    private readonly workerTtlS: number,
    /** PAPRIKA_WORKER_FORGET_S: a worker's keys expire this long after its last publish. */
    private readonly forgetS = 86400,
    private readonly clock: Clock = systemClock,
    /** How long a forgotten worker's entry stays in the change log (tests shorten it). */
    private readonly forgottenLogMs = FORGOTTEN_LOG_MS,
  ) {
    this.k = redisKeys(prefix);
    this.fleet = new RedisFleetReader(redis, this.k, forgetS, clock, (id) => this.forget(id, true));
    this.done = new RedisDoneChannel(redis, this.k.jobsDone);
  }

  /**
   * Connects within `timeoutMs`: a Redis that accepts TCP but never answers would otherwise
   * hold the ready check (and the hub's start) forever. On failure the client is shut so its
   * reconnect timer does not keep the process alive.
   */
  static async connect(url: string, prefix: string, workerTtlS: number, opts: { timeoutMs?: number; signal?: AbortSignal; forgetS?: number; commandTimeoutMs?: number; clock?: Clock; forgottenLogMs?: number } = {}): Promise<RedisRegistry> {
    const clock = opts.clock ?? systemClock;
    const redis = new Redis(url, {
      lazyConnect: true,
      maxRetriesPerRequest: 2,
      enableOfflineQueue: true,
      connectTimeout: 5000,
      retryStrategy: (times) => Math.min(times * 200, 2000),
      // No per-command timeout while connecting: the start-up has its own bound (timeoutMs,
      // "no answer within 10 s"); the command timeout is set once the connection is ready.
    }) as ScriptedRedis;
    // Reconnects by itself; commands fail and callers log them. The last error names the cause
    // a failed first connect reports (ioredis itself only says "Connection is closed.").
    let lastError: Error | undefined;
    redis.on('error', (err: Error) => (lastError = err));
    for (const [name, numberOfKeys] of Object.entries(SCRIPTS)) {
      const lua = fs.readFileSync(path.join(LUA_DIR, `${name}.lua`), 'utf8');
      redis.defineCommand(name, numberOfKeys < 0 ? { lua } : { lua, numberOfKeys });
    }
    const timeoutMs = opts.timeoutMs ?? 10_000;
    const signal = opts.signal;
    const aborted = new Error('start-up aborted');
    let onAbort: (() => void) | undefined;
    const connected = new Promise<void>((resolve, reject) => {
      onAbort = () => reject(aborted);
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      redis.connect().then(resolve, reject);
    });
    try {
      await withDeadline(clock, timeoutMs, 'Redis connect', connected);
    } catch (err) {
      redis.disconnect();
      // The operator reads "cannot reach Redis at host:port: no answer within 10 s".
      if (err instanceof DeadlineError) throw new Error(`no answer within ${err.ms / 1000} s`);
      throw err === aborted ? err : (lastError ?? err);
    } finally {
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    }
    // A Redis that accepts TCP but does not answer (paused, SIGSTOPped) held every request
    // that touched it for the whole pause: from now on each command fails after this.
    redis.options.commandTimeout = opts.commandTimeoutMs;
    return new RedisRegistry(redis, prefix, workerTtlS, opts.forgetS, clock, opts.forgottenLogMs);
  }

  async claimWorkerId(lanIp: string, hostname: string, ids = workerIdCandidates(lanIp)): Promise<string> {
    const keys = [this.k.workersIndex, ...ids.map((id) => this.k.worker(id))];
    const got = await unavailableOnError(() => this.redis.claimWorkerId(keys.length, ...keys, lanIp, hostname, ...ids));
    // Redis answered: no free id is a conflict for the caller to name (409), not an outage (503).
    if (!got) throw new Error(`no worker id left for ${lanIp}`);
    return got;
  }

  releaseWorkerIdIfUnlinked(workerId: string, lanIp: string): Promise<boolean> {
    return unavailableOnError(async () => {
      return (await this.redis.releaseWorkerIdIfUnlinked(this.k.workersIndex, this.k.worker(workerId), workerId, lanIp)) === 1;
    });
  }

  publishWorkers(ws: WorkerSnapshot[], heard: ReadonlySet<string> = new Set()): Promise<void> {
    return unavailableOnError(async () => {
      if (ws.length === 0) return;
      const p = this.redis.pipeline() as ReturnType<Redis['pipeline']> & { markWorkersChanged(...args: string[]): unknown };
      const ttlMs = Math.max(1, Math.round(this.workerTtlS * 1000));
      const forgetMs = Math.max(1, Math.round(this.forgetS * 1000));
      for (const w of ws) {
        p.hset(this.k.worker(w.worker_id), snapshotToHash(w));
        p.hset(this.k.workersRows, w.worker_id, JSON.stringify(w));
        // Every publish is a sign of life: an offline worker's keys go FORGET_S after its last one.
        p.pexpire(this.k.worker(w.worker_id), forgetMs);
        p.pexpire(this.k.owner(w.worker_id), forgetMs);
        if (w.left_at_ms == null) {
          p.set(this.k.online(w.worker_id), w.hub_id, 'PX', ttlMs);
          // The owner key with every flush too: a Redis that restarted empty, or was restored
          // from an older snapshot, is whole again within one heartbeat, so cancels and status
          // changes sent through other hubs reach the worker. Written over whatever it held only
          // on a heartbeat just heard on this link (the worker is linked here now); otherwise only
          // where missing (NX), so a flush of a stale link (the worker's new link is on another
          // hub) does not take ownership back. A heartbeat that waited in a stale link's queue
          // may still; that link's close then releases the key (releaseOwnerIfMine) and the live
          // link's next heartbeat writes it again.
          if (heard.has(w.worker_id)) p.set(this.k.owner(w.worker_id), w.hub_id, 'PX', forgetMs);
          else p.set(this.k.owner(w.worker_id), w.hub_id, 'PX', forgetMs, 'NX');
        } else p.del(this.k.online(w.worker_id));
        p.sadd(this.k.workersIndex, w.worker_id);
      }
      // After the rows: a hub that sees the mark reads the row it marks.
      p.markWorkersChanged(this.k.workersEpoch, this.k.workersSeq, this.k.workersChanges, randomUUID(), ...ws.map((w) => w.worker_id));
      const results = await p.exec();
      const failed = results?.find(([err]) => err);
      if (failed) throw failed[0];
    });
  }

  setOwner(workerId: string, hubId: string): Promise<void> {
    return unavailableOnError(async () => {
      // Bounded like the worker's hash: a hub that dies holding it leaves nothing forever.
      await this.redis.set(this.k.owner(workerId), hubId, 'PX', Math.max(1, Math.round(this.forgetS * 1000)));
    });
  }

  forgetWorker(workerId: string): Promise<boolean> {
    return unavailableOnError(async () => {
      return (await this.forget(workerId, false)) === 1;
    });
  }

  private async forget(workerId: string, onlyIfExpired: boolean): Promise<number> {
    return this.redis.forgetWorker(this.k.workersIndex, this.k.worker(workerId), this.k.online(workerId), this.k.owner(workerId), this.k.workersRows, this.k.workersSeq, this.k.workersChanges, this.k.workersForgotten, this.k.workersFloor, workerId, onlyIfExpired ? '1' : '0', String(this.forgottenLogMs));
  }

  getOwner(workerId: string): Promise<string | undefined> {
    return unavailableOnError(async () => {
      return (await this.redis.get(this.k.owner(workerId))) ?? undefined;
    });
  }

  releaseOwnerIfMine(workerId: string, hubId: string): Promise<boolean> {
    return unavailableOnError(async () => {
      return (await this.redis.releaseOwnerIfMine(this.k.owner(workerId), hubId)) === 1;
    });
  }

  /** The rows changed since this hub's last read, applied to the ones it holds (redis-fleet-reader.ts). */
  readFleet(timeoutMs: number): Promise<WorkerSnapshot[]> {
    return withDeadline(this.clock, timeoutMs, 'fleet read', this.fleet.read());
  }

  setSessionOwner(sessionId: string, hubId: string, ttlS: number): Promise<void> {
    return unavailableOnError(async () => {
      await this.redis.set(this.k.session(sessionId), hubId, 'PX', Math.max(1, Math.round(ttlS * 1000)));
    });
  }

  getSessionOwner(sessionId: string): Promise<string | undefined> {
    return unavailableOnError(async () => {
      return (await this.redis.get(this.k.session(sessionId))) ?? undefined;
    });
  }

  deleteSession(sessionId: string): Promise<void> {
    return unavailableOnError(async () => {
      await this.redis.del(this.k.session(sessionId));
    });
  }

  heartbeatHub(info: HubInfo, ttlS: number, now: number): Promise<void> {
    return unavailableOnError(async () => {
      await this.redis
        .multi()
        .set(this.k.hub(info.hub_id), JSON.stringify({ ...info, last_seen: now }), 'PX', Math.max(1, Math.round(ttlS * 1000)))
        .zadd(this.k.hubsIndex, now, info.hub_id)
        .exec();
    });
  }

  listHubs(now: number, recentS: number): Promise<HubRow[]> {
    return unavailableOnError(async () => {
      const since = now - recentS * 1000;
      await this.redis.zremrangebyscore(this.k.hubsIndex, '-inf', `(${now - HUB_HISTORY_S * 1000}`);
      const flat = await this.redis.zrangebyscore(this.k.hubsIndex, since, '+inf', 'WITHSCORES');
      const ids: string[] = [];
      const seen: number[] = [];
      for (let i = 0; i < flat.length; i += 2) {
        ids.push(flat[i]);
        seen.push(Number(flat[i + 1]));
      }
      if (ids.length === 0) return [];
      const rows = await this.redis.mget(...ids.map((id) => this.k.hub(id)));
      return ids.map((id, i) => {
        const live = rows[i] ? (JSON.parse(rows[i]!) as HubInfo & { last_seen: number }) : undefined;
        return live
          ? { ...live, hub_id: id, alive: true, last_seen: live.last_seen }
          : { hub_id: id, url: '', started_at: 0, workers: 0, free_lanes: 0, alive: false, last_seen: seen[i] };
      });
    });
  }

  removeHub(hubId: string): Promise<void> {
    return unavailableOnError(async () => {
      await this.redis.del(this.k.hub(hubId));
    });
  }

  ping(): Promise<void> {
    return unavailableOnError(async () => {
      await this.redis.ping();
    });
  }

  announceJobDone(jobId: string): Promise<void> {
    return this.done.announce(jobId);
  }

  onJobDone(listener: (jobId: string) => void): () => void {
    return this.done.listen(listener);
  }

  async close(): Promise<void> {
    this.done.close();
    this.redis.disconnect();
  }

  /** For tests and benchmarks: the raw client. */
  get client(): Redis {
    return this.redis;
  }
}
