// Creating a directory and its missing parents. Node's own `mkdir(…, {recursive: true})` never
// returns where mkdir answers ENOENT under a parent that exists (/proc, /sys: a data directory
// of `/proc/x` held a hub at 100 % CPU, deaf to SIGTERM); this walks up once and fails instead.
import fs from 'node:fs';
import path from 'node:path';

/** mkdir -p, bounded: throws the first error that is not "already exists", naming the directory. */
export function makeDirs(dir: string, mode?: number): void {
  const missing: string[] = [];
  let at = path.resolve(dir);
  for (;;) {
    try {
      if (!fs.statSync(at).isDirectory()) throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${at}'`), { code: 'ENOTDIR' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    missing.push(at);
    const up = path.dirname(at);
    if (up === at) break;
    at = up;
  }
  for (const d of missing.reverse()) {
    try {
      fs.mkdirSync(d, mode === undefined ? undefined : { mode });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}
