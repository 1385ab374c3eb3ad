// completion: submit → the client holds the finished job, for sleep jobs of 300–1,100 ms, with
// the SDK's long poll (GET /jobs/:id?wait_s=) against the backoff polling it used before
// (50 ms × 1.5 up to 1 s; the same client made to skip the long poll).
import { createClient, type PaprikaClient } from '../hub-core/client/index.ts';
import { startSimAgent } from '../test/harness/agents.ts';
import { startTestHub } from '../test/harness/hub.ts';
import { summary, type Figure } from './report.ts';

export async function completionFigures(o: { jobs: number }): Promise<Figure[]> {
  const h = await startTestHub({ PAPRIKA_LOG_LEVEL: 'silent' });
  const agent = await startSimAgent(h.url, 4, { heartbeatS: 15 });
  // attemptTimeoutMs 5 s leaves no room for a 25 s long poll: that client polls with backoff.
  const longPoll = createClient({ url: h.url });
  const polling = createClient({ url: h.url, attemptTimeoutMs: 5000 });
  const overhead = async (client: PaprikaClient, i: number) => {
    const ms = 300 + ((i * 397) % 800);
    const t = performance.now();
    const job = await client.run({ kind: 'sleep', spec: { ms } });
    if (job.status !== 'succeeded') throw new Error(`completion bench: job ${job.status}`);
    return performance.now() - t - ms;
  };
  const lp: number[] = [];
  const bp: number[] = [];
  try {
    for (let i = 0; i < o.jobs; i++) {
      lp.push(await overhead(longPoll, i));
      bp.push(await overhead(polling, i));
    }
  } finally {
    await agent.stop();
    await h.stop();
  }
  const [a, b] = [summary(lp), summary(bp)];
  return [
    { name: 'completion: run() overhead over the job, p50', unit: 'ms', paprika: a.p50, peer: b.p50, peerName: 'backoff polling (50 ms × 1.5, ≤ 1 s)', higherIsBetter: false, extra: { jobs: o.jobs, long_poll: a, polling: b } },
  ];
}
