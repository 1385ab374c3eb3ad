// Layer 4: every REDRIVE_INTERVAL while this hub has a free lane, claim queued jobs oldest
// first (the three guards: conditional UPDATE, worker_id IS NULL, the age gate) and send
// them. A freed lane or a released job wakes the loop at once; the timer is the safety net.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { decideRedrive } from '../domain/redrive.ts';
import type { Dispatcher } from '../hub/dispatcher.ts';
import type { JobLedger } from '../hub/job-ledger.ts';
import type { LaneBook } from '../hub/lane-book.ts';
import type { LocalLinks } from '../hub/local-links.ts';
import type { HubMetrics } from '../hub/metrics.ts';
import type { Clock } from '../ports/clock.ts';
import type { JobRow, JobStore } from '../ports/job-store.ts';
import { PeriodicLoop } from './periodic-loop.ts';

/** Queued rows read once serve the passes that follow for this long (the claim is the guard, not the read). */
const CANDIDATES_TTL_MS = 1000;

export function redriveLoop(d: { config: Config; store: JobStore; localLinks: LocalLinks; lanes: LaneBook; ledger: JobLedger; dispatcher: Dispatcher; clock: Clock; log: Logger; metrics: HubMetrics }): PeriodicLoop {
  const { config, store, localLinks, lanes, ledger, dispatcher, clock, log, metrics } = d;
  // A freed lane wakes the loop only while queued jobs may exist: with an empty queue, every
  // job result would otherwise cost a pointless read.
  let maybeQueued = true;
  // The queued rows last read, oldest first, minus those claimed since. A pass claims from
  // them without reading again: with a freed lane waking a pass per result, a read and a
  // claim per pass put two round trips between a lane freeing and its next job. A row gone
  // stale (taken by another hub, canceled) only fails its conditional claim and is dropped.
  // Read again when they run short, when a job is released (it may be missing), or after the TTL.
  let candidates: JobRow[] = [];
  let readAt = -Infinity;
  let stale = true;
  const loop = new PeriodicLoop(
    'redrive',
    config.queueRedriveIntervalS * 1000,
    async (signal) => {
      const free = localLinks.freeLanes();
      if (free === 0) return; // pick_worker() would return at once
      let now = clock.now();
      let { take } = decideRedrive(candidates, { freeLanes: free }, now, config);
      if (stale || take.length < free || now - readAt > CANDIDATES_TTL_MS) {
        stale = false;
        // Read a little more than we can place: some rows are gated or lost to other hubs.
        candidates = await store.listQueued(Math.min(1000, Math.max(256, free * 4 + 16)));
        readAt = now = clock.now();
        maybeQueued = candidates.length > 0;
        ({ take } = decideRedrive(candidates, { freeLanes: localLinks.freeLanes() }, now, config));
      }
      const byId = new Map(candidates.map((r) => [r.id, r]));
      let assigned = 0;
      // All in one claim statement: one round trip per job placed a queue of thousands (a bulk
      // submit) at ~150 jobs/s on 16 lanes; lanes are held before the write, so no pick races it.
      if (signal.aborted || take.length === 0) return;
      const outcomes = await dispatcher.assignMany(take.map((id) => byId.get(id)!), 'redrive');
      const done = new Set(take.filter((_, i) => outcomes[i].kind !== 'no_lane'));
      candidates = candidates.filter((r) => !done.has(r.id));
      for (const outcome of outcomes) {
        if (outcome.kind !== 'assigned') continue;
        assigned++;
        metrics.redriveAssigned.inc();
      }
      if (assigned > 0) log.info({ assigned, considered: byId.size }, 'redrive assigned queued jobs');
    },
    clock,
    log,
  );
  if (!config.queueRedriveDisable) {
    lanes.on('spare', () => {
      if (maybeQueued) loop.wake();
    });
    ledger.on('released', () => {
      maybeQueued = true;
      stale = true;
      loop.wake();
    });
  }
  return loop;
}
