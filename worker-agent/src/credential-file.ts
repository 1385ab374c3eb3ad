// Where an agent keeps the credential a hub gave it: `<dataDir>/worker-<key>.json`, mode 0600,
// one file per (hub, worker) so several agents (and several fleets) can share a data dir. The
// key hashes the hub's origin and the explicit id or LAN IP the agent registers with.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

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
      throw err;
    }
    const c = JSON.parse(text) as Partial<WorkerCredentialFile>;
    if (typeof c.worker_id !== 'string' || typeof c.secret !== 'string') throw new Error(`${this.path} is not a worker credential; move it away to enroll again`);
    return c as WorkerCredentialFile;
  }

  /** Written whole (temp file, then rename): a crash mid-write never leaves half a secret. */
  save(c: WorkerCredentialFile): void {
    fs.mkdirSync(path.dirname(this.path), { recursive: true, mode: 0o700 });
    const tmp = `${this.path}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, `${JSON.stringify(c, null, 2)}\n`, { mode: 0o600 });
    fs.renameSync(tmp, this.path);
  }

  remove(): void {
    fs.rmSync(this.path, { force: true });
  }
}
