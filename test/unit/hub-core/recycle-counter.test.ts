import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../../hub-core/src/hub/metrics.ts';
import { RecycleCounter } from '../../../hub-core/src/hub/recycle-counter.ts';

async function counts(metrics: ReturnType<typeof createMetrics>) {
  const m = await metrics.laneRecycles.get();
  return Object.fromEntries(m.values.map((v) => [v.labels.reason, v.value]));
}

describe('RecycleCounter', () => {
  it('counts growth per worker: from zero for a fresh agent, from a baseline for one met mid-life, all of it after an unseen restart', async () => {
    const metrics = createMetrics();
    const c = new RecycleCounter(metrics);
    c.hello('w1', true);
    c.report('w1', { jobs: 2, rss: 0, crash: 1 });
    c.report('w1', { jobs: 3, rss: 0, crash: 1 });
    c.hello('w2', false); // re-linked from another hub: its past is not ours to count
    c.report('w2', { jobs: 50, rss: 5, crash: 5 });
    c.report('w2', { jobs: 51, rss: 5, crash: 5 });
    c.report('w1', { jobs: 1, rss: 0, crash: 0 }); // smaller: the agent restarted
    c.report('w1', undefined);
    expect(await counts(metrics)).toEqual({ jobs: 5, crash: 1 });
  });
});
