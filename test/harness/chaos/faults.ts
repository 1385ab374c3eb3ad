// The faults a chaos run injects, one at a time, each healed before the next: SIGKILL and
// SIGTERM of hubs and agents, a paused Redis, a restarted Postgres, dropped links (nginx
// killed and started again), Redis flushed and restarted empty, every hub SIGKILLed so one
// restarts alone, a Redis stalled (SIGSTOP) while a hub starts, and results too large or
// with text Postgres cannot store. Which fault, which target and how long come from the seed.
import type { Random } from '../../../hub-core/src/wire/random.ts';
import type { ChaosCluster } from './cluster.ts';

export const FAULT_KINDS = ['hub_sigkill', 'hub_sigterm', 'agent_sigkill', 'agent_sigterm', 'redis_pause', 'postgres_restart', 'links_drop', 'redis_flush_restart', 'lone_hub_sigkill', 'redis_stall_at_start', 'oversized_result', 'unstorable_result'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

const WEIGHTS: Record<FaultKind, number> = { hub_sigkill: 3, hub_sigterm: 2, agent_sigkill: 4, agent_sigterm: 2, redis_pause: 2, postgres_restart: 2, links_drop: 1, redis_flush_restart: 1, lone_hub_sigkill: 1, redis_stall_at_start: 1, oversized_result: 1, unstorable_result: 1 };

/** The simulated site's pages (worker-agent simulated-lane.ts): a screenshot over the 8 MB cap, and a title Postgres cannot store. */
const OVERSIZED_URL = 'http://sim.invalid/bytes/12000000';
const ODD_TEXT_URL = 'http://sim.invalid/odd-text';

export interface FaultRecord {
  kind: FaultKind;
  target: string;
  at: number;
  /** When it was healed; for a killed hub or agent (started again in the background), when it was down. */
  healedAt: number;
  /** What went wrong with the fault itself (a graceful stop that was not graceful). */
  problem?: string;
}

export interface PauseSample {
  hub: string;
  rows: number;
  alive: number;
  stale: boolean;
}

export interface FleetDuringPause {
  /** Workers alive in the fleet view right before the pause. */
  before: number;
  samples: PauseSample[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const between = (rng: Random, lo: number, hi: number) => lo + rng.next() * (hi - lo);
const pickIndex = (rng: Random, n: number) => Math.floor(rng.next() * n);

export function pickFault(rng: Random): FaultKind {
  const total = FAULT_KINDS.reduce((s, k) => s + WEIGHTS[k], 0);
  let x = rng.next() * total;
  for (const k of FAULT_KINDS) {
    x -= WEIGHTS[k];
    if (x < 0) return k;
  }
  return FAULT_KINDS[FAULT_KINDS.length - 1];
}

type WorkersView = { workers: Array<{ alive: boolean }>; stale: boolean };

async function readFleet(url: string, timeoutMs: number): Promise<WorkersView | undefined> {
  try {
    const r = await fetch(`${url}/admin/workers`, { signal: AbortSignal.timeout(timeoutMs) });
    return r.ok ? ((await r.json()) as WorkersView) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Injects faults one at a time. A killed hub or agent is started again in the background
 * (a restart takes seconds on two cores), so faults keep coming meanwhile; at most one hub
 * is down at once, and a Redis pause waits until the whole fleet is back, so that what it
 * measures is Redis alone.
 */
export class FaultInjector {
  readonly records: FaultRecord[] = [];
  readonly pauses: FleetDuringPause[] = [];
  /** Jobs the faults themselves submitted (the verdict counts them with the clients' jobs). */
  readonly submitted: string[] = [];
  private readonly healing = new Map<string, Promise<void>>();

  constructor(
    private readonly c: ChaosCluster,
    private readonly rng: Random,
  ) {}

  /** Postgres downtime so far (it delays every loop). */
  get postgresDownMs(): number {
    return this.records.filter((r) => r.kind === 'postgres_restart').reduce((s, r) => s + (r.healedAt - r.at), 0);
  }

  /** Injects `planned`, or a fault drawn from the seed. */
  async next(planned?: FaultKind): Promise<FaultRecord> {
    let kind = planned ?? pickFault(this.rng);
    const hubDown = [...this.healing.keys()].some((k) => k.startsWith('hub:'));
    if (hubDown && kind.startsWith('hub_')) {
      if (planned) await this.settle();
      else kind = 'agent_sigkill';
    }
    const rec = await this.inject(kind);
    this.records.push(rec);
    return rec;
  }

  /** Wait until every restart has finished. */
  async settle(): Promise<void> {
    while (this.healing.size > 0) await Promise.all(this.healing.values());
  }

  private heal(key: string, delayMs: number, start: () => Promise<void>): void {
    const p = sleep(delayMs)
      .then(start)
      .finally(() => this.healing.delete(key));
    this.healing.set(key, p);
  }

  private async inject(kind: FaultKind): Promise<FaultRecord> {
    const { c, rng } = this;
    const at = Date.now();
    const rec = (target: string, problem?: string): FaultRecord => ({ kind, target, at, healedAt: Date.now(), ...(problem ? { problem } : {}) });
    switch (kind) {
      case 'hub_sigkill':
      case 'hub_sigterm': {
        const i = pickIndex(rng, c.hubs.length);
        const signal = kind === 'hub_sigkill' ? 'SIGKILL' : 'SIGTERM';
        const { code, tail } = await c.stopHub(i, signal);
        let problem: string | undefined;
        if (code === 'hung') problem = 'hub did not exit within 20 s of SIGTERM';
        else if (signal === 'SIGTERM' && code !== 0) problem = `hub exited with ${code} on SIGTERM: ${tail}`;
        this.heal(`hub:${i}`, between(rng, 300, 1500), () => c.startHub(i));
        return rec(c.hubs[i].id, problem);
      }
      case 'agent_sigkill':
      case 'agent_sigterm': {
        const up = c.agents.map((_, j) => j).filter((j) => !this.healing.has(`agent:${j}`));
        const j = up[pickIndex(rng, up.length)];
        const signal = kind === 'agent_sigkill' ? 'SIGKILL' : 'SIGTERM';
        const code = await c.stopAgent(j, signal);
        const problem = signal === 'SIGTERM' && code !== 0 ? `agent exited with ${code} on SIGTERM` : undefined;
        this.heal(`agent:${j}`, between(rng, 200, 1000), () => c.startAgent(j));
        return rec(c.agents[j].workerId, problem);
      }
      case 'redis_pause': {
        await this.settle();
        await c.waitForFleet(c.agents.length, 30_000);
        // The fleet view every hub serves must not shrink while Redis answers slowly.
        const views = await Promise.all(c.hubs.map((h) => readFleet(h.url, 2000)));
        const before = Math.min(...views.map((v) => (v && !v.stale ? v.workers.filter((w) => w.alive).length : Number.POSITIVE_INFINITY)));
        const ms = Math.round(between(rng, 1500, 2500));
        await c.redisAdmin.call('CLIENT', 'PAUSE', String(ms), 'ALL');
        const until = Date.now() + ms;
        const samples: PauseSample[] = [];
        while (Date.now() < until - 200) {
          const round = await Promise.all(c.hubs.map(async (h) => ({ hub: h.id, view: await readFleet(h.url, 1500) })));
          for (const { hub, view } of round) if (view) samples.push({ hub, rows: view.workers.length, alive: view.workers.filter((w) => w.alive).length, stale: view.stale });
          await sleep(100);
        }
        if (Number.isFinite(before)) this.pauses.push({ before, samples });
        await sleep(Math.max(0, until - Date.now()) + 100);
        return rec(`${ms} ms`);
      }
      case 'postgres_restart': {
        const mode = rng.next() < 0.5 ? 'fast' : 'immediate';
        await c.pg.down(mode);
        await sleep(between(rng, 500, 2000));
        await c.pg.start();
        return rec(mode);
      }
      case 'links_drop':
        await c.nginx.restart();
        return rec('nginx');
      case 'redis_flush_restart': {
        // Redis forgets everything (FLUSHALL, then a new empty server on the same port) while
        // every hub runs: no hub may take the missing rows for a dead peer (issue 16, 1 and 7).
        await c.redisAdmin.flushall().catch(() => {});
        await c.redis.restart();
        return rec('flushall + restart');
      }
      case 'lone_hub_sigkill': {
        // Every hub SIGKILLed, then one started alone: what its workers declare when they
        // re-link is adopted, and none of their results is dropped (issue 16, 2).
        await this.settle();
        await Promise.all(c.hubs.map((_, i) => c.stopHub(i, 'SIGKILL')));
        await c.startHub(0);
        this.heal('hub:others', between(rng, 500, 1500), () => Promise.all(c.hubs.slice(1).map((_, i) => c.startHub(i + 1))).then(() => undefined));
        return rec(c.hubs[0].id);
      }
      case 'redis_stall_at_start': {
        // A hub starting while Redis accepts TCP but answers nothing: it waits (bounded) or
        // exits naming REDIS_URL, and starts once Redis answers.
        await this.settle();
        const i = pickIndex(rng, c.hubs.length);
        await c.stopHub(i, 'SIGKILL');
        c.redis.pause();
        const starting = c.startHub(i);
        await sleep(between(rng, 1000, 2500));
        c.redis.resume();
        const problem = await Promise.race([starting.then(() => undefined), sleep(45_000).then(() => 'hub did not start within 45 s of Redis answering again')]);
        return rec(c.hubs[i].id, problem);
      }
      case 'oversized_result':
      case 'unstorable_result': {
        const oversized = kind === 'oversized_result';
        const problem = await this.probe(oversized ? OVERSIZED_URL : ODD_TEXT_URL, (j) =>
          oversized
            ? j.status === 'failed' && /^result too large/.test(j.error ?? '') ? undefined : `expected failed: result too large, got ${j.status} ${j.error ?? ''}`
            : j.status === 'succeeded' && (j.result as { title?: string })?.title === 'odd\uFFFDtext\uFFFD' ? undefined : `expected succeeded with the text replaced, got ${j.status} ${j.error ?? ''}`,
        );
        return rec(oversized ? '12 MB screenshot' : 'NUL + lone surrogate', problem);
      }
    }
  }

  /** Submits a fetch of the simulated site through nginx and judges what it became; a problem, or undefined. */
  private async probe(url: string, check: (j: { status: string; error: string | null; result: unknown }) => string | undefined): Promise<string | undefined> {
    const base = this.c.nginx.url;
    const res = await fetch(`${base}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'fetch', spec: { url, screenshot: true, timeout_s: 10 } }), signal: AbortSignal.timeout(30_000) }).catch((err: unknown) => err as Error);
    if (res instanceof Error || !res.ok) return `submit failed: ${res instanceof Error ? res.message : res.status}`;
    const { id } = (await res.json()) as { id: string };
    this.submitted.push(id);
    const until = Date.now() + 40_000;
    while (Date.now() < until) {
      const j = await fetch(`${base}/jobs/${id}`, { signal: AbortSignal.timeout(5000) })
        .then((r) => (r.ok ? (r.json() as Promise<{ status: string; error: string | null; result: unknown }>) : undefined))
        .catch(() => undefined);
      if (j && ['succeeded', 'failed', 'canceled'].includes(j.status)) return check(j);
      await sleep(200);
    }
    return `job ${id} did not end within 40 s`;
  }
}
