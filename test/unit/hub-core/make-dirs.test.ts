// makeDirs (paprika/wire): mkdir -p that ends. Node's recursive mkdir loops forever under /proc
// (mkdir answers ENOENT beneath a parent that exists), which held a hub with
// PAPRIKA_DATA_DIR=/proc/x at 100 % CPU, deaf to SIGTERM.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeDirs } from '../../../hub-core/src/wire/files.ts';
import { CredentialFile } from '../../../worker-agent/src/credential-file.ts';

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('makeDirs', () => {
  it('makes missing parents, keeps what exists, and applies the mode to what it makes', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-mkdirs-'));
    made.push(root);
    const deep = path.join(root, 'a', 'b', 'c');
    makeDirs(deep, 0o700);
    makeDirs(deep); // again: nothing to do
    expect(fs.statSync(deep).isDirectory()).toBe(true);
    expect(fs.statSync(path.join(root, 'a')).mode & 0o777).toBe(0o700 & ~process.umask());
  });

  it('fails at once under /proc, where Node\'s own recursive mkdir never returns', () => {
    expect(fs.existsSync('/proc/self')).toBe(true);
    expect(() => makeDirs('/proc/paprika-nope/data')).toThrow(/ENOENT/);
    // The worker's credential file under such a data dir: refused with the agent's own message.
    expect(() => new CredentialFile('/proc/paprika-nope', 'http://127.0.0.1:1', 'w1').ensureWritable()).toThrow();
  });

  it('fails naming a file that stands where a directory should be', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-mkdirs-'));
    made.push(root);
    fs.writeFileSync(path.join(root, 'file'), '');
    expect(() => makeDirs(path.join(root, 'file', 'x'))).toThrow(/ENOTDIR/);
  });
});
