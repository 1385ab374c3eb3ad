// Assets in S3 or MinIO (PAPRIKA_S3_ENDPOINT + _BUCKET, _ACCESS_KEY, _SECRET_KEY), so every hub
// behind nginx serves every job's screenshots. Objects are `<job id>/<name>`.
import { Client } from 'minio';
import type { S3Config } from '../../config.ts';
import type { AssetStore } from '../../ports/asset-store.ts';

const SAFE = /^[A-Za-z0-9_.-]+$/;

export class S3AssetStore implements AssetStore {
  private readonly client: Client;

  constructor(private readonly cfg: S3Config) {
    const u = new URL(cfg.endpoint);
    this.client = new Client({
      endPoint: u.hostname,
      port: u.port ? Number(u.port) : undefined,
      useSSL: u.protocol === 'https:',
      accessKey: cfg.accessKey,
      secretKey: cfg.secretKey,
      pathStyle: true,
    });
  }

  async put(jobId: string, name: string, contentType: string, data: Buffer): Promise<void> {
    if (!SAFE.test(jobId) || !SAFE.test(name)) throw new Error(`unsafe asset key ${jobId}/${name}`);
    await this.client.putObject(this.cfg.bucket, `${jobId}/${name}`, data, data.length, { 'Content-Type': contentType });
  }

  async get(jobId: string, name: string): Promise<{ contentType: string; data: Buffer } | undefined> {
    if (!SAFE.test(jobId) || !SAFE.test(name)) return undefined;
    try {
      const key = `${jobId}/${name}`;
      const stat = await this.client.statObject(this.cfg.bucket, key);
      const chunks: Buffer[] = [];
      for await (const c of await this.client.getObject(this.cfg.bucket, key)) chunks.push(c as Buffer);
      return { contentType: String(stat.metaData?.['content-type'] ?? 'application/octet-stream'), data: Buffer.concat(chunks) };
    } catch {
      return undefined;
    }
  }

  async list(jobId: string): Promise<string[]> {
    if (!SAFE.test(jobId)) return [];
    const names: string[] = [];
    for await (const item of this.client.listObjectsV2(this.cfg.bucket, `${jobId}/`, true)) {
      if (item.name) names.push(item.name.slice(jobId.length + 1));
    }
    return names.sort();
  }

  /** By each object's last-modified time (an S3 lifecycle rule on the bucket does the same without a hub). */
  async deleteStoredBefore(before: Date, limit: number): Promise<number> {
    const old: string[] = [];
    for await (const item of this.client.listObjectsV2(this.cfg.bucket, '', true)) {
      if (old.length >= limit) break;
      if (item.name && item.lastModified && item.lastModified.getTime() < before.getTime()) old.push(item.name);
    }
    if (old.length > 0) await this.client.removeObjects(this.cfg.bucket, old);
    return old.length;
  }
}
