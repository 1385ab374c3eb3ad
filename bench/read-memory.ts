// read memory: RSS of a `paprika hub` process (Postgres + Redis) before and after five console
// loads of a job table whose results are big (JOBS × RESULT_MB MB). A console load is what
// the console asks when it opens: the first page of GET /jobs (limit 200), the stats, the
// workers, and the admin event stream's snapshot. Reading lists summaries (no result), so the
// figure should stay flat; before issue #16 five loads took a hub from 374 MB to 2 GB.
// Peer: the same hub's RSS before the loads (ratio ≈ 1 means flat).
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { WebSocket } from 'ws';
import { realBackends } from '../test/harness/hub.ts';
import { freePort, spawnHub } from '../test/harness/processes.ts';
import { rssKb } from './hub-memory.ts';
import type { Figure } from './report.ts';

const rssMiB = (pid: number) => rssKb(pid) / 1024;

async function consoleLoad(url: string): Promise<number> {
  let bytes = 0;
  for (const path of ['/jobs?limit=200', '/admin/stats', '/admin/workers']) {
    const res = await fetch(url + path);
    if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
    bytes += (await res.arrayBuffer()).byteLength;
  }
  // The live feed's first message is the snapshot (jobs included, as summaries).
  const ws = new WebSocket(`${url.replace('http', 'ws')}/admin/events`);
  bytes += await new Promise<number>((resolve, reject) => {
    ws.once('message', (m: Buffer) => resolve(m.length));
    ws.once('error', reject);
  });
  ws.close();
  return bytes;
}

export async function readMemoryFigures(o: { jobs: number; resultMb: number; loads: number }): Promise<Figure[]> {
  const backends = await realBackends();
  const port = await freePort();
  const hub = await spawnHub(port, { ...backends.env, PAPRIKA_LOG_LEVEL: 'silent' }, { readyTimeoutMs: 60_000 });
  const db = new pg.Client({ connectionString: backends.env.DATABASE_URL });
  await db.connect();
  try {
    // Results written straight into the table (what succeeded jobs with big eval results leave).
    const big = 'x'.repeat(o.resultMb * 1024 * 1024);
    for (let i = 0; i < o.jobs; i++) {
      await db.query(
        `INSERT INTO jobs (id, kind, spec, status, worker_id, lane, hub_id, result, attempts, created_at, assigned_at, finished_at)
         VALUES ($1, 'macro', '{"steps":[]}', 'succeeded', 'wbench', 0, 'bench', jsonb_build_object('value', $2::text), 1, now(), now(), now())`,
        [randomUUID(), big],
      );
    }
    await consoleLoad(hub.url); // warm-up: JIT, first queries
    const before = rssMiB(hub.child.pid!);
    let bytes = 0;
    for (let i = 0; i < o.loads; i++) bytes += await consoleLoad(hub.url);
    const after = rssMiB(hub.child.pid!);
    return [
      {
        name: `read memory (${o.jobs} jobs × ${o.resultMb} MB results, ${o.loads} console loads)`,
        unit: 'MiB RSS',
        paprika: after,
        peer: before,
        peerName: 'the same hub before the loads',
        higherIsBetter: false,
        extra: { bytes_per_load: Math.round(bytes / o.loads), stored_mb: o.jobs * o.resultMb },
      },
    ];
  } finally {
    await db.end();
    await hub.kill('SIGTERM');
    await backends.drop();
  }
}
