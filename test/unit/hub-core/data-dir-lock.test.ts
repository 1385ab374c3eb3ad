// The embedded database's lock: one live hub per directory; a lock left by a killed hub (even
// one whose pid now belongs to another process) is taken over; another host's lock is respected.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DataDirInUseError, lockDataDir } from '../../../hub-core/src/adapters/sql/data-dir-lock.ts';

let dir: string;
let file: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-lock-'));
  file = path.join(dir, 'db.lock');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const write = (holder: object) => fs.writeFileSync(file, JSON.stringify(holder));
const holderPid = () => JSON.parse(fs.readFileSync(file, 'utf8')).pid as number;

describe('lockDataDir', () => {
  it('refuses a second holder while the first lives, naming its pid; free again once released', () => {
    const lock = lockDataDir(file);
    expect(() => lockDataDir(file)).toThrow(DataDirInUseError);
    expect(() => lockDataDir(file)).toThrow(new RegExp(`pid ${process.pid}, since .*PAPRIKA_DATA_DIR`));
    lock.release();
    expect(fs.existsSync(file)).toBe(false);
    lockDataDir(file).release();
  });

  it('takes over the lock of a process that has exited', () => {
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    write({ host: os.hostname(), pid: dead, since: '2026-01-01T00:00:00.000Z' });
    const lock = lockDataDir(file);
    expect(holderPid()).toBe(process.pid);
    lock.release();
  });

  it.runIf(fs.existsSync('/proc/self/stat'))('takes over a lock whose pid now belongs to a process started later (pid reuse after a kill)', () => {
    write({ host: os.hostname(), pid: process.pid, start: '1', since: '2026-01-01T00:00:00.000Z' });
    const lock = lockDataDir(file);
    expect(JSON.parse(fs.readFileSync(file, 'utf8')).start).not.toBe('1');
    lock.release();
  });

  it("respects another host's lock (a shared directory: liveness cannot be told) and says how to clear it", () => {
    write({ host: 'elsewhere.example', pid: 1, since: '2026-01-01T00:00:00.000Z' });
    expect(() => lockDataDir(file)).toThrow(/host elsewhere\.example, pid 1.*delete the lock file/);
    expect(holderPid()).toBe(1);
  });

  it('an unreadable lock is respected while fresh (a holder may be writing it) and taken over once old', () => {
    fs.writeFileSync(file, '{"ho');
    expect(() => lockDataDir(file)).toThrow(/a holder whose lock file cannot be read/);
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(file, old, old);
    lockDataDir(file).release();
  });

  it("release leaves alone a lock that is no longer this holder's", () => {
    const lock = lockDataDir(file);
    write({ host: os.hostname(), pid: 1, since: '2026-01-01T00:00:00.000Z' });
    lock.release();
    expect(holderPid()).toBe(1);
  });
});
