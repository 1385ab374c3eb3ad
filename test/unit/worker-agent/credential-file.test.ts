// Where an agent keeps its credential: a directory it cannot use is named with its flag before
// anything is enrolled, and a credential is written whole, owner-only.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CredentialFile } from '../../../worker-agent/src/credential-file.ts';

describe('CredentialFile', () => {
  it('ensureWritable names --data-dir when the directory cannot be created or written (sysfs refuses even root)', () => {
    const f = new CredentialFile('/sys/paprika-no-such-dir', 'http://127.0.0.1:8080', '10.0.0.1');
    expect(() => f.ensureWritable()).toThrow(/^cannot write the worker's credential in \/sys\/paprika-no-such-dir \(--data-dir \/ PAPRIKA_DATA_DIR\): (EPERM|EACCES|EROFS|ENOENT)/);
  });

  it('ensureWritable leaves nothing behind in a good directory; save writes 0600 and load reads it back', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-cred-'));
    try {
      const f = new CredentialFile(path.join(dir, 'nested'), 'http://127.0.0.1:8080', '10.0.0.1');
      f.ensureWritable();
      expect(fs.readdirSync(path.join(dir, 'nested'))).toEqual([]);
      const c = { hub: 'http://127.0.0.1:8080', worker_id: 'w1', secret: 's', lan_ip: '10.0.0.1', enrolled_at: 'now' };
      f.save(c);
      expect(fs.statSync(f.path).mode & 0o777).toBe(0o600);
      expect(f.load()).toEqual(c);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
