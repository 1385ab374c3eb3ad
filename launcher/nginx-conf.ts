// `paprika nginx-conf`: the seed's two routing rules for several hubs behind nginx.
// Rule 1: /workers/{id}/link and a worker's CDP tunnels → always the same hub for a worker id
// (consistent hash, upgrade). Rule 2: everything else → round-robin. The console's sockets
// (/admin/events, /admin/wall) and /cdp upgrade too.
// By default it prints what goes inside nginx's `http {}` block (a file in conf.d/, which the
// stock nginx.conf includes there); `--full` prints a whole nginx.conf for `nginx -c FILE`.
import { parseArgs } from 'node:util';

export interface NginxFlags {
  hubs: string[];
  /** `PORT` (all interfaces) or `ADDR:PORT`. */
  listen: string;
  /** A whole nginx.conf (events {} + http { … }) instead of the http-context snippet. */
  full?: boolean;
  /** With --full: where nginx writes its pid, logs and temp files (a non-root nginx). */
  dir?: string;
}

export const NGINX_USAGE = "usage: paprika nginx-conf --hub HOST:PORT [--hub HOST:PORT ...] [--listen [ADDR:]PORT] [--full [--dir DIR]]\n  --dir DIR  with --full: nginx's pid file, error and access logs and temp files go under DIR (an absolute path), for an nginx run by a user other than root";

export function parseNginxFlags(argv: string[]): NginxFlags {
  let values;
  try {
    ({ values } = parseArgs({ args: argv, strict: true, options: { hub: { type: 'string', multiple: true }, listen: { type: 'string' }, full: { type: 'boolean' }, dir: { type: 'string' } } }));
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${NGINX_USAGE}`);
  }
  const hubs = values.hub ?? [];
  if (hubs.length === 0) throw new Error('--hub HOST:PORT is required at least once');
  for (const h of hubs) if (!/^[A-Za-z0-9.-]+:\d{1,5}$|^\[[0-9a-fA-F:]+\]:\d{1,5}$/.test(h)) throw new Error(`--hub expects HOST:PORT, got ${JSON.stringify(h)}`);
  const listen = values.listen ?? '8080';
  const m = /^(?:([0-9.]+|\[[0-9a-fA-F:]+\]):)?(\d{1,5})$/.exec(listen);
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) throw new Error(`--listen expects PORT or ADDR:PORT, got ${JSON.stringify(values.listen)}`);
  const dir = values.dir;
  if (dir !== undefined) {
    if (!values.full) throw new Error('--dir goes with --full (the http {} snippet leaves those paths to the nginx.conf that includes it)');
    // Written into the config as is: a path that could end a directive or open a block is refused.
    if (!/^\/[A-Za-z0-9._\/-]*$/.test(dir)) throw new Error(`--dir expects an absolute path of letters, digits, '.', '_', '-' and '/', got ${JSON.stringify(dir)}`);
  }
  return { hubs, listen, full: values.full ?? false, ...(dir !== undefined ? { dir: dir.replace(/\/+$/, '') || '/' } : {}) };
}

export function nginxConf(f: NginxFlags, opts: { standalone?: boolean; pidFile?: string; prefix?: string } = {}): string {
  const servers = (params: string) => f.hubs.map((h) => `    server ${h} ${params};`).join('\n');
  const body = `map $http_upgrade $connection_upgrade {
    default upgrade;
    ''      close;
}

# Rule 1: a worker's link always lands on the same hub (consistent hash on the worker id), so
# its owner key and its jobs stay put; when that hub is down, the link moves to the next one.
# A hub that is up but frozen (nothing answers, yet its kernel accepts connections) never
# counts as down here: a worker whose link attempts there fail sends ?hop=N from its second
# attempt on, which moves it to another hub (its CDP tunnels carry the same hop).
# A worker's CDP tunnels (/workers/{id}/cdp/{cdp_id}) follow its link to the hub that asked for them.
# max_fails=0: nginx never marks a hub down here. It records a hub's recovery only when the
# request that tested it ends, and a link lasts for hours: with max_fails=1 a hub that had
# failed with the others stayed marked down while it held links, so nginx let one link through
# to it every fail_timeout and answered every other 502 "no live upstreams" (100 workers, two
# hubs killed: 22 linked after 60 s). A dead hub now costs one refused connect per attempt.
upstream paprika_links {
    hash $paprika_worker_id$arg_hop consistent;
${servers('max_fails=0')}
}

# Rule 2: everything else goes round-robin; hubs are stateless and forward what they do not own.
upstream paprika_hubs {
${servers('max_fails=1 fail_timeout=5s')}
    keepalive 64;
}

server {
    listen ${f.listen};
    client_max_body_size 2m;

    location ~ ^/workers/(?<paprika_worker_id>[A-Za-z0-9_-]+)/(link|cdp/[0-9a-f-]+)$ {
        proxy_pass http://paprika_links;
        proxy_http_version 1.1;
        proxy_set_header Upgrade $http_upgrade;
        proxy_set_header Connection $connection_upgrade;
        proxy_set_header Host $http_host;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_read_timeout 3600s;
        proxy_send_timeout 3600s;
        proxy_connect_timeout 2s;
        proxy_next_upstream error timeout;
    }

    # The console's sockets: its live events and the lane wall's thumbnails.
    location ~ ^/admin/(events|wall)$ {
        proxy_pass http://paprika_hubs;
        proxy_http_version 1.1;
        proxy_set_header Upgrade $http_upgrade;
        proxy_set_header Connection $connection_upgrade;
        proxy_set_header Host $http_host;
        proxy_read_timeout 3600s;
        proxy_connect_timeout 2s;
    }

    # CDP clients (puppeteer.connect, connectOverCDP): a long-lived upgrade. Not logged: the API
    # token may be in its query string (?token=).
    location = /cdp {
        access_log off;
        proxy_pass http://paprika_hubs;
        proxy_http_version 1.1;
        proxy_set_header Upgrade $http_upgrade;
        proxy_set_header Connection $connection_upgrade;
        proxy_set_header Host $http_host;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_read_timeout 3600s;
        proxy_send_timeout 3600s;
        proxy_connect_timeout 2s;
        proxy_next_upstream error timeout;
    }

    location / {
        proxy_pass http://paprika_hubs;
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_set_header Host $http_host;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        # POST /jobs may wait ASSIGN_WAIT (8 s) plus a forward (60 s).
        proxy_read_timeout 90s;
        proxy_connect_timeout 2s;
        # A dead hub: try the next one (non-idempotent requests only when nothing was sent).
        proxy_next_upstream error timeout http_502 http_503;
    }
}
`;
  if (f.full && !opts.standalone && f.dir !== undefined) {
    const d = f.dir === '/' ? '' : f.dir;
    return `# Generated by \`paprika nginx-conf --full --dir ${f.dir}\`: ${f.hubs.length} hub(s). A whole nginx.conf for an nginx
# that writes only under ${f.dir} (create it first): nginx -t -e ${d}/error.log -c FILE, then
# nginx -e ${d}/error.log -c FILE (-e: nginx opens its built-in error log before it reads this file).
worker_processes auto;
pid ${d}/nginx.pid;
error_log ${d}/error.log warn;
events { worker_connections 4096; }
http {
    access_log ${d}/access.log;
    client_body_temp_path ${d}/body;
    proxy_temp_path ${d}/proxy;
    fastcgi_temp_path ${d}/fastcgi;
    uwsgi_temp_path ${d}/uwsgi;
    scgi_temp_path ${d}/scgi;
${body.replace(/^(?=.)/gm, '    ')}}
`;
  }
  if (f.full && !opts.standalone) {
    return `# Generated by \`paprika nginx-conf --full\`: ${f.hubs.length} hub(s). A whole nginx.conf: nginx -t -c FILE,
# then nginx -c FILE. pid, logs and temp paths are nginx's built-in defaults (--dir DIR puts them under DIR).
worker_processes auto;
events { worker_connections 4096; }
http {
${body.replace(/^(?=.)/gm, '    ')}}
`;
  }
  const http = `# Generated by \`paprika nginx-conf\`: ${f.hubs.length} hub(s). This is nginx's http {} context: put it in
# /etc/nginx/conf.d/paprika.conf (the nginx.conf of the Debian and nginx.org packages includes conf.d/*.conf in http {}).
${body}`;
  if (!opts.standalone) return http;
  // A complete nginx.conf for running nginx as a non-daemon under tests (deploy/ example too).
  const p = opts.prefix ?? '/tmp';
  return `daemon off;
worker_processes 1;
pid ${opts.pidFile ?? `${p}/nginx.pid`};
error_log ${p}/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path ${p}/body;
    proxy_temp_path ${p}/proxy;
    fastcgi_temp_path ${p}/fastcgi;
    uwsgi_temp_path ${p}/uwsgi;
    scgi_temp_path ${p}/scgi;
${http.replace(/^/gm, '    ')}
}
`;
}
