// Which asset store a hub uses, from its config: the one decision startHub delegates here.
import fs from 'node:fs';
import path from 'node:path';
import { WithLegacyFileAssets } from '../adapters/files/legacy-file-assets.ts';
import { FileAssetStore } from '../adapters/files/file-asset-store.ts';
import { S3AssetStore } from '../adapters/s3/s3-asset-store.ts';
import { SqlAssetStore } from '../adapters/sql/sql-asset-store.ts';
import { SqlJobStore } from '../adapters/sql/sql-job-store.ts';
import type { Config } from '../config.ts';
import type { AssetStore } from '../ports/asset-store.ts';
import type { Clock } from '../ports/clock.ts';
import type { JobStore } from '../ports/job-store.ts';

/**
 * Where assets live (README § Where assets live): S3 when set; with DATABASE_URL the shared
 * database, so every hub serves every job's assets; files only in the embedded mode.
 */
export function chooseAssetStore(config: Config, store: JobStore, clock: Clock): AssetStore {
  if (config.s3) return new S3AssetStore(config.s3);
  if (config.databaseUrl && store instanceof SqlJobStore) {
    const sql = new SqlAssetStore(store.db, clock);
    const legacyDir = path.join(config.dataDir, 'assets');
    return fs.existsSync(legacyDir) ? new WithLegacyFileAssets(sql, new FileAssetStore(legacyDir, clock)) : sql;
  }
  return new FileAssetStore(path.join(config.dataDir, 'assets'), clock);
}
