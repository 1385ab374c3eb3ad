// The package as a stranger gets it: `npm pack`, installed into an empty project, gives a
// working `paprika` command (the compiled JavaScript, no TypeScript at run time) and an SDK
// that plain Node ESM imports, with types. The installed hub and worker then run a job that the
// installed SDK submits.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../harness/processes.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const run = (cmd: string, args: string[], cwd: string, env: Record<string, string> = {}) =>
  execFileSync(cmd, args, { cwd, env: { ...process.env, PAPRIKA_FROM_SOURCE: '', ...env }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 240_000 });

describe('npm pack → install into an empty project', () => {
  let project: string;
  const children: Array<ReturnType<typeof spawn>> = [];

  beforeAll(async () => {
    project = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-consumer-'));
    // The JavaScript only (the console build is the slow half and is not what this test is
    // about); then pack without lifecycle scripts so the build is not run twice.
    run(process.execPath, ['scripts/build.mjs', '--js'], ROOT);
    const tarball = run('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', project], ROOT).trim().split('\n').pop()!;
    fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', type: 'module', private: true }));
    run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', path.join(project, tarball)], project);
  }, 300_000);

  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    if (project) fs.rmSync(project, { recursive: true, force: true });
  });

  it('ships compiled JavaScript and .d.ts for the SDK, and no TypeScript sources', () => {
    const pkg = path.join(project, 'node_modules/paprika');
    expect(fs.existsSync(path.join(pkg, 'dist/hub-core/client/index.js'))).toBe(true);
    expect(fs.readFileSync(path.join(pkg, 'dist/hub-core/client/index.d.ts'), 'utf8')).toMatch(/export declare function createClient/);
    const files = execFileSync('find', [pkg, '-name', '*.ts', '-not', '-name', '*.d.ts'], { encoding: 'utf8' }).trim();
    expect(files).toBe('');
    expect(fs.existsSync(path.join(project, 'node_modules/tsx'))).toBe(false);
  });

  it('its source maps carry their sources: a stack trace or a debugger finds the TypeScript without it', () => {
    const pkg = path.join(project, 'node_modules/paprika');
    const maps = execFileSync('find', [path.join(pkg, 'dist'), '-name', '*.js.map'], { encoding: 'utf8' }).trim().split('\n');
    expect(maps.length).toBeGreaterThan(100);
    const withoutSources = maps.filter((m) => {
      const map = JSON.parse(fs.readFileSync(m, 'utf8')) as { sources: string[]; sourcesContent?: Array<string | null> };
      return map.sources.some((src, i) => typeof map.sourcesContent?.[i] !== 'string' && !fs.existsSync(path.resolve(path.dirname(m), src)));
    });
    expect(withoutSources).toEqual([]);
    const client = JSON.parse(fs.readFileSync(path.join(pkg, 'dist/hub-core/client/index.js.map'), 'utf8')) as { sourcesContent: string[] };
    expect(client.sourcesContent[0]).toMatch(/export function createClient/);
  });

  it('the installed `paprika --help` answers', () => {
    const out = run(path.join(project, 'node_modules/.bin/paprika'), ['--help'], project);
    expect(out).toMatch(/usage: paprika <command>/);
  });

  it('a TypeScript consumer type-checks against the shipped .d.ts', () => {
    fs.writeFileSync(
      path.join(project, 'check.ts'),
      "import { createClient, type Job } from 'paprika/client';\nconst c = createClient({ url: 'http://127.0.0.1:1' });\nexport const p: Promise<Job> = c.submit({ kind: 'sleep', spec: { ms: 1 } });\n",
    );
    const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
    run(process.execPath, [tsc, '--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--types', 'node', '--typeRoots', path.join(ROOT, 'node_modules/@types'), 'check.ts'], project);
  });

  it('plain node imports paprika/client and runs a job on the installed hub and worker', async () => {
    const bin = path.join(project, 'node_modules/.bin/paprika');
    const env = { ...process.env, PAPRIKA_FROM_SOURCE: '', PAPRIKA_DATA_DIR: path.join(project, '.paprika'), PAPRIKA_LOG_LEVEL: 'warn', DATABASE_URL: '', REDIS_URL: '' };
    const hub = spawn(bin, ['hub', '--port', '0'], { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(hub);
    let out = '';
    hub.stdout!.on('data', (d) => (out += d));
    hub.stderr!.on('data', (d) => (out += d));
    const [, url] = await waitFor('the installed hub to listen', async () => /listening on (http:\/\/\S+?) /.exec(out) ?? undefined, 60_000, 50);
    const worker = spawn(bin, ['worker', '--hub', url, '--simulate-lanes', '1', '--lan-ip', '127.0.0.61'], { cwd: project, env, stdio: 'ignore' });
    children.push(worker);
    fs.writeFileSync(
      path.join(project, 'run.mjs'),
      "import { createClient } from 'paprika/client';\nconst job = await createClient({ url: process.argv[2] }).run({ kind: 'sleep', spec: { ms: 20 } });\nconsole.log(JSON.stringify({ status: job.status, worker_id: job.worker_id }));\n",
    );
    const result = JSON.parse(run(process.execPath, ['run.mjs', url], project).trim());
    expect(result).toEqual({ status: 'succeeded', worker_id: 'w061' });
    hub.kill('SIGTERM');
    worker.kill('SIGTERM');
    await Promise.all([hub, worker].map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.on('exit', r)))));
    expect(hub.exitCode).toBe(0);
  });

  it('`npx paprika hub` stopped by the npx pid (as a supervisor does) stops the hub too', async () => {
    const env = { ...process.env, PAPRIKA_FROM_SOURCE: '', PAPRIKA_DATA_DIR: path.join(project, '.paprika-npx'), PAPRIKA_LOG_LEVEL: 'warn', DATABASE_URL: '', REDIS_URL: '' };
    const npx = spawn('npx', ['--no-install', 'paprika', 'hub', '--port', '0'], { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(npx);
    let out = '';
    npx.stdout!.on('data', (d) => (out += d));
    const [, url] = await waitFor('the hub under npx to listen', async () => /listening on (http:\/\/\S+?) /.exec(out) ?? undefined, 60_000, 50);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    npx.kill('SIGTERM'); // npm exits at once, without passing the signal to the node below it
    await waitFor('the hub to stop', async () => (await fetch(`${url}/healthz`).then(() => false, () => true)) || undefined, 15_000, 100);
  });
});
