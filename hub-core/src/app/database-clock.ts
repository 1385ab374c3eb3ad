// The hubs of a fleet compare each other's times: a worker's last heartbeat (stamped by the hub
// it is linked to), a job's created_at and deadline (stamped by the hub that placed it), a hub's
// own heartbeat. A hub whose host clock ran minutes ahead saw the other hubs' workers as dead,
// failed their healthy jobs as `worker … lost`, and queued jobs as `queued timeout`. So a hub on
// Postgres keeps time by the database's clock, the one thing every hub of a fleet shares: its
// host clock plus the offset to Postgres's, measured at start and every minute.
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../ports/clock.ts';
import { PeriodicLoop } from '../loops/periodic-loop.ts';

/** How often the offset is measured again (a host clock stepped by NTP is followed within this). */
const SYNC_PERIOD_MS = 60_000;
/** Round trips per measurement: the shortest one's midpoint is taken. */
const SAMPLES = 3;
/** A new measurement within this of the offset in use is noise (round-trip jitter), not a change. */
const KEEP_WITHIN_MS = 100;
/** An offset this large is logged: the host clock is wrong, and workers' live-view tokens still use it. */
const WARN_AT_MS = 1000;

export class DatabaseClock implements Clock {
  private offsetMs = 0;
  private synced = false;

  constructor(
    private readonly host: Clock,
    /** Postgres's clock now, in ms since the epoch. */
    private readonly databaseNow: () => Promise<number>,
    private readonly log: Logger,
  ) {}

  /** This host's clock minus the database's, in ms, as last measured (0 before the first). */
  get hostAheadMs(): number {
    return -this.offsetMs;
  }

  now(): number {
    return this.host.now() + this.offsetMs;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return this.host.sleep(ms, signal);
  }

  setTimer(ms: number, fn: () => void): () => void {
    return this.host.setTimer(ms, fn);
  }

  /** Measure the offset again; a failed round trip keeps the one in use. */
  async sync(): Promise<void> {
    let best: { rtt: number; offset: number } | undefined;
    for (let i = 0; i < SAMPLES; i++) {
      const sent = this.host.now();
      const db = await this.databaseNow();
      const back = this.host.now();
      const rtt = back - sent;
      if (!best || rtt < best.rtt) best = { rtt, offset: db - (sent + back) / 2 };
    }
    const offset = Math.round(best!.offset);
    if (this.synced && Math.abs(offset - this.offsetMs) < KEEP_WITHIN_MS) return;
    this.offsetMs = offset;
    this.synced = true;
    if (Math.abs(offset) >= WARN_AT_MS) {
      const s = Math.round(Math.abs(offset) / 100) / 10;
      this.log.warn({ host_ahead_ms: -offset, round_trip_ms: best!.rtt }, `this host's clock is ${s} s ${offset < 0 ? 'ahead of' : 'behind'} Postgres's (DATABASE_URL): the hub keeps time by Postgres's so the fleet's hubs agree; set the host's clock right (NTP), workers check live-view tokens against theirs`);
    }
  }

  /** Measures again every minute until stopped (the hub's loops own it). */
  loop(log: Logger): PeriodicLoop {
    return new PeriodicLoop('clock-sync', SYNC_PERIOD_MS, () => this.sync(), this.host, log);
  }
}

/**
 * The clock a hub keeps: a test's own when it injects one; on Postgres, the host clock (a
 * test's skewed one, `hostClock`) corrected to the database's; else (the embedded database, on
 * this host) the host clock as it is.
 */
export async function chooseHubClock(o: { clock?: Clock; hostClock?: Clock; databaseUrl?: string; databaseNow?: () => Promise<number>; log: Logger }): Promise<Clock> {
  if (o.clock) return o.clock;
  const host = o.hostClock ?? systemClock;
  if (!o.databaseUrl || !o.databaseNow) return host;
  const clock = new DatabaseClock(host, o.databaseNow, o.log);
  await clock.sync().catch((err: unknown) => o.log.warn({ err: String(err) }, 'could not read Postgres\'s clock; keeping the host clock until the next try'));
  return clock;
}
