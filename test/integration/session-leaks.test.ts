// Sessions that ended or were abandoned while they opened must not keep their lane held on the
// hub (outside probe: an idle_timeout_s of 0.001 on a real Chrome lane, and a client that
// aborted POST /sessions, each left a lane `holder: session` until the worker re-linked).
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { encode } from '../../hub-core/src/wire/protocol.ts';
import { simulatedPool } from '../../worker-agent/src/lanes/simulated-lane.ts';
import { startSimAgent, type SimAgent } from '../harness/agents.ts';
import { json } from '../harness/http.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { rawLink } from '../harness/raw-link.ts';
import { waitFor } from '../harness/wait.ts';

const openSession = (hubUrl: string, body: unknown) => fetch(`${hubUrl}/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('session lanes', () => {
  let hub: TestHub | undefined;
  let agent: SimAgent | undefined;
  afterEach(async () => {
    await agent?.stop();
    await hub?.stop();
    hub = agent = undefined;
  });

  /** A simulated pool whose lanes take `ms` to open a session (a Chrome lane makes a context and a page). */
  function slowSessions(ms: number, lanIp: string) {
    const pool = simulatedPool(1, `sim://${lanIp}`);
    for (const lane of pool.lanes) {
      const open = lane.openSession.bind(lane);
      lane.openSession = async (id: string) => {
        await new Promise((r) => setTimeout(r, ms));
        return open(id);
      };
    }
    return pool;
  }

  it('an idle timeout shorter than the open: the session ends after it opened, and the lane is free on both sides', async () => {
    hub = await startTestHub();
    const lanIp = '127.0.91.1';
    agent = await startSimAgent(hub.url, 1, { lanIp, pool: slowSessions(50, lanIp) });
    const res = await openSession(hub.url, { idle_timeout_s: 0.001 });
    expect(res.status).toBe(201);
    const { session_id } = await json(res);
    await waitFor('the hub frees the lane', async () => hub!.hub.localLinks.get(agent!.workerId)?.in_flight === 0);
    expect(agent.agent.runner.inFlight).toBe(0);
    // Its id is gone everywhere: 404, and a job runs on the lane.
    expect((await fetch(`${hub.url}/sessions/${session_id}/commands`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"op":"ping"}' })).status).toBe(404);
    const job = await json(await openJob(hub.url));
    expect(job.status).toBe('running');
  });

  it("a worker's session_closed that arrives before its open reply (one read): the lane is freed; a command the worker no longer knows answers 404 and frees it too", async () => {
    hub = await startTestHub();
    const link = await rawLink(hub.url, 'w-early-close');
    let mode: 'closed-first' | 'forgets' = 'closed-first';
    link.ws.on('message', (m) => {
      const msg = JSON.parse(String(m));
      if (msg.type === 'session_open' && mode === 'closed-first') {
        // Both frames in one write: the hub reads them in one turn.
        const frames = [encode({ type: 'session_closed', session_id: msg.session_id, reason: 'idle timeout' }), encode({ type: 'session_reply', request_id: msg.request_id, ok: true, result: { lane: 0 } })];
        (link.ws as unknown as { _socket: { cork(): void; uncork(): void } })._socket.cork();
        for (const f of frames) link.ws.send(f);
        (link.ws as unknown as { _socket: { cork(): void; uncork(): void } })._socket.uncork();
      } else if (msg.type === 'session_open') {
        link.ws.send(encode({ type: 'session_reply', request_id: msg.request_id, ok: true, result: { lane: 0 } }));
      } else if (msg.type === 'session_command') {
        link.ws.send(encode({ type: 'session_reply', request_id: msg.request_id, ok: false, error: 'no such session on this worker' }));
      }
    });
    expect((await openSession(hub.url, {})).status).toBe(201);
    await waitFor('lane freed', async () => hub!.hub.localLinks.get('w-early-close')?.in_flight === 0);

    mode = 'forgets';
    const { session_id } = await json(await openSession(hub.url, {}));
    expect(hub.hub.localLinks.get('w-early-close')?.in_flight).toBe(1);
    const ping = await fetch(`${hub.url}/sessions/${session_id}/commands`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"op":"ping"}' });
    expect(ping.status).toBe(404);
    expect(hub.hub.localLinks.get('w-early-close')?.in_flight).toBe(0);

    // A heartbeat that lists the session keeps it; one whose lanes hold none frees it.
    const beat = (sessionId: string | null, cpu: number) => link.ws.send(encode({ type: 'heartbeat', in_flight: sessionId ? 1 : 0, cpu_pct: cpu, mem_pct: 1, disk_pct: 5, lanes: [{ index: 0, view_url: null, busy: Boolean(sessionId), job_id: null, session_id: sessionId, cdp_id: null }] }));
    const second = await json(await openSession(hub.url, {}));
    beat(second.session_id, 42);
    await waitFor('the heartbeat heard', async () => hub!.hub.localLinks.get('w-early-close')!.cpu_pct === 42);
    expect(hub.hub.sessions.count).toBe(1);
    beat(null, 43);
    await waitFor('the lane freed by the heartbeat', async () => hub!.hub.localLinks.get('w-early-close')?.in_flight === 0 && hub!.hub.sessions.count === 0);
    link.ws.close();
  });

  it('a client that leaves before POST /sessions answers: the session it never learned is closed, its lane free', async () => {
    hub = await startTestHub();
    const lanIp = '127.0.91.2';
    agent = await startSimAgent(hub.url, 1, { lanIp, pool: slowSessions(300, lanIp) });
    const url = new URL(`${hub.url}/sessions`);
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': 'application/json' } });
    req.on('error', () => {});
    req.end(JSON.stringify({ idle_timeout_s: 86_400 }));
    // Gone while the lane opens its session.
    await waitFor('the lane is opening a session', async () => agent!.agent.runner.inFlight === 1);
    req.destroy();
    await waitFor('the session is closed and the lane free on both sides', async () => hub!.hub.localLinks.get(agent!.workerId)?.in_flight === 0 && agent!.agent.runner.inFlight === 0 && hub!.hub.sessions.count === 0);
    const job = await json(await openJob(hub.url));
    expect(job.status).toBe('running');
  });
});

function openJob(hubUrl: string) {
  return fetch(`${hubUrl}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'sleep', spec: { ms: 10 } }) });
}
