import fs from 'node:fs/promises';
import path from 'node:path';
import type { AssetStore } from '../../ports/asset-store.ts';
import { systemClock, type Clock } from '../../ports/clock.ts';
import { makeDirs } from '../../wire/files.ts';

const SAFE = /^[A-Za-z0-9_.-]+$/;

/**
 * Assets as files: <root>/<job id>/<name>, with the content type in a sidecar file. The
 * embedded (single-hub) mode's store: another hub never reads this disk.
 */
export class FileAssetStore implements AssetStore {
  constructor(
    private readonly root: string,
    private readonly clock: Clock = systemClock,
  ) {}

  private dir(jobId: string): string {
    if (!SAFE.test(jobId)) throw new Error(`unsafe job id ${jobId}`);
    return path.join(this.root, jobId);
  }

  async put(jobId: string, name: string, contentType: string, data: Buffer): Promise<void> {
    if (!SAFE.test(name) || name.endsWith('.type')) throw new Error(`unsafe asset name ${name}`);
    const dir = this.dir(jobId);
    makeDirs(dir);
    await fs.writeFile(path.join(dir, name), data);
    await fs.writeFile(path.join(dir, `${name}.type`), contentType);
    // Stamped with the injected clock: retention compares against it, not the file system's.
    const at = new Date(this.clock.now());
    await fs.utimes(dir, at, at);
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

  /** A job's folder goes whole, by the time its last asset was stored. */
  async deleteStoredBefore(before: Date, limit: number): Promise<number> {
    let entries: string[];
    try {
      entries = await fs.readdir(this.root);
    } catch {
      return 0;
    }
    let deleted = 0;
    for (const jobId of entries) {
      if (deleted >= limit) break;
      if (!SAFE.test(jobId)) continue;
      const dir = path.join(this.root, jobId);
      const stat = await fs.stat(dir).catch(() => undefined);
      if (!stat?.isDirectory() || stat.mtimeMs >= before.getTime()) continue;
      const names = (await fs.readdir(dir).catch(() => [] as string[])).filter((f) => !f.endsWith('.type'));
      await fs.rm(dir, { recursive: true, force: true });
      deleted += names.length;
    }
    return deleted;
  }
}
