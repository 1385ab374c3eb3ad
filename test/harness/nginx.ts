// Real nginx (Debian's) in front of several hubs, with the config `paprika nginx-conf` prints,
// run in the foreground from a temp prefix on a free loopback port.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { nginxConf } from '../../launcher/nginx-conf.ts';
import { freePort, waitFor } from './processes.ts';

export const NGINX_BIN = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => fs.existsSync(p));

export interface Nginx {
  url: string;
  port: number;
  readonly child: ChildProcess;
  /** Kill nginx outright (every proxied link drops) and start it again on the same port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startNginx(hubs: string[], opts: { port?: number } = {}): Promise<Nginx> {
  if (!NGINX_BIN) throw new Error('nginx is not installed (apt-get install nginx)');
  const nginxBin = NGINX_BIN;
  const port = opts.port ?? (await freePort());
  const prefix = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-nginx-'));
  const conf = path.join(prefix, 'nginx.conf');
  // As root, nginx's workers would drop to `nobody` and could not use the 0700 temp prefix.
  const user = process.getuid?.() === 0 ? 'user root;\n' : '';
  fs.writeFileSync(conf, user + nginxConf({ hubs, listen: `127.0.0.1:${port}` }, { standalone: true, prefix }));
  const url = `http://127.0.0.1:${port}`;
  let child: ChildProcess;
  let exited: Promise<void>;

  const launch = async () => {
    const c = spawn(nginxBin, ['-p', prefix, '-c', conf, '-e', path.join(prefix, 'error.log')], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = c;
    let out = '';
    c.stderr!.on('data', (d) => (out += d));
    exited = new Promise<void>((r) => c.on('exit', () => r()));
    await waitFor(`nginx on ${port}`, async () => {
      if (c.exitCode !== null) throw new Error(`nginx exited: ${out}`);
      return (await fetch(`${url}/healthz`).catch(() => undefined))?.status !== undefined;
    }, 10_000);
  };
  const halt = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    const t = setTimeout(() => child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(t);
  };

  await launch();
  return {
    url,
    port,
    get child() {
      return child;
    },
    async restart() {
      // nginx's worker processes die with the master when it is killed with SIGKILL only
      // after they notice; SIGTERM is nginx's "fast shutdown": connections are closed at once.
      await halt('SIGTERM');
      await launch();
    },
    async stop() {
      await halt('SIGQUIT');
      fs.rmSync(prefix, { recursive: true, force: true });
    },
  };
}
