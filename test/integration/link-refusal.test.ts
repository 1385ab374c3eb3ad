// A link refused in plain HTTP (a hub whose worker token changed, a full or stopping hub): the
// agent says what the hub answered and what to change, instead of only "link closed".
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WorkerAgent } from '../../worker-agent/src/agent.ts';
import { simulatedPool } from '../../worker-agent/src/lanes/simulated-lane.ts';
import { describeRefusal, readRefusal } from '../../worker-agent/src/link-refusal.ts';
import { capturedLog, nextLanIp, startSimAgent } from '../harness/agents.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { waitFor } from '../harness/wait.ts';

describe('a refused link upgrade', () => {
  let hub: TestHub | undefined;
  let agent: WorkerAgent | undefined;
  let dataDir: string | undefined;
  afterEach(async () => {
    await agent?.stop(0);
    await hub?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    hub = agent = dataDir = undefined;
  });

  it('with a worker token the hub no longer takes: logged at error level, naming the token, and re-tried', async () => {
    hub = await startTestHub({ PAPRIKA_WORKER_TOKEN: 'token-now', PAPRIKA_BIND: '127.0.0.1' });
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-refusal-'));
    const lanIp = nextLanIp();
    // Enrolled with the right token: its credential is on disk, so the next start links at once.
    const first = await startSimAgent(hub.url, 1, { token: 'token-now', lanIp, dataDir });
    await first.stop();

    const { log, lines } = capturedLog();
    agent = new WorkerAgent({ hubUrl: hub.url, pool: simulatedPool(1, `sim://${lanIp}`), lanIp, dataDir, token: 'token-before', heartbeatS: 0.5, diskMaxPct: 100, log, backoff: { baseMs: 20, capMs: 50 } });
    void agent.linked.catch(() => undefined);
    await agent.start();
    const refusals = await waitFor('two refusals logged', async () => {
      const found = lines.filter((l) => l.msg.startsWith('the hub refused the link: 401 unauthorized'));
      return found.length >= 2 && found;
    });
    expect(refusals[0]).toMatchObject({ level: 50, status: 401, code: 'unauthorized' });
    expect(refusals[0]!.msg).toContain('PAPRIKA_WORKER_TOKEN');
    expect(lines.filter((l) => l.msg === 'link closed; re-linking')).toHaveLength(0);
    // It never linked.
    let linked = false;
    void agent.linked.then(() => (linked = true));
    await Promise.resolve();
    expect(linked).toBe(false);
  });

  it('reads the hub error body, bounded: a 503 links_waiting, a body too large, and one that is not JSON', async () => {
    const bodies = [JSON.stringify({ error: '64 worker links … retry shortly', code: 'links_waiting', details: {} }), `{"code":"x","error":"${'y'.repeat(10_000)}"}`, '<html>bad gateway</html>'];
    let n = 0;
    const server = http.createServer((_req, res) => {
      res.writeHead(n === 2 ? 502 : 503, { 'content-type': 'application/json' });
      res.end(bodies[n++]);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    try {
      const get = () => new Promise<http.IncomingMessage>((resolve, reject) => http.get(url, resolve).on('error', reject));
      const waiting = await readRefusal(await get());
      expect(waiting).toEqual({ status: 503, code: 'links_waiting', error: '64 worker links … retry shortly' });
      expect(describeRefusal(waiting)).toMatch(/^the hub refused the link: 503 links_waiting \(64 worker links … retry shortly\); .* Re-linking$/);
      // Cut at 4 KB: not JSON any more, so only the status is kept.
      expect(await readRefusal(await get())).toEqual({ status: 503, code: undefined, error: undefined });
      const proxy = await readRefusal(await get());
      expect(proxy).toEqual({ status: 502, code: undefined, error: undefined });
      expect(describeRefusal(proxy)).toBe('the hub refused the link: 502. Re-linking');
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
