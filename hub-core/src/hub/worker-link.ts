// One worker whose WebSocket this hub holds: what it declared in hello, what its heartbeats
// say, and which of its lanes this hub has handed work to. `in_flight` is the hub's own
// count, raised the moment a job is sent (seed: "+1 at once"), so that the next pick in the
// same pass already sees it.
import type { SchedulableWorker } from '../domain/pick-worker.ts';
import { newViewKey } from '../wire/view-token.ts';
import type { Capabilities, LaneState } from '../wire/protocol.ts';
import type { WorkerSnapshot } from '../ports/registry.ts';

export interface LaneHold {
  kind: 'job' | 'session';
  id: string;
  assignmentId: string | null;
}

export interface LinkSocket {
  send(text: string): Promise<void>;
  close(code?: number, reason?: string): void;
  /** False once the socket closes (or starts closing). */
  readonly open: boolean;
}

export class WorkerLink implements SchedulableWorker {
  status: string;
  disk_pct = 0;
  /** A link whose disk is unknown is not picked: 0 % would pass any PAPRIKA_DISK_MAX_PCT. */
  disk_known = false;
  /** A newer link of this worker said hello: whatever this hub sends here is never read. */
  superseded = false;
  cpu_pct = 0;
  mem_pct = 0;
  last_seen_ms: number;
  /** What the worker last reported itself (may lag this hub's count). */
  reported_in_flight = 0;
  reportedLanes: LaneState[] = [];
  /** Signs this link's live-view tokens; sent in welcome, so it dies with the link. */
  readonly view_key = newViewKey();
  private readonly holds: Array<LaneHold | null>;
  private busy = 0;

  constructor(
    readonly worker_id: string,
    readonly socket: LinkSocket,
    readonly capabilities: Capabilities,
    readonly meta: { lanIp: string; hostname: string; hubId: string },
    status: string,
    now: number,
  ) {
    this.status = status;
    this.last_seen_ms = now;
    this.holds = Array.from({ length: capabilities.max_concurrent }, () => null);
  }

  get ready(): boolean {
    return this.disk_known && !this.superseded;
  }

  get in_flight(): number {
    return this.busy;
  }
  get max_concurrent(): number {
    return this.capabilities.max_concurrent;
  }
  get lane_novnc_urls(): readonly string[] {
    return this.capabilities.lane_novnc_urls;
  }
  get novnc_url(): string | null {
    return this.capabilities.novnc_url;
  }

  viewUrl(lane: number): string | null {
    return this.capabilities.lane_novnc_urls[lane] ?? this.capabilities.novnc_url ?? null;
  }

  /** Host figures from hello or a heartbeat. */
  report(s: { cpu_pct?: number; mem_pct?: number; disk_pct?: number }): void {
    if (s.cpu_pct !== undefined) this.cpu_pct = s.cpu_pct;
    if (s.mem_pct !== undefined) this.mem_pct = s.mem_pct;
    if (s.disk_pct !== undefined) {
      this.disk_pct = s.disk_pct;
      this.disk_known = true;
    }
  }

  /** Reserve a free lane for a job or session; undefined when every lane is held. */
  reserve(hold: LaneHold): number | undefined {
    const lane = this.holds.indexOf(null);
    if (lane < 0) return undefined;
    this.holds[lane] = hold;
    this.busy++;
    return lane;
  }

  /** Mark a lane held by work the worker already runs (it re-linked holding it). */
  adopt(lane: number, hold: LaneHold): boolean {
    if (lane >= this.holds.length || this.holds[lane] !== null) return false;
    this.holds[lane] = hold;
    this.busy++;
    return true;
  }

  /** Free the lane held by this job or session id; returns the lane, or undefined if none. */
  release(id: string): number | undefined {
    for (let i = 0; i < this.holds.length; i++) {
      if (this.holds[i]?.id === id) {
        this.holds[i] = null;
        this.busy--;
        return i;
      }
    }
    return undefined;
  }

  holding(id: string): LaneHold | undefined {
    return this.holds.find((h) => h?.id === id) ?? undefined;
  }

  heldJobs(): LaneHold[] {
    return this.holds.filter((h): h is LaneHold => h !== null);
  }

  lanes(): LaneState[] {
    return this.holds.map((h, index) => ({
      index,
      view_url: this.viewUrl(index),
      busy: h !== null,
      job_id: h?.kind === 'job' ? h.id : null,
      session_id: h?.kind === 'session' ? h.id : null,
    }));
  }

  snapshot(): WorkerSnapshot {
    return {
      worker_id: this.worker_id,
      hub_id: this.meta.hubId,
      lan_ip: this.meta.lanIp,
      hostname: this.meta.hostname,
      status: this.status,
      in_flight: this.in_flight,
      max_concurrent: this.max_concurrent,
      lane_novnc_urls: [...this.capabilities.lane_novnc_urls],
      novnc_url: this.capabilities.novnc_url,
      disk_pct: this.disk_pct,
      cpu_pct: this.cpu_pct,
      mem_pct: this.mem_pct,
      last_seen_ms: this.last_seen_ms,
      version: this.capabilities.version,
      platform: this.capabilities.platform,
      lanes: this.lanes(),
    };
  }
}
