// What a CDP client's profile holds on disk: files counted, symlinks not followed (a link to
// / would count the host), the walk stopping once past the cap.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bytesUnder, watchProfileDisk } from '../../../worker-agent/src/cdp/profile-disk.ts';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'profile-disk-'));
  fs.mkdirSync(path.join(dir, 'Default', 'Cache'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'a'), Buffer.alloc(1000));
  fs.writeFileSync(path.join(dir, 'Default', 'Cache', 'b'), Buffer.alloc(2000));
  fs.symlinkSync('/usr', path.join(dir, 'Default', 'usr'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('bytesUnder', () => {
  it('counts files under the directory and not what a symlink points at', async () => {
    expect(await bytesUnder(dir)).toBe(3000);
    expect(await bytesUnder(path.join(dir, 'missing'))).toBe(0);
  });

  it('stops once past the cap (it only needs to know that)', async () => {
    for (let i = 0; i < 50; i++) fs.writeFileSync(path.join(dir, `f${i}`), Buffer.alloc(1000));
    const n = await bytesUnder(dir, 1500);
    expect(n).toBeGreaterThan(1500);
    expect(n).toBeLessThan(53_000);
  });
});

describe('watchProfileDisk', () => {
  it('calls back past the cap with the bytes it found', async () => {
    const calls: number[] = [];
    const fired = new Promise<void>((resolve) => watchProfileDisk(dir, 5000, 20, (b) => (calls.push(b), resolve())));
    fs.writeFileSync(path.join(dir, 'big'), Buffer.alloc(10_000));
    await fired;
    expect(calls[0]).toBeGreaterThan(5000);
  });
});
