// Chrome profiles left behind by a worker that was killed (SIGKILL, OOM, power): its browsers
// died with it, their temporary profile directories did not (about 1 MB a lane's, more with a
// CDP client's cache), and a crash loop under a supervisor piled them up in /tmp. A profile is
// stale when Chrome's own lock names a process of this host that no longer runs. A profile in
// use (a lock naming a live process, another agent's on this host) or without a lock is left.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** The profile directories the agent makes (chrome-process.ts, cdp-browser.ts). */
export const PROFILE_PREFIXES = ['paprika-lane-', 'paprika-cdp-'] as const;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Remove stale profiles under `dir`; returns the paths removed. */
export async function removeStaleProfiles(dir = os.tmpdir(), host = os.hostname()): Promise<string[]> {
  const removed: string[] = [];
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    if (!PROFILE_PREFIXES.some((p) => name.startsWith(p))) continue;
    const profile = path.join(dir, name);
    // Chrome's SingletonLock is a symlink to `<hostname>-<pid>` of the browser holding the profile.
    const target = await fs.readlink(path.join(profile, 'SingletonLock')).catch(() => undefined);
    const m = target ? /^(.*)-(\d+)$/.exec(target) : null;
    if (!m || m[1] !== host || alive(Number(m[2]))) continue;
    await fs.rm(profile, { recursive: true, force: true }).then(() => removed.push(profile), () => {});
  }
  return removed;
}
