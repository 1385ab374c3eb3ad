// POST /sessions waits at most ASSIGN_WAIT for a lane, even when the only worker keeps
// refusing session_open (its Chrome cannot open a page, say): then 503 no_free_lane, no lane
// left held, and the worker free for the next job.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encode } from '../../hub-core/src/wire/protocol.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { rawLink } from '../harness/raw-link.ts';
import { json } from '../harness/http.ts';

describe('a worker that refuses every session_open', () => {
  let hub: TestHub;
  beforeAll(async () => {
    hub = await startTestHub({ PAPRIKA_ASSIGN_WAIT_S: '0.5' });
  });
  afterAll(async () => {
    await hub?.stop();
  });

  it('gets the request 503 after ASSIGN_WAIT, not held open for ever', async () => {
    const link = await rawLink(hub.url, 'w-refuser');
    let refusals = 0;
    link.ws.on('message', (m) => {
      const msg = JSON.parse(String(m));
      if (msg.type !== 'session_open') return;
      refusals++;
      link.ws.send(encode({ type: 'session_reply', request_id: msg.request_id, ok: false, error: 'chrome could not open a page' }));
    });
    const res = await fetch(`${hub.url}/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}', signal: AbortSignal.timeout(10_000) }); // a hang guard: unbounded retries never answer
    expect(res.status).toBe(503);
    expect((await res.json()).code).toBe('no_free_lane');
    expect(refusals).toBe(1); // asked once, not again and again for the whole wait
    expect(hub.hub.localLinks.get('w-refuser')?.in_flight).toBe(0);
    link.ws.close();
  });
});
