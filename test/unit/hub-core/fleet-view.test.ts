// The fleet view during a registry outage: the last good view is served for FLEET_CACHE, and
// the workers in it are judged alive as of when it was read. Judged against the clock instead,
// a 4 s TTL and a 2.5 s Redis pause made live workers of other hubs look dead (the chaos run's
// "19/20, 4 collapsed samples"), and the reconciler would have failed their jobs.
// The registry is the in-process one with its reads made to fail on demand: a Redis that stops
// answering is tested for real in the chaos run; this pins the rule on a manual clock.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { MemoryRegistry } from '../../../hub-core/src/adapters/memory/memory-registry.ts';
import { loadConfig } from '../../../hub-core/src/config.ts';
import { FleetViewReader } from '../../../hub-core/src/hub/fleet-view.ts';
import { LocalLinks } from '../../../hub-core/src/hub/local-links.ts';
import { WorkerLink, type LinkSocket } from '../../../hub-core/src/hub/worker-link.ts';
import { ManualClock } from '../../../hub-core/src/ports/clock.ts';
import { mathRandom } from '../../../hub-core/src/wire/random.ts';
import type { WorkerSnapshot } from '../../../hub-core/src/ports/registry.ts';

class StallingRegistry extends MemoryRegistry {
  stalled = false;
  override async readFleet(): Promise<WorkerSnapshot[]> {
    if (this.stalled) throw new Error('fleet read timed out');
    return super.readFleet();
  }
}

function remoteWorker(id: string, lastSeenMs: number): WorkerSnapshot {
  return { worker_id: id, hub_id: 'hub-b', lan_ip: '10.0.0.1', hostname: id, status: 'active', in_flight: 0, max_concurrent: 2, lane_novnc_urls: ['u0', 'u1'], novnc_url: null, disk_pct: 10, cpu_pct: 1, mem_pct: 1, last_seen_ms: lastSeenMs, version: 't', platform: 'linux', lanes: [] };
}

function setup() {
  const clock = new ManualClock(1_000_000);
  const config = loadConfig({ PAPRIKA_WORKER_TTL_S: '4', PAPRIKA_HEARTBEAT_S: '0.5', PAPRIKA_FLEET_CACHE_S: '10', PAPRIKA_HUB_ID: 'hub-a' });
  const registry = new StallingRegistry(clock);
  const reader = new FleetViewReader(config, registry, new LocalLinks(config, clock, mathRandom), clock, pino({ level: 'silent' }));
  return { clock, registry, reader };
}

describe('FleetViewReader during a registry outage', () => {
  it('keeps remote workers alive as of the last good read, however long the outage lasts within FLEET_CACHE', async () => {
    const { clock, registry, reader } = setup();
    await registry.publishWorkers([remoteWorker('w1', clock.now() - 1500), remoteWorker('w2', clock.now() - 200)]);
    const good = await reader.read();
    expect(good.workers.map((w) => [w.worker_id, w.alive])).toEqual([['w1', true], ['w2', true]]);

    registry.stalled = true;
    for (const passedMs of [2500, 6000, 9900]) {
      clock.advance(passedMs - (clock.now() - 1_000_000));
      const view = await reader.read();
      expect(view.stale).toBe(true);
      expect(view.partial).toBe(false);
      expect(view.as_of).toBe(1_000_000);
      expect(view.workers.filter((w) => w.alive).map((w) => w.worker_id)).toEqual(['w1', 'w2']);
    }
  });

  it('a worker already dead at the last good read stays dead in the cached view', async () => {
    const { clock, registry, reader } = setup();
    await registry.publishWorkers([remoteWorker('w1', clock.now() - 4500), remoteWorker('w2', clock.now())]);
    await reader.read();
    registry.stalled = true;
    clock.advance(1000);
    const view = await reader.read();
    expect(view.workers.map((w) => [w.worker_id, w.alive])).toEqual([['w1', false], ['w2', true]]);
  });

  it('past FLEET_CACHE the view is partial (local links only): no remote worker, so no orphan verdicts', async () => {
    const { clock, registry, reader } = setup();
    await registry.publishWorkers([remoteWorker('w1', clock.now())]);
    await reader.read();
    registry.stalled = true;
    clock.advance(10_001);
    const view = await reader.read();
    expect(view).toMatchObject({ partial: true, stale: true, workers: [] });
  });

  it('once the registry answers again, liveness is judged against the clock', async () => {
    const { clock, registry, reader } = setup();
    await registry.publishWorkers([remoteWorker('w1', clock.now())]);
    clock.advance(5000);
    const view = await reader.read();
    expect(view.stale).toBe(false);
    expect(view.workers[0].alive).toBe(false);
  });
});

// The registry hands back the same snapshot object for a worker that did not change (the
// Redis adapter's incremental read): the view keeps that worker's row, so the JSON made of it
// is kept too (http/workers-page.ts). A row must still follow liveness and the registry.
class SameObjectsRegistry extends MemoryRegistry {
  rows: WorkerSnapshot[] = [];
  override async readFleet(): Promise<WorkerSnapshot[]> {
    return [...this.rows];
  }
}

describe('FleetViewReader rows between reads', () => {
  const make = () => {
    const clock = new ManualClock(1_000_000);
    const config = loadConfig({ PAPRIKA_WORKER_TTL_S: '4', PAPRIKA_HEARTBEAT_S: '0.5', PAPRIKA_HUB_ID: 'hub-a' });
    const registry = new SameObjectsRegistry(clock);
    const reader = new FleetViewReader(config, registry, new LocalLinks(config, clock, mathRandom), clock, pino({ level: 'silent' }));
    return { clock, registry, reader };
  };

  it('keeps the row of an unchanged, still-alive worker; a changed snapshot or a death makes a new one', async () => {
    const { clock, registry, reader } = make();
    const w1 = remoteWorker('w1', clock.now());
    const w2 = remoteWorker('w2', clock.now() - 3000);
    registry.rows = [w2, w1];
    const first = (await reader.read()).workers;
    expect(first.map((w) => [w.worker_id, w.alive])).toEqual([['w1', true], ['w2', true]]);
    const second = (await reader.read()).workers;
    expect(second[0]).toBe(first[0]);
    expect(second[1]).toBe(first[1]);

    registry.rows = [w2, { ...w1, in_flight: 2 }];
    clock.advance(1500); // w2 is now past WORKER_TTL
    const third = (await reader.read()).workers;
    expect(third.map((w) => [w.worker_id, w.alive, w.in_flight])).toEqual([['w1', true, 2], ['w2', false, 0]]);
    expect(third[0]).not.toBe(second[0]);
    expect(third[1]).not.toBe(second[1]);
  });

  it('orders by worker id whatever order the registry answers in, also when the ids change', async () => {
    const { clock, registry, reader } = make();
    const ids = ['w10', 'w2', 'w1', 'wa', 'W3'];
    registry.rows = ids.map((id) => remoteWorker(id, clock.now()));
    const sorted = [...ids].sort((a, b) => a.localeCompare(b));
    expect((await reader.read()).workers.map((w) => w.worker_id)).toEqual(sorted);
    registry.rows = [...registry.rows].reverse();
    expect((await reader.read()).workers.map((w) => w.worker_id)).toEqual(sorted);
    registry.rows = [...registry.rows.filter((w) => w.worker_id !== 'w2'), remoteWorker('w0', clock.now())];
    expect((await reader.read()).workers.map((w) => w.worker_id)).toEqual(['w0', ...sorted.filter((id) => id !== 'w2')].sort((a, b) => a.localeCompare(b)));
  });
});

describe('FleetViewReader: a stale local link against the registry', () => {
  function withLocalLink() {
    const clock = new ManualClock(1_000_000);
    const config = loadConfig({ PAPRIKA_WORKER_TTL_S: '4', PAPRIKA_HEARTBEAT_S: '0.5', PAPRIKA_HUB_ID: 'hub-a' });
    const registry = new SameObjectsRegistry(clock);
    const links = new LocalLinks(config, clock, mathRandom);
    const socket: LinkSocket = { send: async () => {}, close: () => {}, terminate: () => {}, open: true };
    const link = new WorkerLink('w1', socket, { max_concurrent: 2, lane_novnc_urls: ['u0', 'u1'], novnc_url: null, version: 't', platform: 'test' }, { lanIp: '10.0.0.1', hostname: 'w1', hubId: 'hub-a' }, 'active', clock.now());
    links.add(link);
    const reader = new FleetViewReader(config, registry, links, clock, pino({ level: 'silent' }));
    return { clock, registry, reader, link };
  }
  const w1 = async (reader: FleetViewReader) => (await reader.read()).workers.filter((w) => w.worker_id === 'w1').map((w) => ({ hub_id: w.hub_id, alive: w.alive, local: w.local }));

  it('shows the worker alive on the hub it re-linked to, not dead on the link this hub still holds', async () => {
    const { clock, registry, reader } = withLocalLink();
    clock.advance(10_000); // this hub's link heard nothing for 10 s (TTL 4)
    registry.rows = [remoteWorker('w1', clock.now() - 500)]; // alive on hub-b
    expect(await w1(reader)).toEqual([{ hub_id: 'hub-b', alive: true, local: false }]);
  });

  it('keeps the local link while it is alive, and when the registry has nothing fresher elsewhere', async () => {
    const { clock, registry, reader, link } = withLocalLink();
    registry.rows = [remoteWorker('w1', clock.now())];
    expect(await w1(reader)).toEqual([{ hub_id: 'hub-a', alive: true, local: true }]); // alive here: the local link wins
    clock.advance(10_000);
    registry.rows = [remoteWorker('w1', clock.now() - 9_000)]; // dead there too
    expect(await w1(reader)).toEqual([{ hub_id: 'hub-a', alive: false, local: true }]);
    registry.rows = [{ ...remoteWorker('w1', clock.now()), hub_id: 'hub-a' }]; // this hub's own publish
    expect(await w1(reader)).toEqual([{ hub_id: 'hub-a', alive: false, local: true }]);
    link.seen(clock.now());
    expect(await w1(reader)).toEqual([{ hub_id: 'hub-a', alive: true, local: true }]);
  });
});
