// Chrome profiles left behind by a worker that was killed (SIGKILL, OOM, power, a second
// Ctrl-C): its browsers died with it, their temporary profile directories did not (about 1 MB a
// lane's, more with a CDP client's cache), and a crash loop under a supervisor piled them up in
// /tmp. Each profile names the agent that made it (`paprika-agent.json`, written before Chrome
// starts); it is stale once that agent no longer runs. Chrome's own lock could not tell: a
// browser whose agent is killed sees its pipe close, exits cleanly and removes its lock, so
// such a profile looked "not ours to judge" forever (outside probe).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { holderAlive, readHolder, thisProcess } from 'paprika/wire';

/** The profile directories the agent makes (chrome-process.ts, cdp-browser.ts). */
export const PROFILE_PREFIXES = ['paprika-lane-', 'paprika-cdp-'] as const;

/** The file in a profile naming the agent that made it. */
export const PROFILE_OWNER_FILE = 'paprika-agent.json';

/**
 * A profile with neither an owner file nor Chrome's lock (made by an agent older than the owner
 * file): stale once untouched this long. An agent writes the owner file within milliseconds of
 * making the directory, so only an old one can be in this state.
 */
const UNMARKED_STALE_MS = 10 * 60_000;

/** A new profile directory under `prefix`, marked as this process's. */
export async function makeProfile(prefix: (typeof PROFILE_PREFIXES)[number]): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  await fs.writeFile(path.join(dir, PROFILE_OWNER_FILE), JSON.stringify(thisProcess()), { mode: 0o600 });
  return dir;
}

async function stale(profile: string, host: string, nowMs: number): Promise<boolean> {
  const owner = readHolder(path.join(profile, PROFILE_OWNER_FILE));
  if (owner !== 'gone' && owner !== undefined) return !holderAlive(owner);
  // Chrome's SingletonLock is a symlink to `<hostname>-<pid>` of the browser holding the profile.
  const target = await fs.readlink(path.join(profile, 'SingletonLock')).catch(() => undefined);
  if (target) {
    const m = /^(.*)-(\d+)$/.exec(target);
    return Boolean(m && m[1] === host && !holderAlive({ host, pid: Number(m[2]) }));
  }
  const stat = await fs.stat(profile).catch(() => undefined);
  return Boolean(stat && nowMs - stat.mtimeMs > UNMARKED_STALE_MS);
}

/** Remove stale profiles under `dir`; returns the paths removed. */
export async function removeStaleProfiles(dir = os.tmpdir(), host = os.hostname(), nowMs = Date.now()): Promise<string[]> {
  const removed: string[] = [];
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    if (!PROFILE_PREFIXES.some((p) => name.startsWith(p))) continue;
    const profile = path.join(dir, name);
    if (!(await stale(profile, host, nowMs).catch(() => false))) continue;
    await fs.rm(profile, { recursive: true, force: true }).then(() => removed.push(profile), () => {});
  }
  return removed;
}
