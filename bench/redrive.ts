// redrive latency: a released queued job → running after a lane frees (one lane, a chain of
// jobs: each result frees the lane for the next). Peer: the seed's 3 s poll with the 90 s age
// gate, computed from the same run's timestamps.
import { startSimAgent } from '../test/harness/agents.ts';
import { realBackends, startTestHub } from '../test/harness/hub.ts';
import { waitFor } from '../test/harness/processes.ts';
import { seededRandom } from '../hub-core/src/wire/random.ts';
import { summary, type Figure } from './report.ts';

const SEED_POLL_MS = 3000;
const SEED_AGE_GATE_MS = 90_000;

export async function redriveFigures(o: { jobs: number }): Promise<Figure[]> {
  const backends = await realBackends();
  // Inline assignment gives up at once, so every job below is queued and released.
  const h = await startTestHub({ ...backends.env, PAPRIKA_ASSIGN_WAIT_S: '0', PAPRIKA_LOG_LEVEL: 'silent' });
  const agent = await startSimAgent(h.url, 1, { heartbeatS: 15 });
  const post = (ms: number) => fetch(`${h.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'sleep', spec: { ms } }) }).then((r) => r.json() as Promise<{ id: string; status: string }>);
  // A session holds the only lane while the chain is queued; closing it starts the chain.
  const session = (await fetch(`${h.url}/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }).then((r) => r.json())) as { session_id: string };
  const ids: string[] = [];
  for (let i = 0; i < o.jobs + 1; i++) ids.push((await post(5)).id);
  await fetch(`${h.url}/sessions/${session.session_id}`, { method: 'DELETE' });
  await waitFor('chain done', async () => (await h.hub.store.countByStatus()).succeeded === ids.length, 120_000, 20);
  const rows = await Promise.all(ids.map((id) => h.hub.store.getJob(id)));
  await agent.stop();
  await h.stop();
  await backends.drop();

  const paprika: number[] = [];
  const seed: number[] = [];
  const rng = seededRandom(5);
  const sorted = rows.map((r) => r!).sort((a, b) => a.assigned_at!.getTime() - b.assigned_at!.getTime());
  for (let i = 1; i < sorted.length; i++) {
    const freed = sorted[i - 1].finished_at!.getTime();
    const job = sorted[i];
    if (job.released_at === null) throw new Error('redrive bench: a job was assigned inline');
    paprika.push(job.assigned_at!.getTime() - freed);
    // The seed: a pass every 3 s at a random phase, and no job younger than 90 s touched.
    const eligible = Math.max(freed, job.created_at.getTime() + SEED_AGE_GATE_MS);
    const phase = rng.next() * SEED_POLL_MS;
    const tick = Math.ceil((eligible - phase) / SEED_POLL_MS) * SEED_POLL_MS + phase;
    seed.push(tick - freed);
  }
  const p = summary(paprika);
  const s = summary(seed);
  return [
    // Job timestamps are whole milliseconds: a 0 is "under 1 ms".
    { name: 'redrive latency p50', unit: 'ms', paprika: p.p50, peer: s.p50, peerName: 'seed 3 s poll + 90 s gate', higherIsBetter: false, resolution: 1, extra: { jobs: p.n } },
    { name: 'redrive latency p99', unit: 'ms', paprika: p.p99, peer: s.p99, peerName: 'seed 3 s poll + 90 s gate', higherIsBetter: false, resolution: 1 },
  ];
}
