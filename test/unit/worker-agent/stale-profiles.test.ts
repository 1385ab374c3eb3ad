// Profiles a killed worker left in /tmp are removed at the next start; profiles in use (Chrome's
// lock names a live process) and profiles without a lock are left alone. Real directories and
// processes: the dead pid is a child that has exited.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { removeStaleProfiles } from '../../../worker-agent/src/chrome/stale-profiles.ts';

describe('removeStaleProfiles', () => {
  it('removes a profile whose lock names a process that is gone, and nothing else', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stale-profiles-'));
    try {
      const dead = spawnSync(process.execPath, ['-e', '']).pid!; // exited by now
      const profile = (name: string, lock?: string) => {
        const dir = path.join(tmp, name);
        fs.mkdirSync(path.join(dir, 'Default'), { recursive: true });
        if (lock) fs.symlinkSync(lock, path.join(dir, 'SingletonLock'));
        return dir;
      };
      const stale = profile('paprika-lane-dead', `${os.hostname()}-${dead}`);
      const staleCdp = profile('paprika-cdp-dead', `${os.hostname()}-${dead}`);
      const live = profile('paprika-lane-live', `${os.hostname()}-${process.pid}`);
      const otherHost = profile('paprika-lane-elsewhere', `another-host-${dead}`);
      const unlocked = profile('paprika-lane-nolock');
      const notOurs = profile('some-other-app-dead', `${os.hostname()}-${dead}`);
      const removed = await removeStaleProfiles(tmp);
      expect(removed.sort()).toEqual([staleCdp, stale].sort());
      for (const kept of [live, otherHost, unlocked, notOurs]) expect(fs.existsSync(kept), kept).toBe(true);
      for (const gone of [stale, staleCdp]) expect(fs.existsSync(gone), gone).toBe(false);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});
