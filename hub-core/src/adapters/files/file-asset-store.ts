import fs from 'node:fs/promises';
import path from 'node:path';
import type { AssetStore } from '../../ports/asset-store.ts';

const SAFE = /^[A-Za-z0-9_.-]+$/;

/** Assets as files: <root>/<job id>/<name>, with the content type in a sidecar file. */
export class FileAssetStore implements AssetStore {
  constructor(private readonly root: string) {}

  private dir(jobId: string): string {
    if (!SAFE.test(jobId)) throw new Error(`unsafe job id ${jobId}`);
    return path.join(this.root, jobId);
  }

  async put(jobId: string, name: string, contentType: string, data: Buffer): Promise<void> {
    if (!SAFE.test(name) || name.endsWith('.type')) throw new Error(`unsafe asset name ${name}`);
    const dir = this.dir(jobId);
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(path.join(dir, name), data);
    await fs.writeFile(path.join(dir, `${name}.type`), contentType);
  }

  async get(jobId: string, name: string): Promise<{ contentType: string; data: Buffer } | undefined> {
    if (!SAFE.test(name) || !SAFE.test(jobId)) return undefined;
    try {
      const dir = this.dir(jobId);
      const [data, contentType] = await Promise.all([fs.readFile(path.join(dir, name)), fs.readFile(path.join(dir, `${name}.type`), 'utf8')]);
      return { contentType, data };
    } catch {
      return undefined;
    }
  }

  async list(jobId: string): Promise<string[]> {
    try {
      return (await fs.readdir(this.dir(jobId))).filter((f) => !f.endsWith('.type')).sort();
    } catch {
      return [];
    }
  }
}
