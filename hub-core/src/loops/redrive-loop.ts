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
import type { JobStore } from '../ports/job-store.ts';
import { PeriodicLoop } from './periodic-loop.ts';

export function redriveLoop(d: { config: Config; store: JobStore; localLinks: LocalLinks; lanes: LaneBook; ledger: JobLedger; dispatcher: Dispatcher; clock: Clock; log: Logger; metrics: HubMetrics }): PeriodicLoop {
  const { config, store, localLinks, lanes, ledger, dispatcher, clock, log, metrics } = d;
  // A freed lane wakes the loop only while queued jobs may exist: with an empty queue, every
  // job result would otherwise cost a pointless read.
  let maybeQueued = true;
  const loop = new PeriodicLoop(
    'redrive',
    config.queueRedriveIntervalS * 1000,
    async (signal) => {
      const free = localLinks.freeLanes();
      if (free === 0) return; // pick_worker() would return at once
      // Read a little more than we can place: some rows are gated or lost to other hubs.
      const rows = await store.listQueued(Math.min(1000, free * 4 + 16));
      maybeQueued = rows.length > 0;
      const { take } = decideRedrive(rows, { freeLanes: free }, clock.now(), config);
      const byId = new Map(rows.map((r) => [r.id, r]));
      let assigned = 0;
      // All at once: each assign holds its lane synchronously before its first write, so they
      // cannot race each other; one after the other, a queue of thousands (a bulk submit) was
      // placed at one claim round trip per job (~150 jobs/s on 16 lanes).
      if (signal.aborted) return;
      const outcomes = await Promise.all(take.map((id) => dispatcher.assign(byId.get(id)!, 'redrive')));
      for (const outcome of outcomes) {
        if (outcome.kind !== 'assigned') continue;
        assigned++;
        metrics.redriveAssigned.inc();
      }
      if (assigned > 0) log.info({ assigned, considered: rows.length }, 'redrive assigned queued jobs');
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
      loop.wake();
    });
  }
  return loop;
}
