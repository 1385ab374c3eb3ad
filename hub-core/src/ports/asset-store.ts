/** Job assets (screenshots, HTML): files under PAPRIKA_DATA_DIR/assets, Postgres, or S3/MinIO. */
export interface AssetStore {
  /** Throws AssetTooLargeError when the store refuses the size; the caller logs and goes on. */
  put(jobId: string, name: string, contentType: string, data: Buffer): Promise<void>;
  get(jobId: string, name: string): Promise<{ contentType: string; data: Buffer } | undefined>;
  list(jobId: string): Promise<string[]>;
  /**
   * Retention: deletes up to `limit` assets stored before `before` (an asset is stored when its
   * job finishes, so these are assets of jobs older than that). Returns how many went.
   */
  deleteStoredBefore(before: Date, limit: number): Promise<number>;
}

export class AssetTooLargeError extends Error {
  constructor(
    readonly bytes: number,
    readonly maxBytes: number,
  ) {
    super(`asset of ${bytes} bytes is over the ${maxBytes}-byte limit`);
    this.name = 'AssetTooLargeError';
  }
}
