// Requests a hub must refuse without being held or fooled: an Idempotency-Key reused for a
// different request (422, nothing created), a key past PAPRIKA_IDEMPOTENCY_TTL_S (forgotten, a
// new job), and a request body that trickles in (cut after PAPRIKA_BODY_TIMEOUT_S, also when
// the hub already answered 401).
import net from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openJobStore, type SqlJobStore } from '../../hub-core/src/adapters/sql/sql-job-store.ts';
import { startHub, type Hub } from '../../hub-core/src/app/hub.ts';
import { ManualClock } from '../../hub-core/src/ports/clock.ts';
import { json } from '../harness/http.ts';
import { createTestDatabase, requireServices } from '../harness/services.ts';

const TTL_S = 3600;

describe('Idempotency-Key', () => {
  let hub: Hub;
  let store: SqlJobStore;
  const clock = new ManualClock(Date.parse('2026-12-03T10:00:00Z'));

  beforeAll(async () => {
    store = await openJobStore({});
    // No workers and no inline wait: every job stays queued, so only the key decides.
    const env = { PAPRIKA_PORT: '0', PAPRIKA_ASSIGN_WAIT_S: '0', PAPRIKA_IDEMPOTENCY_TTL_S: String(TTL_S), PAPRIKA_LOG_LEVEL: 'silent' };
    hub = await startHub({ env, store, clock, logger: pino({ level: 'silent' }) });
  });
  afterAll(async () => {
    await hub?.stop();
    await store?.close();
  });

  const submit = (key: string, body: unknown) =>
    fetch(`${hub.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify(body) });
  const jobCount = async () => (await store.listJobs({ limit: 1000 })).length;

  it('the same request again returns the first job (200), whatever the key order of its spec', async () => {
    const first = await submit('k-same', { kind: 'sleep', spec: { ms: 5, timeout_s: 9 } });
    expect(first.status).toBe(201);
    const again = await submit('k-same', { spec: { timeout_s: 9, ms: 5 }, kind: 'sleep' });
    expect(again.status).toBe(200);
    expect((await json(again)).id).toBe((await json(first)).id);
  });

  it('a different request under a used key → 422 naming the key and the first job; nothing is created', async () => {
    const first = await json(await submit('k-diff', { kind: 'sleep', spec: { ms: 5 } }));
    const before = await jobCount();
    const res = await submit('k-diff', { kind: 'sleep', spec: { ms: 6 } });
    expect(res.status).toBe(422);
    const body = await json(res);
    expect(body).toMatchObject({ code: 'idempotency_key_reused', details: { idempotency_key: 'k-diff', job_id: first.id } });
    expect(await jobCount()).toBe(before);
  });

  it('a key past its retention window is forgotten: the request makes a new job, the old job stays', async () => {
    const first = await json(await submit('k-old', { kind: 'sleep', spec: { ms: 5 } }));
    clock.advance(TTL_S * 1000 + 1);
    const res = await submit('k-old', { kind: 'sleep', spec: { ms: 7 } });
    expect(res.status).toBe(201);
    const second = await json(res);
    expect(second.id).not.toBe(first.id);
    expect((await store.getJob(first.id))?.spec).toEqual({ ms: 5 });
    // The key now belongs to the new job.
    const again = await submit('k-old', { kind: 'sleep', spec: { ms: 7 } });
    expect(again.status).toBe(200);
    expect((await json(again)).id).toBe(second.id);
  });
});

describe('slow request bodies', () => {
  let hub: Hub;
  let store: SqlJobStore;

  beforeAll(async () => {
    store = await openJobStore({});
    const env = { PAPRIKA_PORT: '0', PAPRIKA_BODY_TIMEOUT_S: '0.5', PAPRIKA_API_TOKEN: 'api-secret', PAPRIKA_BIND: '127.0.0.1', PAPRIKA_LOG_LEVEL: 'silent' };
    hub = await startHub({ env, store, logger: pino({ level: 'silent' }) });
  });
  afterAll(async () => {
    await hub?.stop();
    await store?.close();
  });

  /** Sends the headers and one byte of a 100-byte body, then nothing: resolves with what the hub wrote and when it closed. */
  function trickle(headers: string): Promise<{ answer: string; closed: boolean }> {
    const port = new URL(hub.url).port;
    return new Promise((resolve, reject) => {
      const s = net.connect(Number(port), '127.0.0.1', () => s.write(`POST /jobs HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n${headers}\r\n{`));
      let answer = '';
      s.on('data', (d) => (answer += d));
      s.on('error', reject);
      s.on('close', () => resolve({ answer, closed: true }));
      // Bound: far above the 0.5 s body timeout; the hub must have closed long before.
      setTimeout(() => {
        s.destroy();
        resolve({ answer, closed: false });
      }, 20_000).unref();
    });
  }

  it('a body that stops arriving is answered 408 and the connection closed', async () => {
    const { answer, closed } = await trickle('Authorization: Bearer api-secret\r\n');
    expect(closed).toBe(true);
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(answer).toContain('"code":"request_timeout"');
  });

  it('after an early 401 the connection is closed, not held open for the rest of the body', async () => {
    const { answer, closed } = await trickle('');
    expect(closed).toBe(true);
    expect(answer).toMatch(/^HTTP\/1\.1 401/);
    expect(answer.toLowerCase()).toContain('connection: close');
  });
});

describe('text Postgres cannot store', () => {
  const run = requireServices(['postgres']);
  let hub: Hub;
  let drop = async () => {};

  beforeAll(async () => {
    if (!run) return;
    const db = await createTestDatabase();
    drop = db.drop;
    const env = { PAPRIKA_PORT: '0', PAPRIKA_ASSIGN_WAIT_S: '0', DATABASE_URL: db.url, PAPRIKA_LOG_LEVEL: 'silent' };
    hub = await startHub({ env, logger: pino({ level: 'silent' }) });
  });
  afterAll(async () => {
    await hub?.stop();
    await drop();
  });

  const submit = (body: unknown) => fetch(`${hub.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it.skipIf(!run).each([
    ['a NUL in a fetch url', { kind: 'fetch', spec: { url: 'http://127.0.0.1/a\u0000b' } }, 'spec.url', 'NUL character'],
    ['a lone high surrogate in a typed text', { kind: 'macro', spec: { steps: [{ op: 'goto', url: 'http://127.0.0.1/' }, { op: 'type', selector: '#q', text: 'x\ud800' }] } }, 'spec.steps.1.text', 'lone surrogate'],
    ['a lone low surrogate', { kind: 'macro', spec: { steps: [{ op: 'type', selector: '#q', text: '\udc00y' }] } }, 'spec.steps.0.text', 'lone surrogate'],
  ])('%s → 400 naming the field (not 503), nothing stored', async (_name, body, path, reason) => {
    const res = await submit(body);
    expect(res.status).toBe(400);
    expect(res.headers.get('retry-after')).toBeNull();
    const out = await json(res);
    expect(out.details).toEqual([{ path, message: expect.stringContaining(reason) }]);
    expect(await hub.store.listJobs({ limit: 10 })).toEqual([]);
  });

  it.skipIf(!run)('a paired surrogate (an emoji) is ordinary text and is stored as sent', async () => {
    const res = await submit({ kind: 'macro', spec: { steps: [{ op: 'type', selector: '#q', text: 'hi 🌶' }] } });
    expect(res.status).toBe(201);
    const job = await json(res);
    expect((await hub.store.getJob(job.id))?.spec).toMatchObject({ steps: [{ text: 'hi 🌶' }] });
  });
});
