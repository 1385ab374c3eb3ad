// Sockets on the worker-link path that have not said hello are bounded, per source address
// (PAPRIKA_LINK_PENDING_PER_IP) and on the hub (PAPRIKA_LINK_PENDING_MAX). Without the bound,
// anyone who could reach the path held thousands of them, each able to make the hub buffer a
// 1 MB frame for 10 s. The excess gets a 503 before any upgrade; linked workers never notice,
// and a worker links as soon as the waiting sockets go.
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedLog, startSimAgent, type SimAgent } from '../harness/agents.ts';
import { json } from '../harness/http.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { enrollRaw, openRawLink, provenHello } from '../harness/raw-link.ts';
import { waitFor } from '../harness/processes.ts';

type Attempt = { ws: WebSocket; status: 101 } | { status: number; retryAfter: string | undefined; body: any };

/** One upgrade on the link path from `localAddress`: open (the hub's challenge is on its way), or the refusal with its body. */
function tryLink(hubUrl: string, workerId: string, localAddress: string): Promise<Attempt> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${hubUrl.replace('http', 'ws')}/workers/${workerId}/link`, { localAddress });
    ws.once('open', () => resolve({ ws, status: 101 }));
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], body: JSON.parse(text) }));
    });
    ws.once('error', reject);
  });
}

const opened = (tries: Attempt[]) => tries.filter((t): t is Extract<Attempt, { status: 101 }> => t.status === 101);
const refusedOf = (tries: Attempt[]) => tries.filter((t): t is Exclude<Attempt, { status: 101 }> => t.status !== 101);
const healthy = async (hubUrl: string) => (await fetch(`${hubUrl}/healthz`)).status;

describe('worker-link sockets waiting for their hello', () => {
  let hub: TestHub;
  let linked: SimAgent;
  const sockets: WebSocket[] = [];

  beforeAll(async () => {
    hub = await startTestHub({ PAPRIKA_LINK_PENDING_MAX: '6', PAPRIKA_LINK_PENDING_PER_IP: '4' });
    linked = await startSimAgent(hub.url, 1);
  });
  afterAll(async () => {
    for (const ws of sockets) ws.terminate();
    await linked?.stop();
    await hub?.stop();
  });

  it('past the per-address and hub caps are refused with 503 links_waiting; a linked worker works on; a new one links once they go', async () => {
    const before = hub.hub.localLinks.get(linked.workerId);
    const fromOne = await Promise.all(Array.from({ length: 12 }, (_, i) => tryLink(hub.url, `w-wait-a${i}`, '127.0.0.1')));
    sockets.push(...opened(fromOne).map((t) => t.ws));
    expect(opened(fromOne)).toHaveLength(4);
    expect(refusedOf(fromOne)).toHaveLength(8);
    for (const r of refusedOf(fromOne)) {
      expect(r.status).toBe(503);
      expect(r.retryAfter).toBe('1');
      expect(r.body).toMatchObject({ code: 'links_waiting', details: { scope: 'source', limit: 4, remote: '127.0.0.1' } });
      expect(r.body.error).toMatch(/4 worker links from 127\.0\.0\.1 .*PAPRIKA_LINK_PENDING_PER_IP.* waiting for their hello/);
    }
    expect(await healthy(hub.url)).toBe(200);

    // Another address has room of its own, up to what is left of the hub's six.
    const fromTwo = await Promise.all(Array.from({ length: 4 }, (_, i) => tryLink(hub.url, `w-wait-b${i}`, '127.0.0.2')));
    sockets.push(...opened(fromTwo).map((t) => t.ws));
    expect(opened(fromTwo)).toHaveLength(2);
    for (const r of refusedOf(fromTwo)) expect(r.body).toMatchObject({ code: 'links_waiting', details: { scope: 'hub', limit: 6 } });
    expect(hub.hub.links.waitingForHello).toBe(6);
    expect(await healthy(hub.url)).toBe(200);

    // A real worker enrolls (registration is not a link) and is refused while the hub is full: it retries.
    const { log, lines } = capturedLog();
    const late = startSimAgent(hub.url, 1, { log });
    await waitFor('the late worker refused at least once', async () => lines.some((l) => l.msg === 'link closed; re-linking'), 10_000, 10);

    // The worker linked before the flood is the same link and still takes work.
    expect(hub.hub.localLinks.get(linked.workerId)).toBe(before);
    const job = await fetch(`${hub.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'sleep', spec: { ms: 10 } }) }).then(json);
    expect(job).toMatchObject({ status: 'running', worker_id: linked.workerId });

    // The waiting sockets go: their slots come back and the late worker links.
    for (const ws of sockets.splice(0)) ws.close();
    const agent = await late;
    expect(hub.hub.localLinks.get(agent.workerId)?.open).toBe(true);
    await waitFor('no socket left waiting', async () => hub.hub.links.waitingForHello === 0, 5000, 10);
    expect(await healthy(hub.url)).toBe(200);
    await agent.stop();
  });
});

describe('a socket whose hello is refused', () => {
  let hub: TestHub;
  const { log, lines } = capturedLog();
  beforeAll(async () => {
    hub = await startTestHub({ PAPRIKA_LINK_PENDING_MAX: '2', PAPRIKA_LINK_PENDING_PER_IP: '2' }, { logger: log });
  });
  afterAll(async () => {
    await hub?.stop();
  });

  it('keeps its slot until it is gone, and is cut a second after its close even if it never answers it', async () => {
    const secret = await enrollRaw(hub.url, 'w-badproof');
    const bad = await Promise.all([0, 1].map(() => openRawLink(hub.url, 'w-badproof')));
    for (const { ws, nonce } of bad) {
      ws.send(provenHello('w-badproof', `${secret}x`, nonce));
      // Never reads the hub's close frame, so never answers it (ws would wait 30 s for the answer).
      (ws as unknown as { _socket: { pause(): void } })._socket.pause();
    }
    await waitFor('both hellos refused', async () => lines.filter((l) => l.msg === 'link refused: the hello did not prove the worker id').length >= 2, 5000, 10);
    // Refused, they still hold their slots: a third socket is turned away.
    expect(hub.hub.links.waitingForHello).toBe(2);
    const third = await tryLink(hub.url, 'w-badproof-3', '127.0.0.1');
    expect(third).toMatchObject({ status: 503, body: { code: 'links_waiting' } });
    // Cut by the hub: the slots come back within the grace.
    await waitFor('the refused sockets cut', async () => hub.hub.links.waitingForHello === 0, 5000, 10);
    const fourth = await tryLink(hub.url, 'w-badproof-4', '127.0.0.1');
    expect(opened([fourth])).toHaveLength(1);
    for (const t of opened([fourth])) t.ws.terminate();
    for (const { ws } of bad) ws.terminate();
  });
});
