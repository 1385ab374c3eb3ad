import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { nginxConf, parseNginxFlags } from '../../../launcher/nginx-conf.ts';
import { ROUTE_TABLE } from '../../../hub-core/src/http/route-groups.ts';
import { NGINX_BIN } from '../../harness/nginx.ts';
import { freePort, waitFor } from '../../harness/processes.ts';

describe('paprika nginx-conf', () => {
  it('puts every hub in both upstreams: consistent hash for links, round-robin for the rest', () => {
    const conf = nginxConf(parseNginxFlags(['--hub', '10.0.0.1:8080', '--hub', '10.0.0.2:8080', '--listen', '127.0.0.1:9000']));
    const links = conf.slice(conf.indexOf('upstream paprika_links'), conf.indexOf('upstream paprika_hubs'));
    expect(links).toMatch(/hash \$paprika_worker_id\$arg_hop consistent;/);
    expect(links.match(/server 10\.0\.0\.[12]:8080/g)).toHaveLength(2);
    expect(conf).toMatch(/location ~ \^\/workers\/\(\?<paprika_worker_id>/);
    expect(conf).toMatch(/location ~ \^\/admin\/\(events\|wall\)\$ \{[^}]*Upgrade \$http_upgrade/);
    expect(conf).toMatch(/listen 127\.0\.0\.1:9000;/);
  });

  it.each([
    [[], /--hub HOST:PORT is required/],
    [['--hub', 'nohost'], /--hub expects HOST:PORT/],
    [['--hub', 'a:1', '--listen', 'x'], /--listen expects PORT or ADDR:PORT/],
    [['--hub', 'a:1', '--bogus'], /Unknown option '--bogus'/],
  ])('rejects %j naming the flag', (argv, message) => {
    expect(() => parseNginxFlags(argv as string[])).toThrow(message);
  });
});

// `nginx -t` on what the command prints, with real nginx: the snippet inside an http {} block
// (where conf.d/ files land), the --full output as the whole nginx.conf. Everything nginx writes
// goes under a temp prefix; the pid file, the error log and the temp directories (whose
// built-in defaults are system paths) are pointed there.
const nginxRunnable = Boolean(NGINX_BIN) || process.env.CI === 'true';
if (!nginxRunnable) console.warn('\n!!! SKIPPING nginx -t checks: nginx is not installed !!!\n');

describe.skipIf(!nginxRunnable)('paprika nginx-conf output under nginx -t', () => {
  const flags = ['--hub', '10.0.0.1:8080', '--hub', '10.0.0.2:8080', '--listen', '127.0.0.1:9000'];
  const tempPaths = (dir: string) =>
    ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `${t}_temp_path ${path.join(dir, t)};`).join(' ');

  function nginxTest(conf: string): { status: number | null; output: string } {
    if (!NGINX_BIN) throw new Error('CI=true but nginx is not installed');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-nginx-t-'));
    try {
      const file = path.join(dir, 'nginx.conf');
      fs.writeFileSync(file, conf.replace(/^http \{$/m, `http {\n    ${tempPaths(dir)}`));
      const r = spawnSync(NGINX_BIN, ['-t', '-p', dir, '-c', file, '-e', path.join(dir, 'error.log'), '-g', `pid ${path.join(dir, 'nginx.pid')};`], { encoding: 'utf8', timeout: 10_000 });
      return { status: r.status, output: `${r.stdout}${r.stderr}` };
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  it('--full prints a whole nginx.conf (events {} + http {}) that nginx -t -c accepts', () => {
    const conf = nginxConf(parseNginxFlags([...flags, '--full']));
    expect(conf).toMatch(/^events \{/m);
    expect(conf).toMatch(/^http \{$/m);
    const r = nginxTest(conf);
    expect(r.output).toMatch(/test is successful/);
    expect(r.status).toBe(0);
  });

  it('prints, without --full, a snippet for the http {} context: nginx -t accepts it there and refuses it alone', () => {
    const snippet = nginxConf(parseNginxFlags(flags));
    expect(snippet).not.toMatch(/^\s*(events|http) \{/m);
    expect(snippet).toMatch(/\/etc\/nginx\/conf\.d\/paprika\.conf/);
    const inHttp = nginxTest(`events { worker_connections 64; }\nhttp {\n${snippet}}\n`);
    expect(inHttp.output).toMatch(/test is successful/);
    expect(inHttp.status).toBe(0);
    expect(nginxTest(snippet).status).not.toBe(0);
  });

  // As a user other than root (the outside probe's case): without --dir, nginx's built-in pid,
  // log and temp paths are system paths it may not write; with --dir it runs, writing only there.
  const runuser = ['/usr/sbin/runuser', '/sbin/runuser'].find((p) => fs.existsSync(p));
  it.runIf(process.getuid?.() === 0 && runuser)('--full --dir DIR: an nginx run as nobody starts, answers, and writes only under DIR', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-nginx-dir-'));
    fs.chmodSync(dir, 0o755);
    const own = path.join(dir, 'nginx');
    fs.mkdirSync(own);
    fs.chownSync(own, 65534, 65534);
    const port = await freePort();
    const conf = path.join(dir, 'nginx.conf');
    fs.writeFileSync(conf, nginxConf(parseNginxFlags(['--hub', '127.0.0.1:1', '--listen', `127.0.0.1:${port}`, '--full', '--dir', own])));
    fs.chmodSync(conf, 0o644);
    const asNobody = (args: string[]) => spawnSync(runuser!, ['-u', 'nobody', '--', NGINX_BIN!, ...args], { encoding: 'utf8', timeout: 10_000 });
    try {
      const t = asNobody(['-t', '-e', path.join(own, 'error.log'), '-c', conf]);
      expect(`${t.stdout}${t.stderr}`).toMatch(/test is successful/);
      // The same without --dir fails as nobody: what the flag is for.
      const bare = path.join(dir, 'bare.conf');
      fs.writeFileSync(bare, nginxConf(parseNginxFlags(['--hub', '127.0.0.1:1', '--listen', `127.0.0.1:${port}`, '--full'])));
      fs.chmodSync(bare, 0o644);
      expect(asNobody(['-t', '-e', path.join(own, 'error.log'), '-c', bare]).status).not.toBe(0);
      expect(asNobody(['-e', path.join(own, 'error.log'), '-c', conf]).status).toBe(0); // daemonizes
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(res.status).toBe(502); // nginx answers; no hub behind it
      // nginx writes the log line after the answer: wait for it.
      await waitFor('the access log line', async () => /GET \/healthz/.test(fs.readFileSync(path.join(own, 'access.log'), 'utf8')), 5000, 20);
      expect(fs.readdirSync(own).sort()).toEqual(['access.log', 'body', 'error.log', 'fastcgi', 'nginx.pid', 'proxy', 'scgi', 'uwsgi']);
    } finally {
      const pid = Number(fs.readFileSync(path.join(own, 'nginx.pid'), { encoding: 'utf8', flag: 'a+' }).trim());
      if (pid > 0) process.kill(pid, 'SIGQUIT');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--dir goes with --full only, and takes an absolute path nginx cannot misread', () => {
    expect(parseNginxFlags([...flags, '--full', '--dir', '/var/tmp/px/']).dir).toBe('/var/tmp/px');
    expect(() => parseNginxFlags([...flags, '--dir', '/var/tmp/px'])).toThrow(/--dir goes with --full/);
    for (const bad of ['relative', '/tmp/a;b', '/tmp/a b', '/tmp/{x}']) expect(() => parseNginxFlags([...flags, '--full', '--dir', bad]), bad).toThrow(/--dir expects an absolute path/);
  });

  it('accepts --full among the other flags and rejects a value for it', () => {
    expect(parseNginxFlags([...flags, '--full']).full).toBe(true);
    expect(parseNginxFlags(flags).full).toBe(false);
    expect(() => parseNginxFlags([...flags, '--full=yes'])).toThrow(/--full/);
  });
});

describe('paprika nginx-conf against the route table', () => {
  /** The location nginx picks for a path (exact match, then regexes in order, else the `/` prefix) and whether it passes the upgrade. */
  function locationFor(conf: string, path: string): { name: string; upgrades: boolean } {
    const blocks = [...conf.matchAll(/location (=|~) (\S+) \{([^}]*)\}/g)].map((m) => ({ kind: m[1], pattern: m[2], body: m[3] }));
    const exact = blocks.find((b) => b.kind === '=' && b.pattern === path);
    const regex = blocks.find((b) => b.kind === '~' && new RegExp(b.pattern.replace(/\(\?<(\w+)>/g, '(?<$1>')).test(path));
    const chosen = exact ?? regex;
    if (chosen) return { name: `${chosen.kind} ${chosen.pattern}`, upgrades: /proxy_set_header Upgrade \$http_upgrade;/.test(chosen.body) };
    const root = /location \/ \{([^}]*)\}/.exec(conf)!;
    return { name: '/', upgrades: /proxy_set_header Upgrade \$http_upgrade;/.test(root[1]) };
  }

  it('passes the WebSocket upgrade for every socket route a client or worker reaches through nginx', () => {
    const conf = nginxConf(parseNginxFlags(['--hub', '10.0.0.1:8080', '--hub', '10.0.0.2:8080']));
    const sockets = Object.entries(ROUTE_TABLE).filter(([, r]) => r.ws && r.group !== 'peer'); // peers dial each other's hub URL directly
    expect(sockets.length).toBeGreaterThanOrEqual(5);
    for (const [route] of sockets) {
      const path = route.split(' ')[1].replace(':cdp_id', '0f2c9a1e-5b7d-4c3a-9e8f-1a2b3c4d5e6f').replace(/:\w+/g, 'w1');
      expect({ route, ...locationFor(conf, path) }).toMatchObject({ route, upgrades: true });
    }
  });

  it('deploy/nginx-paprika.conf, the README example, is what the generator prints today', () => {
    const example = fs.readFileSync(path.join(import.meta.dirname, '../../../deploy/nginx-paprika.conf'), 'utf8');
    expect(example).toBe(nginxConf(parseNginxFlags(['--hub', '10.0.0.11:8080', '--hub', '10.0.0.12:8080', '--hub', '10.0.0.13:8080', '--listen', '80'])));
  });
});
