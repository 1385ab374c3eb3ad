// fleet read: GET /admin/workers with 1,000 and 10,000 workers' heartbeats in Redis. Peer: a
// naive reader that fetches one worker hash at a time.
import { Redis } from 'ioredis';
import { RedisRegistry } from '../hub-core/src/adapters/redis/redis-registry.ts';
import type { WorkerSnapshot } from '../hub-core/src/ports/registry.ts';
import { startTestHub } from '../test/harness/hub.ts';
import { dropRedisPrefix, REDIS_TEST_URL, testRedisPrefix } from '../test/harness/services.ts';
import { summary, type Figure } from './report.ts';

function snapshot(i: number, now: number): WorkerSnapshot {
  return {
    worker_id: `wb${i}`,
    hub_id: `hub-${i % 3}`,
    lan_ip: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
    hostname: `host-${i}`,
    status: 'active',
    in_flight: i % 3,
    max_concurrent: 4,
    lane_novnc_urls: [0, 1, 2, 3].map((l) => `http://10.0.0.1:9000/lanes/${l}/view`),
    novnc_url: null,
    disk_pct: 40,
    cpu_pct: 12,
    mem_pct: 50,
    last_seen_ms: now,
    version: '0.1.0',
    platform: 'linux-x64',
    lanes: [0, 1, 2, 3].map((l) => ({ index: l, view_url: `http://10.0.0.1:9000/lanes/${l}/view`, busy: l < i % 3, job_id: null, session_id: null })),
  };
}

async function timeReads(n: number, fn: () => Promise<number>): Promise<number> {
  await fn(); // warm-up
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const count = await fn();
    times.push(performance.now() - t);
    if (count === 0) throw new Error('fleet read returned nothing');
  }
  return summary(times).p50;
}

export async function fleetReadFigures(o: { sizes: number[]; reads: number }): Promise<Figure[]> {
  const out: Figure[] = [];
  for (const n of o.sizes) {
    const prefix = testRedisPrefix();
    const registry = await RedisRegistry.connect(REDIS_TEST_URL, prefix, 3600);
    let h: Awaited<ReturnType<typeof startTestHub>> | undefined;
    const naive = new Redis(REDIS_TEST_URL);
    let p: number;
    let s: number;
    try {
      const now = Date.now();
      for (let i = 0; i < n; i += 500) await registry.publishWorkers(Array.from({ length: Math.min(500, n - i) }, (_, k) => snapshot(i + k, now)));
      h = await startTestHub({ REDIS_URL: REDIS_TEST_URL, PAPRIKA_REDIS_PREFIX: prefix, PAPRIKA_WORKER_TTL_S: '3600', PAPRIKA_LOG_LEVEL: 'silent', PAPRIKA_FLEET_TIMEOUT_MS: '30000' });
      const url = h.url;
      const paprika = async () => ((await (await fetch(`${url}/admin/workers`)).json()) as { workers: unknown[] }).workers.length;
      const oneByOne = async () => {
        const ids = await naive.smembers(`${prefix}workers:index`);
        const rows = [];
        for (const id of ids) rows.push(await naive.hgetall(`${prefix}worker:${id}`));
        return rows.length;
      };
      p = Math.min(await timeReads(o.reads, paprika), await timeReads(o.reads, paprika));
      s = Math.min(await timeReads(o.reads, oneByOne), await timeReads(o.reads, oneByOne));
    } finally {
      // Its 10,000 workers' keys go even when a read fails (a crashed run once left them behind).
      await naive.quit().catch(() => {});
      await h?.stop().catch(() => {});
      await registry.close();
      await dropRedisPrefix(prefix);
    }
    out.push({ name: `fleet read (${n.toLocaleString('en-US')} workers)`, unit: 'ms', paprika: p, peer: s, peerName: 'one key at a time', higherIsBetter: false });
  }
  return out;
}
