// The fleet shared between hubs (SPEC.md § Redis keys). The Redis adapter is the real one;
// the in-process one serves single-hub mode with the same behaviour.
import type { LaneState } from '../wire/protocol.ts';

/** One worker as every hub sees it: capabilities from hello, values from the last heartbeat. */
export interface WorkerSnapshot {
  worker_id: string;
  hub_id: string;
  lan_ip: string;
  hostname: string;
  status: string;
  in_flight: number;
  max_concurrent: number;
  lane_novnc_urls: string[];
  novnc_url: string | null;
  disk_pct: number;
  cpu_pct: number;
  mem_pct: number;
  /** Epoch ms of the last heartbeat. */
  last_seen_ms: number;
  version: string;
  platform: string;
  lanes: LaneState[];
  /** The work its lanes run, from hello; null: not declared (any). */
  kinds?: string[] | null;
  /** Epoch ms of its goodbye (a graceful stop): offline from then on, whatever its last heartbeat. */
  left_at_ms?: number | null;
}

export interface HubInfo {
  hub_id: string;
  url: string;
  started_at: number;
  workers: number;
  free_lanes: number;
}

export interface HubRow extends HubInfo {
  alive: boolean;
  last_seen: number;
}

/** How long a stopped hub stays in the registry (and the console) as recently dead. */
export const HUB_HISTORY_S = 3600;

export interface Registry {
  /**
   * The IP-derived id, taken atomically: the same IP always gets its id back. `candidates`
   * (default: the ids derived from the IP) lets an explicit id be claimed by the same rule.
   */
  claimWorkerId(lanIp: string, hostname: string, candidates?: string[]): Promise<string>;
  /** Undo a claim that never linked (its enrollment expired): only if it is still this IP's. */
  releaseWorkerIdIfUnlinked(workerId: string, lanIp: string): Promise<boolean>;
  /** Write workers' hashes and refresh their `:online` TTLs, in one round trip (coalesced heartbeats). */
  /**
   * `heard`: workers whose row comes from a heartbeat this hub just received on their link. The
   * hub is their owner now, so their owner key is written whatever it held (a Redis restored
   * from an older snapshot names the hub they were on then); the others' only where missing.
   */
  publishWorkers(ws: WorkerSnapshot[], heard?: ReadonlySet<string>): Promise<void>;
  setOwner(workerId: string, hubId: string): Promise<void>;
  /** Remove a worker from the fleet (its hash, online and owner keys, its index entry); false if it was not there. */
  forgetWorker(workerId: string): Promise<boolean>;
  getOwner(workerId: string): Promise<string | undefined>;
  /** Compare-and-delete: only the hub that wrote the owner may release it. */
  releaseOwnerIfMine(workerId: string, hubId: string): Promise<boolean>;
  /** Every worker in the index; `timeoutMs` bounds the read (rejects with the clock's DeadlineError). */
  readFleet(timeoutMs: number): Promise<WorkerSnapshot[]>;
  setSessionOwner(sessionId: string, hubId: string, ttlS: number): Promise<void>;
  getSessionOwner(sessionId: string): Promise<string | undefined>;
  deleteSession(sessionId: string): Promise<void>;
  heartbeatHub(info: HubInfo, ttlS: number, now: number): Promise<void>;
  /**
   * Live hubs and the recently dead (in the index, row expired) seen within `recentS`. Index
   * entries older than HUB_HISTORY_S are pruned; a shorter `recentS` only filters.
   */
  listHubs(now: number, recentS: number): Promise<HubRow[]>;
  removeHub(hubId: string): Promise<void>;
  ping(): Promise<void>;
  /** Tells every hub that a job reached a terminal state (its waiters re-read the row): best effort. */
  announceJobDone(jobId: string): Promise<void>;
  /** Calls `listener` for every job any hub announces done; returns the unsubscribe. */
  onJobDone(listener: (jobId: string) => void): () => void;
  close(): Promise<void>;
}

/** Redis did not answer in time (or at all): a request that needs it answers 503 and is retried, never held. */
export class RegistryUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`the fleet registry is unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'RegistryUnavailableError';
  }
}
