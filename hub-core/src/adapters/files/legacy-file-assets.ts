// Assets a hub on DATABASE_URL kept as files before they moved into the job_assets table
// (releases before 2026-12-03 stored them under PAPRIKA_DATA_DIR/assets whatever the database).
// After an upgrade those files are still read, listed and aged out; new assets go to the table.
import type { AssetStore } from '../../ports/asset-store.ts';

export class WithLegacyFileAssets implements AssetStore {
  constructor(
    private readonly current: AssetStore,
    private readonly legacy: AssetStore,
  ) {}

  put(jobId: string, name: string, contentType: string, data: Buffer): Promise<void> {
    return this.current.put(jobId, name, contentType, data);
  }

  async get(jobId: string, name: string) {
    return (await this.current.get(jobId, name)) ?? (await this.legacy.get(jobId, name));
  }

  async list(jobId: string): Promise<string[]> {
    const [now, old] = await Promise.all([this.current.list(jobId), this.legacy.list(jobId)]);
    return [...new Set([...now, ...old])].sort();
  }

  async deleteStoredBefore(before: Date, limit: number): Promise<number> {
    const gone = await this.current.deleteStoredBefore(before, limit);
    return gone < limit ? gone + (await this.legacy.deleteStoredBefore(before, limit - gone)) : gone;
  }
}
