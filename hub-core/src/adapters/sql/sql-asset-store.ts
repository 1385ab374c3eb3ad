// Assets as rows of the shared database (DATABASE_URL without S3): every hub serves every
// job's screenshots with no service beyond the Postgres the hubs already share. Bounded per
// asset, so one page cannot put a quarter-gigabyte row in the jobs database; bigger fleets
// (or bigger assets) use S3.
import type { AssetStore } from '../../ports/asset-store.ts';
import { AssetTooLargeError } from '../../ports/asset-store.ts';
import type { Clock } from '../../ports/clock.ts';
import { ASSET_SQL } from './asset-statements.ts';
import type { SqlClient } from './sql-client.ts';

/** A full-page screenshot of a long page is a few MB; the worker link caps a frame at 32 MB. */
export const MAX_SQL_ASSET_BYTES = 16 * 1024 * 1024;

const SAFE = /^[A-Za-z0-9_.-]+$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class SqlAssetStore implements AssetStore {
  constructor(
    private readonly db: SqlClient,
    private readonly clock: Clock,
    private readonly maxBytes = MAX_SQL_ASSET_BYTES,
  ) {}

  async put(jobId: string, name: string, contentType: string, data: Buffer): Promise<void> {
    if (!UUID.test(jobId) || !SAFE.test(name)) throw new Error(`unsafe asset key ${jobId}/${name}`);
    if (data.length > this.maxBytes) throw new AssetTooLargeError(data.length, this.maxBytes);
    await this.db.query(ASSET_SQL.put, [jobId, name, contentType, data, data.length, new Date(this.clock.now())]);
  }

  async get(jobId: string, name: string): Promise<{ contentType: string; data: Buffer } | undefined> {
    if (!UUID.test(jobId) || !SAFE.test(name)) return undefined;
    const row = (await this.db.query<{ content_type: string; data: Uint8Array }>(ASSET_SQL.get, [jobId, name], 'assetGet'))[0];
    if (!row) return undefined;
    const data = Buffer.isBuffer(row.data) ? row.data : Buffer.from(row.data.buffer, row.data.byteOffset, row.data.byteLength);
    return { contentType: row.content_type, data };
  }

  async list(jobId: string): Promise<string[]> {
    if (!UUID.test(jobId)) return [];
    return (await this.db.query<{ name: string }>(ASSET_SQL.list, [jobId], 'assetList')).map((r) => r.name);
  }

  async deleteStoredBefore(before: Date, limit: number): Promise<number> {
    return (await this.db.query(ASSET_SQL.deleteStoredBefore, [before, limit])).length;
  }
}
