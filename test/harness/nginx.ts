// Real nginx (Debian's) in front of several hubs, with the config `paprika nginx-conf` prints,
// run in the foreground from a temp prefix on a free loopback port.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { nginxConf } from '../../hub-core/src/cli/nginx-conf.ts';
import { freePort, waitFor } from './processes.ts';

export const NGINX_BIN = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => fs.existsSync(p));

export interface Nginx {
  url: string;
  port: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

export async function startNginx(hubs: string[]): Promise<Nginx> {
  if (!NGINX_BIN) throw new Error('nginx is not installed (apt-get install nginx)');
  const port = await freePort();
  const prefix = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-nginx-'));
  const conf = path.join(prefix, 'nginx.conf');
  // As root, nginx's workers would drop to `nobody` and could not use the 0700 temp prefix.
  const user = process.getuid?.() === 0 ? 'user root;\n' : '';
  fs.writeFileSync(conf, user + nginxConf({ hubs, listen: `127.0.0.1:${port}` }, { standalone: true, prefix }));
  const child = spawn(NGINX_BIN, ['-p', prefix, '-c', conf, '-e', path.join(prefix, 'error.log')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`nginx on ${port}`, async () => {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${out}`);
    return (await fetch(`${url}/healthz`).catch(() => undefined))?.status !== undefined;
  }, 10_000);
  return {
    url,
    port,
    child,
    async stop() {
      if (child.exitCode === null) child.kill('SIGQUIT');
      const t = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(t);
      fs.rmSync(prefix, { recursive: true, force: true });
    },
  };
}
