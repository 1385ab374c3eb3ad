// One hub at a time on an embedded database directory.
//
// PGlite has no lock of its own: a second hub on the same directory opened it, wrote its own
// pages, and a job posted to it was lost when the two page sets met (outside probe: a second
// `npm run demo` beside the first). The lock is a file beside the directory, created with O_EXCL;
// it names the holder's host, pid and (on Linux) the kernel's start time of that pid, so a lock
// left by a hub that was killed is recognised as stale even when its pid has been reused.
import fs from 'node:fs';
import os from 'node:os';
import { holderAlive, readHolder, thisProcess, type ProcessHolder as Holder } from '../../wire/process-holder.ts';

/** The directory is held by another live hub (or by another host, where liveness cannot be told). */
export class DataDirInUseError extends Error {
  constructor(
    readonly lockFile: string,
    readonly holder: Holder | undefined,
  ) {
    const who = holder ? `${holder.host === os.hostname() ? '' : `host ${holder.host}, `}pid ${holder.pid}, since ${holder.since}` : 'a holder whose lock file cannot be read';
    super(`another hub uses this embedded database (${who}; lock ${lockFile}). Stop that hub, or give this one its own PAPRIKA_DATA_DIR (or a DATABASE_URL that several hubs share)${holder && holder.host !== os.hostname() ? '; if that host has no hub running, delete the lock file' : ''}`);
    this.name = 'DataDirInUseError';
  }
}

export interface DataDirLock {
  release(): void;
}

/** Takes `lockFile` for this process; throws DataDirInUseError when a live hub holds it. */
export function lockDataDir(lockFile: string): DataDirLock {
  const me = thisProcess();
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      fs.writeFileSync(lockFile, JSON.stringify(me), { flag: 'wx', mode: 0o600 });
      return {
        release() {
          // Only our own lock: a stale-lock take-over by another hub must not be undone.
          const now = readHolder(lockFile);
          if (now !== 'gone' && now?.pid === me.pid && now.since === me.since) fs.rmSync(lockFile, { force: true });
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = readHolder(lockFile);
    if (holder === 'gone') continue;
    // An unreadable lock: written by a hub killed between open and write (a few bytes of window),
    // so it is stale only once old enough that no live hub could still be writing it.
    if (holder === undefined && Date.now() - (fs.statSync(lockFile, { throwIfNoEntry: false })?.mtimeMs ?? 0) < 10_000) throw new DataDirInUseError(lockFile, undefined);
    if (holder !== undefined && holderAlive(holder)) throw new DataDirInUseError(lockFile, holder);
    // Stale. Move it aside rather than delete it: of two hubs taking over at once, only one rename succeeds.
    try {
      fs.renameSync(lockFile, `${lockFile}.stale-${process.pid}`);
      fs.rmSync(`${lockFile}.stale-${process.pid}`, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  throw new DataDirInUseError(lockFile, undefined);
}
