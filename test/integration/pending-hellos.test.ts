// Sockets on the worker-link path that have not said hello are bounded, per source address
// (PAPRIKA_LINK_PENDING_PER_IP) and on the hub (PAPRIKA_LINK_PENDING_MAX). Without the bound,
// anyone who could reach the path held thousands of them, each able to make the hub buffer a
// 1 MB frame for 10 s. A full bound cuts the oldest silent socket instead of turning the
// newcomer away: refusing let a flood of silent sockets keep every worker behind nginx off the
// fleet (one source for all). Only sockets whose hello is being checked are never cut.
import { randomBytes } from 'node:crypto';
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

/** A socket that upgrades and then says nothing; `closed` resolves when the hub cuts it. */
async function silentSocket(hubUrl: string, workerId: string, localAddress: string) {
  const [attempt] = opened([await tryLink(hubUrl, workerId, localAddress)]);
  if (!attempt) throw new Error('upgrade refused');
  const { ws } = attempt;
  const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
  return { ws, closed, isOpen: () => ws.readyState === WebSocket.OPEN };
}

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

  it('past the per-address and hub bounds the oldest silent sockets are cut, so a flood never keeps a worker off; a linked worker works on', async () => {
    const before = hub.hub.localLinks.get(linked.workerId);
    const fromOne = [];
    for (let i = 0; i < 12; i++) fromOne.push(await silentSocket(hub.url, `w-wait-a${i}`, '127.0.0.1'));
    sockets.push(...fromOne.map((s) => s.ws));
    // Each newcomer past four from this address cut the oldest: the first eight are gone.
    await Promise.all(fromOne.slice(0, 8).map((s) => s.closed));
    expect(fromOne.map((s) => s.isOpen())).toEqual([...Array(8).fill(false), ...Array(4).fill(true)]);
    expect(hub.hub.links.waitingForHello).toBe(4);

    // Another address: two fit the hub's six, then each newcomer cuts the oldest silent socket of any address.
    const fromTwo = [];
    for (let i = 0; i < 4; i++) fromTwo.push(await silentSocket(hub.url, `w-wait-b${i}`, '127.0.0.2'));
    sockets.push(...fromTwo.map((s) => s.ws));
    await Promise.all(fromOne.slice(8, 10).map((s) => s.closed));
    expect(fromTwo.every((s) => s.isOpen())).toBe(true);
    expect(hub.hub.links.waitingForHello).toBe(6);
    expect((await fetch(`${hub.url}/healthz`)).status).toBe(200);

    // A stranger keeps the bound full (every socket cut is opened again), and a worker still links.
    let flooding = true;
    let opened = 0;
    const flood = async () => {
      while (flooding && opened < 300) {
        opened++;
        const s = await silentSocket(hub.url, `w-flood-${opened}`, '127.0.0.1').catch(() => undefined);
        if (s) {
          sockets.push(s.ws);
          if (!flooding) s.ws.terminate();
          await s.closed;
        }
      }
    };
    const floods = [flood(), flood(), flood(), flood()];
    const { log } = capturedLog();
    const t0 = Date.now();
    const worker = await startSimAgent(hub.url, 1, { log, lanIp: '127.0.0.1' });
    flooding = false;
    console.log(`a worker linked ${Date.now() - t0} ms into a flood of silent sockets (${opened} opened so far)`);
    expect(hub.hub.localLinks.get(worker.workerId)?.open).toBe(true);
    for (const ws of sockets.splice(0)) ws.terminate();
    await Promise.all(floods);
    await waitFor('no socket left waiting', async () => hub.hub.links.waitingForHello === 0, 5000, 10);

    // The worker linked before the flood is the same link and still takes work.
    expect(hub.hub.localLinks.get(linked.workerId)).toBe(before);
    const job = await fetch(`${hub.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'sleep', spec: { ms: 10 } }) }).then(json);
    expect(['running', 'queued']).toContain(job.status);
    const metrics = await fetch(`${hub.url}/metrics`).then((r) => r.text());
    expect(Number(/paprika_link_hello_sockets_total\{outcome="evicted"\} (\d+)/.exec(metrics)?.[1] ?? 0)).toBeGreaterThanOrEqual(10);
    await worker.stop();
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

  it('keeps its slot until it is gone or a newcomer needs it, and is cut a second after its close even if it never answers it', async () => {
    const secret = await enrollRaw(hub.url, 'w-badproof');
    const bad = await Promise.all([0, 1].map(() => openRawLink(hub.url, 'w-badproof')));
    const cut = bad.map(({ ws }) => new Promise<void>((resolve) => ws.once('close', () => resolve())));
    for (const { ws, nonce } of bad) {
      ws.send(provenHello('w-badproof', `${secret}x`, nonce));
      // Never reads the hub's close frame, so never answers it (ws would wait 30 s for the answer).
      (ws as unknown as { _socket: { pause(): void } })._socket.pause();
    }
    await waitFor('both hellos refused', async () => lines.filter((l) => l.msg === 'link refused: the hello did not prove the worker id').length >= 2, 5000, 10);
    // Refused, their sockets still open: they still hold their slots.
    expect(hub.hub.links.waitingForHello).toBe(2);
    // A newcomer takes the slot of a socket being closed (before any silent one).
    const third = await tryLink(hub.url, 'w-badproof-3', '127.0.0.1');
    expect(third.status).toBe(101);
    expect(hub.hub.links.waitingForHello).toBe(2);
    // The other refused socket is cut by the hub within the grace: its slot comes back.
    await waitFor('the refused sockets gone', async () => hub.hub.links.waitingForHello === 1, 5000, 10);
    for (const t of opened([third])) t.ws.terminate();
    await waitFor('no socket left waiting', async () => hub.hub.links.waitingForHello === 0, 5000, 10);
    for (const { ws } of bad) {
      (ws as unknown as { _socket: { resume(): void } })._socket.resume();
      ws.terminate();
    }
    await Promise.all(cut);
  });
});

describe('a holder of one credential sending hello after hello for its own id', () => {
  let hub: TestHub;
  const { log, lines } = capturedLog();
  const sockets: WebSocket[] = [];
  beforeAll(async () => {
    hub = await startTestHub({ PAPRIKA_LINK_PENDING_MAX: '2', PAPRIKA_LINK_PENDING_PER_IP: '2' }, { logger: log });
  });
  afterAll(async () => {
    for (const ws of sockets) ws.terminate();
    await hub?.stop();
  });

  /** A link socket that never answers pings (its current link looks alive to no one), hello sent with its own `instance`. */
  async function hogHello(secret: string, instance: string) {
    const ws = new WebSocket(`${hub.url.replace('http', 'ws')}/workers/w-hog/link`, { autoPong: false });
    sockets.push(ws);
    const frames: any[] = [];
    ws.on('message', (m) => frames.push(JSON.parse(String(m))));
    ws.on('error', () => {});
    const challenge = await waitFor('challenge', async () => frames.find((f) => f.type === 'challenge'), 5000, 5);
    ws.send(provenHello('w-hog', secret, challenge.nonce, { instance }));
    return { ws, frames };
  }

  it('holds no slot past its proof and one take-over check at a time: a worker links meanwhile, refused nowhere', async () => {
    const secret = await enrollRaw(hub.url, 'w-hog');
    const first = await hogHello(secret, randomBytes(16).toString('hex'));
    await waitFor('the hog linked', async () => first.frames.some((f) => f.type === 'welcome'), 5000, 10);
    // More agents claim the id; its link never answers the hub's ping, so one check waits 2 s.
    await Promise.all([1, 2, 3].map(() => hogHello(secret, randomBytes(16).toString('hex'))));
    // (Two slots: the third newcomer cut the oldest silent socket, one of the other two.)
    await waitFor('a second take-over check refused', async () => lines.some((l) => l.msg === 'link refused: a take-over of this worker id is already being checked'), 5000, 10);
    // While the one check waits for its ping, the slots are free: a worker links at its first try.
    expect(hub.hub.links.waitingForHello).toBe(0);
    const agent = await startSimAgent(hub.url, 1);
    expect(hub.hub.localLinks.get(agent.workerId)?.open).toBe(true);
    const metrics = await fetch(`${hub.url}/metrics`).then((r) => r.text());
    expect(metrics).not.toMatch(/paprika_link_hello_sockets_total\{outcome="refused"\} [1-9]/);
    await agent.stop();
  });
});
