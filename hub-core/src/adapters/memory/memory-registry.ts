// Single-hub mode (REDIS_URL unset): the same Registry behaviour, in process.
import { workerIdFor } from '../../domain/worker-id.ts';
import type { Clock } from '../../ports/clock.ts';
import type { HubInfo, HubRow, Registry, WorkerSnapshot } from '../../ports/registry.ts';
import { HUB_HISTORY_S } from '../../ports/registry.ts';

interface Expiring<T> {
  value: T;
  expiresAt: number;
}

export class MemoryRegistry implements Registry {
  private readonly ipOf = new Map<string, { lanIp: string; hostname: string }>();
  private readonly workers = new Map<string, Expiring<WorkerSnapshot>>();
  private readonly owners = new Map<string, Expiring<string>>();
  private readonly sessions = new Map<string, Expiring<string>>();
  private readonly hubs = new Map<string, Expiring<HubInfo & { last_seen: number }>>();
  private readonly hubsIndex = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    /** PAPRIKA_WORKER_FORGET_S: a worker is forgotten this long after its last publish. */
    private readonly forgetS = 86400,
  ) {}

  async claimWorkerId(lanIp: string, hostname: string, candidates?: string[]): Promise<string> {
    const id = workerIdFor(lanIp, (candidate) => this.ipOf.get(candidate)?.lanIp, candidates);
    this.ipOf.set(id, { lanIp, hostname });
    return id;
  }

  async releaseWorkerIdIfUnlinked(workerId: string, lanIp: string): Promise<boolean> {
    if (this.ipOf.get(workerId)?.lanIp !== lanIp || this.live(this.workers, workerId)) return false;
    this.ipOf.delete(workerId);
    return true;
  }

  async forgetWorker(workerId: string): Promise<boolean> {
    this.owners.delete(workerId);
    return this.workers.delete(workerId);
  }

  async publishWorkers(ws: WorkerSnapshot[]): Promise<void> {
    const expiresAt = this.clock.now() + this.forgetS * 1000;
    for (const w of ws) {
      // A copy, frozen: readFleet hands out this object until the next publish (the fleet view
      // keeps a row, and its JSON, per unchanged snapshot), so nobody may change it.
      this.workers.set(w.worker_id, { value: Object.freeze(structuredClone(w)), expiresAt });
      const owner = this.owners.get(w.worker_id);
      if (owner) owner.expiresAt = expiresAt;
    }
  }

  async setOwner(workerId: string, hubId: string): Promise<void> {
    this.owners.set(workerId, { value: hubId, expiresAt: this.clock.now() + this.forgetS * 1000 });
  }

  async getOwner(workerId: string): Promise<string | undefined> {
    return this.live(this.owners, workerId);
  }

  async releaseOwnerIfMine(workerId: string, hubId: string): Promise<boolean> {
    if (this.live(this.owners, workerId) !== hubId) return false;
    this.owners.delete(workerId);
    return true;
  }

  async readFleet(): Promise<WorkerSnapshot[]> {
    const out: WorkerSnapshot[] = [];
    for (const id of [...this.workers.keys()]) {
      const w = this.live(this.workers, id);
      if (w) out.push(w);
    }
    return out;
  }

  async setSessionOwner(sessionId: string, hubId: string, ttlS: number): Promise<void> {
    this.sessions.set(sessionId, { value: hubId, expiresAt: this.clock.now() + ttlS * 1000 });
  }

  async getSessionOwner(sessionId: string): Promise<string | undefined> {
    return this.live(this.sessions, sessionId);
  }

  async deleteSession(sessionId: string): Promise<void> {
    this.sessions.delete(sessionId);
  }

  async heartbeatHub(info: HubInfo, ttlS: number, now: number): Promise<void> {
    this.hubs.set(info.hub_id, { value: { ...info, last_seen: now }, expiresAt: now + ttlS * 1000 });
    this.hubsIndex.set(info.hub_id, now);
  }

  async listHubs(now: number, recentS: number): Promise<HubRow[]> {
    const out: HubRow[] = [];
    for (const [id, seen] of this.hubsIndex) {
      if (seen < now - HUB_HISTORY_S * 1000) this.hubsIndex.delete(id);
      if (seen < now - recentS * 1000) continue;
      const live = this.live(this.hubs, id);
      out.push(live ? { ...live, alive: true } : { hub_id: id, url: '', started_at: 0, workers: 0, free_lanes: 0, alive: false, last_seen: seen });
    }
    return out.sort((a, b) => a.hub_id.localeCompare(b.hub_id));
  }

  async removeHub(hubId: string): Promise<void> {
    this.hubs.delete(hubId);
  }

  async ping(): Promise<void> {}

  private readonly doneListeners = new Set<(jobId: string) => void>();

  async announceJobDone(jobId: string): Promise<void> {
    for (const l of this.doneListeners) l(jobId);
  }

  onJobDone(listener: (jobId: string) => void): () => void {
    this.doneListeners.add(listener);
    return () => this.doneListeners.delete(listener);
  }

  async close(): Promise<void> {}

  private live<T>(map: Map<string, Expiring<T>>, key: string): T | undefined {
    const e = map.get(key);
    if (!e) return undefined;
    if (e.expiresAt <= this.clock.now()) {
      map.delete(key);
      return undefined;
    }
    return e.value;
  }
}
