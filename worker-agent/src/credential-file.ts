// Where an agent keeps the credential a hub gave it: `<dataDir>/worker-<key>.json`, mode 0600,
// one file per (hub, worker) so several agents (and several fleets) can share a data dir. The
// key hashes the hub's origin and the explicit id or LAN IP the agent registers with.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { makeDirs, writeFileWhole } from 'paprika/wire';

export interface WorkerCredentialFile {
  hub: string;
  worker_id: string;
  secret: string;
  lan_ip: string;
  enrolled_at: string;
}

export class CredentialFile {
  readonly path: string;

  constructor(dataDir: string, hubUrl: string, identity: string) {
    const key = createHash('sha256').update(`${new URL(hubUrl).origin}|${identity}`).digest('hex').slice(0, 16);
    this.path = path.join(dataDir, `worker-${key}.json`);
  }

  /** The stored credential, or undefined when this agent never enrolled with this hub. */
  load(): WorkerCredentialFile | undefined {
    let text: string;
    try {
      text = fs.readFileSync(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw this.unusable('read', err);
    }
    const c = JSON.parse(text) as Partial<WorkerCredentialFile>;
    if (typeof c.worker_id !== 'string' || typeof c.secret !== 'string') throw new Error(`${this.path} is not a worker credential; move it away to enroll again`);
    return c as WorkerCredentialFile;
  }

  /**
   * Checked before enrolling: a hub that enrolled an id whose secret could then not be saved
   * would refuse that id to every later start ("already enrolled") until an operator reset it.
   */
  ensureWritable(): void {
    const probe = `${this.path}.${process.pid}.probe`;
    try {
      makeDirs(path.dirname(this.path), 0o700);
      fs.writeFileSync(probe, '', { mode: 0o600 });
      fs.rmSync(probe, { force: true });
    } catch (err) {
      throw this.unusable('write', err);
    }
  }

  /** Written whole (temp file, then rename): a crash mid-write never leaves half a secret. */
  save(c: WorkerCredentialFile): void {
    try {
      makeDirs(path.dirname(this.path), 0o700);
      writeFileWhole(this.path, `${JSON.stringify(c, null, 2)}\n`, 0o600);
    } catch (err) {
      throw this.unusable('write', err);
    }
  }

  private unusable(what: 'read' | 'write', err: unknown): Error {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    return new Error(`cannot ${what} the worker's credential in ${path.dirname(this.path)} (--data-dir / PAPRIKA_DATA_DIR): ${code}; give the agent a directory it can ${what}`);
  }

  /**
   * Another file in this data dir holding `workerId`'s credential for another hub URL: the
   * agent was pointed at a new address (nginx in front of its hub, say). Never used by itself:
   * a hub of another fleet must not get the secret, nor a proof made with it.
   */
  sameWorkerElsewhere(workerId: string): { path: string; hub: string } | undefined {
    const dir = path.dirname(this.path);
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch {
      return undefined;
    }
    for (const name of names) {
      const other = path.join(dir, name);
      if (other === this.path || !/^worker-[0-9a-f]{16}\.json$/.test(name)) continue;
      try {
        const c = JSON.parse(fs.readFileSync(other, 'utf8')) as Partial<WorkerCredentialFile>;
        if (c.worker_id === workerId && typeof c.secret === 'string') return { path: other, hub: String(c.hub) };
      } catch {
        // unreadable or not a credential: not this worker's
      }
    }
    return undefined;
  }

  remove(): void {
    fs.rmSync(this.path, { force: true });
  }
}
