// Issue 18, item 4: one id, one agent. Two agents with the same --lan-ip (so the same id, and
// here the same data dir and credential) knocked each other off every ~200 ms, forever. Now
// the second is refused while the first's link answers a ping, and exits naming the id and the
// way out; the first never re-links. A dead link (no pong) is still taken over.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnWorker, type WorkerProcess } from '../harness/agents.ts';
import { json } from '../harness/http.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { waitFor } from '../harness/processes.ts';
import { enrollRaw, openRawLink, provenHello } from '../harness/raw-link.ts';

const A = 'a'.repeat(32);
const B = 'b'.repeat(32);

describe('two agents, one id', () => {
  let hub: TestHub;
  const procs: WorkerProcess[] = [];

  beforeAll(async () => {
    hub = await startTestHub({ PAPRIKA_HEARTBEAT_S: '0.3' });
  });
  afterAll(async () => {
    await Promise.all(procs.map((p) => p.kill()));
    await hub?.stop();
  });

  it('the second agent with the same --lan-ip exits non-zero naming the id and --worker-id; the first keeps its one link', async () => {
    const args = ['--hub', hub.url, '--simulate-lanes', '1', '--lan-ip', '127.0.44.9'];
    const first = spawnWorker(args);
    procs.push(first);
    await waitFor('first linked', async () => hub.hub.localLinks.get('w449') !== undefined, 30_000);
    const firstLink = hub.hub.localLinks.get('w449');
    const second = spawnWorker(args);
    procs.push(second);
    const code = await Promise.race([second.exited, new Promise((r) => setTimeout(() => r('still running after 15 s'), 15_000))]);
    expect(code).toBe(1);
    expect(second.output()).toMatch(/worker id w449 is already linked .* by another running agent/);
    expect(second.output()).toMatch(/--worker-id/);
    // The first never lost its link: the same link object, linked once, never closed.
    expect(hub.hub.localLinks.get('w449')).toBe(firstLink);
    expect(first.output().match(/"msg":"linked"/g)).toHaveLength(1);
    expect(first.output()).not.toMatch(/link closed/);
    const row = (await fetch(`${hub.url}/admin/workers`).then(json)).workers.find((w: any) => w.worker_id === 'w449');
    expect(row.alive).toBe(true);
  }, 60_000);

  it('a hello from another agent process is refused with close code 4409 while the current link answers pings', async () => {
    const secret = await enrollRaw(hub.url, 'w-clash', { lanIp: '127.0.44.20' });
    const one = await openRawLink(hub.url, 'w-clash');
    one.ws.send(provenHello('w-clash', secret, one.nonce, { instance: A }));
    await waitFor('first welcome', async () => one.frames.some((f) => f.type === 'welcome'));
    const two = await openRawLink(hub.url, 'w-clash');
    const closed = new Promise<number>((r) => two.ws.once('close', (c) => r(c)));
    two.ws.send(provenHello('w-clash', secret, two.nonce, { instance: B }));
    expect(await closed).toBe(4409);
    expect(two.frames.find((f) => f.type === 'error')).toMatchObject({ details: { code: 'worker_id_in_use', worker_id: 'w-clash' } });
    expect(one.ws.readyState).toBe(one.ws.OPEN);
    expect(hub.hub.localLinks.get('w-clash')?.instance).toBe(A);

    // The same process re-linking takes over at once (no ping asked).
    const again = await openRawLink(hub.url, 'w-clash');
    again.ws.send(provenHello('w-clash', secret, again.nonce, { instance: A }));
    await waitFor('re-link welcomed', async () => again.frames.some((f) => f.type === 'welcome'));
    await waitFor('old link closed', async () => one.ws.readyState === one.ws.CLOSED);

    // A new process whose predecessor's link is dead (half-open: no pong) takes over.
    (again.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    const fresh = await openRawLink(hub.url, 'w-clash');
    fresh.ws.send(provenHello('w-clash', secret, fresh.nonce, { instance: B }));
    await waitFor('new process welcomed', async () => fresh.frames.some((f) => f.type === 'welcome'), 10_000);
    expect(hub.hub.localLinks.get('w-clash')?.instance).toBe(B);
    for (const l of [again, fresh]) l.ws.terminate();
  });
});
