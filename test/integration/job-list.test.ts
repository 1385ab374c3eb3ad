// Reading stays cheap: GET /jobs lists summaries (no spec, no result: a result can be
// megabytes, and a page of them made 120 MB answers and a 500), newest first, in pages joined
// by a cursor that neither skips nor repeats a job, even among jobs created in the same
// millisecond. GET /jobs/:id still has everything.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../harness/http.ts';
import { realBackends, startTestHub, type TestHub } from '../harness/hub.ts';
import { requireServices } from '../harness/services.ts';

const run = requireServices(['postgres', 'redis']);
const BIG = 'x'.repeat(300_000);

describe.skipIf(!run)('GET /jobs on Postgres', () => {
  let hub: TestHub;
  let drop = async () => {};
  const ids: string[] = [];

  beforeAll(async () => {
    const b = await realBackends();
    drop = b.drop;
    hub = await startTestHub(b.env);
    const store = hub.hub.store;
    const t0 = Date.parse('2026-12-03T10:00:00Z');
    // 25 jobs, three to a millisecond: page boundaries fall inside ties.
    for (let i = 0; i < 25; i++) {
      const id = randomUUID();
      ids.push(id);
      const now = new Date(t0 + Math.floor(i / 3));
      await store.insertRunningJob({ id, kind: 'fetch', spec: { url: `http://127.0.0.1/${i}`, note: BIG }, hubId: 'h', idempotencyKey: null, now }, { workerId: 'w1', hubId: 'h', lane: 0, assignmentId: `a-${i}`, novncUrl: null, now, deadlineAt: new Date(t0 + 60_000) });
      await store.finishJob(id, { assignmentId: `a-${i}`, workerId: 'w1', status: 'succeeded', result: { html: BIG }, error: null, now });
    }
  }, 60_000);
  afterAll(async () => {
    await hub?.stop();
    await drop();
  });

  const list = (q: string) => fetch(`${hub.url}/jobs?${q}`);

  it('lists summaries: no spec, no result, no assignment id', async () => {
    const res = await list('limit=25');
    const text = await res.text();
    expect(text.length).toBeLessThan(25 * 1000);
    const page = JSON.parse(text);
    expect(page.jobs).toHaveLength(25);
    for (const j of page.jobs) {
      expect(Object.keys(j)).not.toContain('spec');
      expect(Object.keys(j)).not.toContain('result');
      expect(j.session_id).toBeNull();
    }
    const full = await fetch(`${hub.url}/jobs/${ids[0]}`).then(json);
    expect(full.result.html).toHaveLength(BIG.length);
    expect(full.spec.url).toBe('http://127.0.0.1/0');
  });

  it('pages newest first with a cursor, every job exactly once, across ties', async () => {
    const seen: string[] = [];
    let before: string | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const page: { jobs: Array<{ id: string }>; next_cursor: string | null } = await list(`limit=4${before ? `&before=${before}` : ''}`).then(json);
      seen.push(...page.jobs.map((j) => j.id));
      before = page.next_cursor;
      if (!before) break;
    }
    expect(before).toBeNull();
    expect(seen).toHaveLength(25);
    expect(new Set(seen).size).toBe(25);
    // Newest first: the last inserted millisecond comes first.
    expect(seen.slice(0, 1)).toEqual([ids[24]]);
    expect(seen.at(-1) === ids[0] || seen.at(-1) === ids[1] || seen.at(-1) === ids[2]).toBe(true);
  });

  it('filters by status with the same paging, and refuses a cursor it did not make', async () => {
    const page = await list('status=succeeded&limit=30').then(json);
    expect(page.jobs).toHaveLength(25);
    expect(page.next_cursor).toBeNull();
    expect((await list('status=queued').then(json)).jobs).toEqual([]);
    for (const bad of ['nonsense', Buffer.from('2026-12-03T10:00:00.000Z|not-a-uuid').toString('base64url'), Buffer.from('yesterday|' + randomUUID()).toString('base64url')]) {
      const res = await list(`before=${bad}`);
      expect(res.status).toBe(400);
      expect((await res.json()).details).toEqual([{ path: 'before', message: expect.stringContaining('next_cursor') }]);
    }
  });
});
