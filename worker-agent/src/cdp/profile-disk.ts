// How much a CDP client's profile holds on disk. A client may download, cache and store what
// it likes inside its own profile (that is what a browser is for), but the worker's disk is
// shared with the other lanes and the agent's own files: a page that saved a 301 MB blob, over
// and over, filled it (outside probe). The tunnel measures its profile every second or two and
// ends the client past the cap (PAPRIKA_CDP_MAX_DISK_MB).
import fs from 'node:fs/promises';
import path from 'node:path';

/** Bytes under `dir` (files only, symlinks not followed); stops counting once past `stopAt`. */
export async function bytesUnder(dir: string, stopAt = Number.POSITIVE_INFINITY): Promise<number> {
  let total = 0;
  const pending = [dir];
  while (pending.length > 0 && total <= stopAt) {
    const at = pending.pop()!;
    const entries = await fs.readdir(at, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      const p = path.join(at, e.name);
      if (e.isDirectory()) pending.push(p);
      else if (e.isFile()) total += (await fs.lstat(p).catch(() => undefined))?.size ?? 0;
    }
  }
  return total;
}

/**
 * Calls `over(bytes)` once the profile passes `capBytes`, checking every `everyMs` (one walk at
 * a time: a slow disk never stacks them). Returns the stop function.
 */
export function watchProfileDisk(dir: string, capBytes: number, everyMs: number, over: (bytes: number) => void): () => void {
  let walking = false;
  let stopped = false;
  const timer = setInterval(() => {
    if (walking || stopped) return;
    walking = true;
    void bytesUnder(dir, capBytes).then((bytes) => {
      walking = false;
      if (!stopped && bytes > capBytes) {
        stop();
        over(bytes);
      }
    });
  }, everyMs);
  timer.unref();
  const stop = () => {
    stopped = true;
    clearInterval(timer);
  };
  return stop;
}
