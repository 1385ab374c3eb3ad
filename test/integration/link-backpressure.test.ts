// The link's frame bounds (link-service.ts) against what a real fleet does: a database stall
// with a lane wall open must not make the hub stop reading (and so stop answering the worker's
// pings), and a hello that proves nothing must not lift the 1 MB pre-hello frame limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openJobStore, type SqlJobStore } from '../../hub-core/src/adapters/sql/sql-job-store.ts';
import type { JobStore } from '../../hub-core/src/ports/job-store.ts';
import { encode } from '../../hub-core/src/wire/protocol.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { waitFor } from '../harness/processes.ts';
import { enrollRaw, openRawLink, provenHello, RAW_CAPS } from '../harness/raw-link.ts';

describe('link frame bounds', () => {
  let h: TestHub;
  let inner: SqlJobStore;
  let stall: Promise<void> | undefined;
  let unstall = () => {};

  beforeAll(async () => {
    inner = await openJobStore({});
    // getJob waits while `stall` is set: a Postgres that hangs (every other call goes through).
    const store = new Proxy(inner, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver);
        if (prop === 'getJob' && typeof v === 'function') return async (...args: unknown[]) => (await stall, v.apply(target, args));
        return v;
      },
    }) as JobStore;
    h = await startTestHub({}, { store });
  });
  afterAll(async () => {
    unstall();
    await h?.stop();
    await inner?.close();
  });

  it('thumbnails are not queued behind a stalled database: the hub keeps reading and answers pings', async () => {
    const secret = await enrollRaw(h.url, 'w-wall-stall');
    const { ws, frames, nonce } = await openRawLink(h.url, 'w-wall-stall');
    ws.send(provenHello('w-wall-stall', secret, nonce, { lan_ip: '127.0.0.1' }));
    await waitFor('welcome', async () => frames.some((f) => f.type === 'welcome'), 5000, 10);
    stall = new Promise<void>((resolve) => (unstall = resolve));
    try {
      // A message that reads the job first now waits for the database, holding the queue.
      ws.send(encode({ type: 'job_started', job_id: '00000000-0000-4000-8000-000000000001', assignment_id: '00000000-0000-4000-8000-000000000002', lane: 0 }));
      // Big enough that the ping below sits behind them in TCP, not in the buffer the hub already read.
      const jpeg = '/9j/'.padEnd(40_000, 'A');
      for (let i = 0; i < 400; i++) ws.send(encode({ type: 'thumb', lane: 0, at: Date.now(), jpeg }));
      const pong = new Promise<boolean>((resolve) => ws.once('pong', () => resolve(true)));
      ws.ping();
      expect(await Promise.race([pong, waitFor('no pong', async () => undefined, 5000, 100).catch(() => false)])).toBe(true);
    } finally {
      unstall();
      stall = undefined;
      ws.close();
    }
  });

  it('a hello without a proof does not lift the 1 MB limit before the hub has checked it', async () => {
    const { ws } = await openRawLink(h.url, 'w-no-proof');
    const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
    ws.send(encode({ type: 'hello', worker_id: 'w-no-proof', capabilities: RAW_CAPS, disk_pct: 5 } as never));
    ws.send('x'.repeat(2 * 1024 * 1024));
    expect(await closed).toBe(1009);
  });
});
