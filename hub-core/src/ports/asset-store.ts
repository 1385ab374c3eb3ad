/** Job assets (screenshots, HTML): files under PAPRIKA_DATA_DIR/assets, or S3/MinIO. */
export interface AssetStore {
  put(jobId: string, name: string, contentType: string, data: Buffer): Promise<void>;
  get(jobId: string, name: string): Promise<{ contentType: string; data: Buffer } | undefined>;
  list(jobId: string): Promise<string[]>;
}
