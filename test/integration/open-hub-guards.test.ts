// A hub without tokens (findings 5 and 6): it refuses to listen beyond loopback unless told
// PAPRIKA_INSECURE=1 (and then says so), answers only Host names that are its own (DNS
// rebinding), and refuses state changes and WebSockets from pages of other sites.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAPRIKA_BIN } from '../harness/agents.ts';
import { startSimAgent, type SimAgent } from '../harness/agents.ts';
import { startTestHub, type TestHub } from '../harness/hub.ts';
import { json } from '../harness/http.ts';
import { freePort, spawnHub } from '../harness/processes.ts';

function rawStatus(url: string, method: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, method, path: u.pathname, headers, agent: false });
    req.on('response', (res) => {
      let t = '';
      res.on('data', (d) => (t += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: t }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function upgradeStatus(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers });
    ws.once('open', () => {
      ws.close();
      resolve(101);
    });
    ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.once('error', () => resolve(-1));
  });
}

describe('a hub without tokens, on loopback', () => {
  let h: TestHub;
  let sim: SimAgent;
  beforeAll(async () => {
    h = await startTestHub({});
    sim = await startSimAgent(h.url, 1);
  });
  afterAll(async () => {
    await sim?.stop();
    await h?.stop();
  });

  const runningJob = async () => {
    const job = await fetch(`${h.url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'sleep', spec: { ms: 600_000 } }) }).then(json);
    expect(job.status).toBe('running');
    return job.id as string;
  };
  const statusOf = async (id: string) => (await fetch(`${h.url}/jobs/${id}`).then(json)).status;

  it('ignores a cross-site no-cors POST: the job is not canceled', async () => {
    const id = await runningJob();
    const attempts: Array<Record<string, string>> = [{ origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' }, { origin: 'http://evil.example' }, { 'sec-fetch-site': 'cross-site' }, { origin: 'null' }, { origin: 'http://127.0.0.1:1', 'sec-fetch-site': 'same-site' }];
    for (const headers of attempts) {
      const res = await rawStatus(`${h.url}/jobs/${id}/cancel`, 'POST', { 'content-type': 'text/plain', ...headers }, 'x');
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(JSON.parse(res.body)).toMatchObject({ code: 'cross_site', error: expect.any(String) });
    }
    expect(await statusOf(id)).toBe('running');
    // The hub's own page may: same origin.
    const own = await fetch(`${h.url}/jobs/${id}/cancel`, { method: 'POST', headers: { origin: h.url, 'sec-fetch-site': 'same-origin' } });
    expect(own.status).toBe(200);
    expect(await statusOf(id)).toBe('canceled');
  });

  it('refuses a cross-site WebSocket to the event stream and the worker link', async () => {
    const ws = h.url.replace('http', 'ws');
    expect(await upgradeStatus(`${ws}/admin/events`, { origin: 'http://evil.example' })).toBe(403);
    expect(await upgradeStatus(`${ws}/workers/w1/link`, { origin: 'http://evil.example' })).toBe(403);
    expect(await upgradeStatus(`${ws}/admin/events`, { origin: h.url })).toBe(101);
    expect(await upgradeStatus(`${ws}/admin/events`, {})).toBe(101);
  });

  it('answers 421 to a Host that is not its own (DNS rebinding), before anything runs', async () => {
    const id = await runningJob();
    for (const host of ['attacker.example', 'attacker.example:8080', 'localhost.attacker.example']) {
      const res = await rawStatus(`${h.url}/jobs/${id}/cancel`, 'POST', { host });
      expect(res.status, host).toBe(421);
      expect(JSON.parse(res.body)).toMatchObject({ code: 'misdirected', details: { host } });
      expect((await rawStatus(`${h.url}/admin/workers`, 'GET', { host })).status).toBe(421);
    }
    expect(await upgradeStatus(`${h.url.replace('http', 'ws')}/admin/events`, { host: 'attacker.example' })).toBe(421);
    expect(await statusOf(id)).toBe('running');
    for (const host of ['localhost', `localhost:${h.hub.port}`, `127.0.0.1:${h.hub.port}`, `[::1]:${h.hub.port}`, '10.0.0.5:8080']) {
      expect((await rawStatus(`${h.url}/healthz`, 'GET', { host })).status, host).toBe(200);
    }
    await fetch(`${h.url}/jobs/${id}/cancel`, { method: 'POST' });
  });
});

describe('paprika hub with some tokens unset', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-bind-'));
  });
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  const base = () => ({ PAPRIKA_DATA_DIR: dataDir, DATABASE_URL: '', REDIS_URL: '', PAPRIKA_HUB_ID: '', PAPRIKA_HUB_URL: '', PAPRIKA_API_TOKEN: '', PAPRIKA_WORKER_TOKEN: '', PAPRIKA_PEER_TOKEN: '', PAPRIKA_INSECURE: '', PAPRIKA_BIND: '' });

  it('refuses to listen on 0.0.0.0 with only PAPRIKA_ADMIN_TOKEN, naming the unset variables', async () => {
    const child = spawn(process.execPath, [PAPRIKA_BIN, 'hub', '--port', '0'], { env: { ...process.env, ...base(), PAPRIKA_ADMIN_TOKEN: 'a' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    expect(code).not.toBe(0);
    for (const name of ['PAPRIKA_API_TOKEN', 'PAPRIKA_WORKER_TOKEN', 'PAPRIKA_PEER_TOKEN', 'PAPRIKA_INSECURE', 'PAPRIKA_BIND']) expect(out).toContain(name);
    expect(out).not.toMatch(/listening/);
  }, 30_000);

  it('starts with PAPRIKA_INSECURE=1, warns, and says so in /healthz', async () => {
    const port = await freePort();
    const hub = await spawnHub(port, { ...base(), PAPRIKA_ADMIN_TOKEN: 'a', PAPRIKA_INSECURE: '1', PAPRIKA_BIND: '0.0.0.0' });
    try {
      const health = await fetch(`${hub.url}/healthz`).then(json);
      expect(health).toMatchObject({ status: 'ok', insecure: true });
      expect(health.open_groups.sort()).toEqual(['api', 'peer', 'worker']);
      expect(hub.output()).toMatch(/INSECURE/);
      expect((await fetch(`${hub.url}/admin/workers`)).status).toBe(401);
    } finally {
      await hub.kill('SIGTERM');
    }
  }, 30_000);
});
