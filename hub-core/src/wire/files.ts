// Files the hub and the worker write for themselves (data directories, credentials, kept results).
import fs from 'node:fs';
import path from 'node:path';

/**
 * mkdir -p, bounded: throws the first error that is not "already exists", naming the directory.
 * Node's own `mkdir(…, {recursive: true})` never returns where mkdir answers ENOENT under a
 * parent that exists (/proc, /sys: a data directory of `/proc/x` held a hub at 100 % CPU, deaf
 * to SIGTERM); this walks up once and fails instead.
 */
export function makeDirs(dir: string, mode?: number): void {
  const missing: string[] = [];
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    const stat = fs.statSync(at, { throwIfNoEntry: false });
    if (stat?.isDirectory()) break;
    if (stat) throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${at}'`), { code: 'ENOTDIR' });
    missing.push(at);
    if (path.dirname(at) === at) break;
  }
  for (const d of missing.reverse()) {
    try {
      fs.mkdirSync(d, mode === undefined ? undefined : { mode });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

/** Written whole (a temp file of this process, then rename): a crash mid-write never leaves half a file. */
export function writeFileWhole(file: string, text: string, mode: number): void {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, text, { mode });
  fs.renameSync(tmp, file);
}
