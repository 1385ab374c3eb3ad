// `paprika hub` flags as an operator types them: --port 0 takes a free port and names it in
// the hub id and URL peers forward to; a bad --port is refused with a message naming the flag.
import { spawn } from 'node:child_process';
import net from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PAPRIKA_BIN } from '../harness/agents.ts';
import { freePort, waitFor } from '../harness/processes.ts';
import { json } from '../harness/http.ts';

function run(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [PAPRIKA_BIN, ...args], { env: { ...process.env, PAPRIKA_LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

describe('paprika hub flags', () => {
  it('--port 0 listens on a free port and advertises that port in its id and URL', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-cli-'));
    const hub = run(['hub', '--port', '0'], { PAPRIKA_DATA_DIR: dataDir, DATABASE_URL: '', REDIS_URL: '', PAPRIKA_HUB_ID: '', PAPRIKA_HUB_URL: '', PAPRIKA_LOG_LEVEL: 'info' });
    try {
      const line = await waitFor('listening line', async () => /listening on (http:\/\/127\.0\.0\.1:(\d+))/.exec(hub.output()) ?? undefined, 30_000, 50);
      const [, url, port] = line;
      expect(Number(port)).toBeGreaterThan(0);
      const health = await fetch(`${url}/healthz`).then(json);
      expect(health.hub_id).toBe(`hub-${os.hostname()}-${port}`);
      const hubs = (await fetch(`${url}/admin/hubs`).then(json)).hubs;
      expect(hubs.find((h: any) => h.local)).toMatchObject({ hub_id: health.hub_id, url });
    } finally {
      hub.child.kill('SIGTERM');
      expect(await hub.exited).toBe(0);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
    // A graceful stop says so at both ends (a crash says nothing).
    expect(hub.output()).toMatch(/"msg":"hub stopping: new jobs refused, links closing"[\s\S]*"msg":"hub stopped"/);
  });

  it.each([
    ['hub', /^usage: paprika hub \[--port N\]/],
    ['worker', /^usage: paprika worker --hub URL[\s\S]*--data-dir DIR[\s\S]*--lanes M +Chrome lanes.*\(default 2[\s\S]*--chrome PATH +the Chrome[\s\S]*--shared-chrome/],
    ['demo', /^usage: paprika demo \[--simulate\]/],
    ['nginx-conf', /^usage: paprika nginx-conf --hub HOST:PORT/],
  ])('paprika %s --help prints its usage and exits 0, starting nothing', async (command, usage) => {
    const p = run([command, '--help'], { PAPRIKA_PORT: '1' }); // a hub or demo that did start would fail on port 1
    expect(await p.exited).toBe(0);
    expect(p.output()).toMatch(usage);
  });

  it("the worker agent's own entry (what the single-file bundle runs) answers --help like paprika worker --help", async () => {
    // From the sources as they are (paprika/wire resolves to them, not to a dist/ built earlier).
    const child = spawn(process.execPath, ['--conditions=paprika-source', '--import', 'tsx', path.resolve('worker-agent/src/main.ts'), '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(0);
    expect(out).toMatch(/^usage: paprika worker --hub URL[\s\S]*--view-port N/);
  });

  it.each([['abc'], ['70000'], ['1.5'], [''], ['0x10']])('refuses --port %j with exit 2 and a message naming --port', async (value) => {
    const hub = run(['hub', '--port', value]);
    expect(await hub.exited).toBe(2);
    expect(hub.output()).toMatch(/--port expects a port number/);
  });
});

describe('paprika hub start-up with unreachable services', () => {
  it('REDIS_URL refusing connections: exits non-zero naming REDIS_URL and the address', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-cli-'));
    const hub = run(['hub', '--port', '0'], { PAPRIKA_DATA_DIR: dataDir, DATABASE_URL: '', REDIS_URL: 'redis://127.0.0.1:1' });
    try {
      expect(await hub.exited).not.toBe(0);
      expect(hub.output()).toMatch(/REDIS_URL: cannot reach Redis at 127\.0\.0\.1:1: connect ECONNREFUSED/);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('DATABASE_URL refusing connections: exits non-zero naming DATABASE_URL, never printing the password', async () => {
    const hub = run(['hub', '--port', '0'], { DATABASE_URL: 'postgres://paprika:s3cret-pw@127.0.0.1:1/paprika', REDIS_URL: '' });
    expect(await hub.exited).not.toBe(0);
    expect(hub.output()).toMatch(/DATABASE_URL: cannot reach Postgres at 127\.0\.0\.1:1/);
    expect(hub.output()).not.toContain('s3cret-pw');
  });

  it('PAPRIKA_DATA_DIR where no directory can be made (/proc): exits naming the variable (it spun at 100 % CPU, deaf to SIGTERM)', async () => {
    const hub = run(['hub', '--port', '0'], { PAPRIKA_DATA_DIR: '/proc/paprika-nope', DATABASE_URL: '', REDIS_URL: '' });
    expect(await hub.exited).not.toBe(0);
    expect(hub.output()).toMatch(/PAPRIKA_DATA_DIR: cannot use \/proc\/paprika-nope for the embedded database: ENOENT/);
  });

  // A Redis that accepts TCP and never answers (a stalled server, a wrong port behind a proxy):
  // the start must neither hang nor ignore a supervisor's SIGTERM.
  async function silentServer() {
    const sockets = new Set<net.Socket>();
    const server = net.createServer((s) => {
      sockets.add(s);
      s.on('error', () => {});
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    const accepted = () => sockets.size > 0;
    return { port, accepted, close: () => (sockets.forEach((s) => s.destroy()), new Promise<void>((r) => server.close(() => r()))) };
  }

  it('REDIS_URL that accepts but never answers: gives up within the bound and names REDIS_URL', async () => {
    const silent = await silentServer();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-cli-'));
    try {
      const hub = run(['hub', '--port', '0'], { PAPRIKA_DATA_DIR: dataDir, DATABASE_URL: '', REDIS_URL: `redis://127.0.0.1:${silent.port}` });
      expect(await hub.exited).not.toBe(0);
      expect(hub.output()).toMatch(new RegExp(`REDIS_URL: cannot reach Redis at 127\\.0\\.0\\.1:${silent.port}: no answer within 10 s`));
    } finally {
      await silent.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('SIGTERM while waiting for a silent Redis stops the start at once, exit 0', async () => {
    const silent = await silentServer();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-cli-'));
    try {
      const hub = run(['hub', '--port', '0'], { PAPRIKA_DATA_DIR: dataDir, DATABASE_URL: '', REDIS_URL: `redis://127.0.0.1:${silent.port}` });
      // The hub opens its embedded PGlite before Redis: on a loaded CI that alone can take 20–30 s.
      await waitFor('the hub to reach the silent Redis', async () => silent.accepted() || undefined, 75_000, 20);
      hub.child.kill('SIGTERM');
      expect(await hub.exited).toBe(0);
      expect(hub.output()).toMatch(/stopped before it finished starting/);
      expect(hub.output()).not.toMatch(/no answer within/);
    } finally {
      await silent.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('paprika demo', () => {
  it('runs, stops on Ctrl-C, and runs again on another port with the same data directory', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-demo-'));
    try {
      for (let round = 0; round < 2; round++) {
        const port = await freePort();
        const demo = run(['demo', '--simulate'], { PAPRIKA_PORT: String(port), PAPRIKA_DATA_DIR: dataDir, DATABASE_URL: '', REDIS_URL: '', PAPRIKA_HUB_ID: '', PAPRIKA_HUB_URL: '' });
        let exited = false;
        void demo.exited.then(() => (exited = true));
        try {
          await waitFor(`demo on port ${port} ready (or exited)`, async () => demo.output().includes('Press Ctrl-C to stop.') || exited, 60_000, 100);
          expect(demo.output()).not.toMatch(/already enrolled/);
          expect(demo.output().match(/example sleep job [0-9a-f-]+: (queued|running|succeeded)/g)).toHaveLength(3);
          expect(demo.output()).toContain(`console:  http://127.0.0.1:${port}/`);
        } finally {
          demo.child.kill('SIGINT');
          expect(await demo.exited).toBe(0);
        }
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 150_000);

  it("reads the worker's variables as paprika worker does: a bad one stops it naming the variable, starting nothing", async () => {
    const demo = run(['demo', '--simulate'], { PAPRIKA_PORT: '1', PAPRIKA_MAX_RESULT_BYTES: 'lots', DATABASE_URL: '', REDIS_URL: '' });
    expect(await demo.exited).toBe(2);
    expect(demo.output()).toMatch(/PAPRIKA_MAX_RESULT_BYTES: expected a whole number/);
  });
});

describe('paprika hub on a data directory or port another process holds', () => {
  it('a second hub on the same embedded database is refused, naming PAPRIKA_DATA_DIR and the holder; a killed hub does not keep the next one out, and its jobs are there', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-cli-'));
    const env = { PAPRIKA_DATA_DIR: dataDir, DATABASE_URL: '', REDIS_URL: '', PAPRIKA_HUB_ID: '', PAPRIKA_HUB_URL: '', PAPRIKA_LOG_LEVEL: 'info' };
    const first = run(['hub', '--port', '0'], env);
    let second: ReturnType<typeof run> | undefined;
    let third: ReturnType<typeof run> | undefined;
    try {
      const [, url] = await waitFor('first hub listening', async () => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(first.output()) ?? undefined, 30_000, 50);
      const posted = await fetch(`${url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'sleep', spec: { ms: 1 } }) });
      expect(posted.status).toBe(201);
      const jobId = (await posted.json()).id;

      // Before the lock, this hub opened the same PGlite directory and a job posted to it was lost.
      second = run(['hub', '--port', '0'], env);
      expect(await second.exited).toBe(2);
      expect(second.output()).toMatch(new RegExp(`PAPRIKA_DATA_DIR: ${dataDir.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: another hub uses this embedded database \\(pid ${first.child.pid}, since `));
      expect(second.output()).not.toMatch(/listening on/);
      expect((await fetch(`${url}/jobs/${jobId}`)).status).toBe(200); // the first hub never noticed

      first.child.kill('SIGKILL');
      await first.exited;
      expect(fs.existsSync(path.join(dataDir, 'db.lock'))).toBe(true); // left behind by the kill
      third = run(['hub', '--port', '0'], env);
      const [, url3] = await waitFor('third hub listening', async () => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(third!.output()) ?? undefined, 30_000, 50);
      expect((await fetch(`${url3}/jobs/${jobId}`).then(json)).id).toBe(jobId);
      third.child.kill('SIGTERM');
      expect(await third.exited).toBe(0);
      expect(fs.existsSync(path.join(dataDir, 'db.lock'))).toBe(false); // a graceful stop gives it back
    } finally {
      first.child.kill('SIGKILL');
      second?.child.kill('SIGKILL'); // a hub that started after all (no lock) must not outlive the test
      third?.child.kill('SIGKILL');
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('a port another process listens on: exits 2 naming PAPRIKA_PORT and --port, and leaves the data directory unlocked', async () => {
    const taken = net.createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = (taken.address() as net.AddressInfo).port;
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-cli-'));
    try {
      const hub = run(['hub', '--port', String(port)], { PAPRIKA_DATA_DIR: dataDir, DATABASE_URL: '', REDIS_URL: '' });
      expect(await hub.exited).toBe(2);
      expect(hub.output()).toMatch(new RegExp(`PAPRIKA_PORT: port ${port} on 127\\.0\\.0\\.1 is already taken by another process .*--port N or PAPRIKA_PORT`));
      expect(fs.existsSync(path.join(dataDir, 'db.lock'))).toBe(false);
    } finally {
      await new Promise<void>((r) => taken.close(() => r()));
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
