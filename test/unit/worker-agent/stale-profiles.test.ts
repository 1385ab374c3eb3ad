// Profiles a killed worker left in /tmp are removed at the next start; profiles in use (their
// agent, or without an owner file their Chrome, still runs) are left alone. Real directories and
// processes: the dead pid is a child that has exited.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROFILE_OWNER_FILE, removeStaleProfiles } from '../../../worker-agent/src/chrome/stale-profiles.ts';

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

  it("judges a profile by the agent that made it: a killed agent's profile goes even though its Chrome exited cleanly and took its lock along", async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stale-profiles-'));
    try {
      const dead = spawnSync(process.execPath, ['-e', '']).pid!;
      const profile = (name: string, o: { owner?: object; lock?: string; ageMs?: number } = {}) => {
        const dir = path.join(tmp, name);
        fs.mkdirSync(path.join(dir, 'Default'), { recursive: true });
        if (o.owner) fs.writeFileSync(path.join(dir, PROFILE_OWNER_FILE), JSON.stringify(o.owner));
        if (o.lock) fs.symlinkSync(o.lock, path.join(dir, 'SingletonLock'));
        if (o.ageMs) fs.utimesSync(dir, new Date(Date.now() - o.ageMs), new Date(Date.now() - o.ageMs));
        return dir;
      };
      const me = { host: os.hostname(), pid: process.pid, since: '2026-12-05T00:00:00.000Z' };
      // What a SIGKILLed agent leaves: its owner file, no lock (Chrome saw the pipe close and exited).
      const killed = profile('paprika-lane-killed', { owner: { ...me, pid: dead } });
      const killedCdp = profile('paprika-cdp-killed', { owner: { ...me, pid: dead } });
      // A live agent relaunching a crashed lane: Chrome's lock names a dead browser, the agent runs.
      const relaunching = profile('paprika-lane-relaunching', { owner: me, lock: `${os.hostname()}-${dead}` });
      const pidReused = profile('paprika-lane-pid-reused', { owner: { ...me, start: '1' } });
      const elsewhere = profile('paprika-lane-other-host', { owner: { ...me, host: 'another-host', pid: dead } });
      // Made by an agent before the owner file: judged by age.
      const freshUnmarked = profile('paprika-lane-unmarked-fresh');
      const oldUnmarked = profile('paprika-lane-unmarked-old', { ageMs: 3_600_000 });
      const removed = await removeStaleProfiles(tmp);
      const expected = [killed, killedCdp, oldUnmarked, ...(fs.existsSync('/proc/self/stat') ? [pidReused] : [])];
      expect(removed.sort()).toEqual(expected.sort());
      for (const kept of [relaunching, elsewhere, freshUnmarked]) expect(fs.existsSync(kept), kept).toBe(true);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});
