// DELETE /admin/workers/:id: an operator removes an offline worker from the fleet at once
// (instead of waiting PAPRIKA_WORKER_FORGET_S). A live one is refused: forgetting it would only
// hide it until its next heartbeat wrote it back, and its jobs would look orphaned meanwhile.
import type { Logger } from 'pino';
import { PaprikaError } from '../errors.ts';
import type { Clock } from '../ports/clock.ts';
import type { JobStore } from '../ports/job-store.ts';
import type { Registry } from '../ports/registry.ts';
import type { FleetViewReader } from './fleet-view.ts';
import type { HubEvents } from './hub-events.ts';
import type { LocalFleet } from './local-fleet.ts';

export interface ForgetDeps {
  fleet: LocalFleet;
  fleetView: FleetViewReader;
  registry: Registry;
  store: JobStore;
  clock: Clock;
  log: Logger;
  events: HubEvents;
}

export async function forgetOfflineWorker(d: ForgetDeps, workerId: string, actor: string): Promise<{ worker_id: string; forgotten: true }> {
  const view = await d.fleetView.read();
  const row = view.workers.find((w) => w.worker_id === workerId);
  // Linked here and not leaving: alive whatever its heartbeat says.
  const linkedHere = d.fleet.get(workerId);
  if (row?.alive || (linkedHere && linkedHere.left_at_ms === null)) {
    throw new PaprikaError('worker_alive', { worker_id: workerId, hub_id: row?.hub_id ?? linkedHere?.meta.hubId ?? null, last_seen: row ? new Date(row.last_seen_ms).toISOString() : null });
  }
  if (!row) throw new PaprikaError('not_found', { worker_id: workerId }, 'No such worker');
  await d.registry.forgetWorker(workerId);
  const details = { hub_id: row.hub_id, lan_ip: row.lan_ip, hostname: row.hostname, last_seen: new Date(row.last_seen_ms).toISOString(), left: row.left_at_ms != null };
  await d.store.forgetWorker(workerId, actor, details, new Date(d.clock.now()));
  d.log.warn({ worker_id: workerId, actor, ...details }, 'offline worker forgotten');
  d.events.workersChanged();
  return { worker_id: workerId, forgotten: true };
}
