// The S3 asset store against a real S3-protocol server on loopback (s3rver, an S3
// implementation in Node: MinIO's server binary cannot be installed here).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3AssetStore } from '../../hub-core/src/adapters/s3/s3-asset-store.ts';

describe('S3 asset store', () => {
  let server: { close(): Promise<void> };
  let store: S3AssetStore;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-s3-'));

  beforeAll(async () => {
    const { default: S3rver } = (await import('s3rver')) as unknown as { default: new (o: object) => { run(): Promise<{ port: number }>; close(): Promise<void> } };
    const s3 = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: dir, configureBuckets: [{ name: 'paprika-assets' }] });
    const { port } = await s3.run();
    server = s3;
    store = new S3AssetStore({ endpoint: `http://127.0.0.1:${port}`, bucket: 'paprika-assets', accessKey: 'S3RVER', secretKey: 'S3RVER' });
  });
  afterAll(async () => {
    await server?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('stores, lists and serves a job asset with its content type', async () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
    await store.put('job-1', 'screenshot.png', 'image/png', png);
    await store.put('job-1', 'page.html', 'text/html', Buffer.from('<h1>x</h1>'));
    expect(await store.list('job-1')).toEqual(['page.html', 'screenshot.png']);
    const got = await store.get('job-1', 'screenshot.png');
    expect(got?.contentType).toBe('image/png');
    expect(got?.data.equals(png)).toBe(true);
  });

  it('answers undefined for a missing asset and refuses unsafe names', async () => {
    expect(await store.get('job-1', 'nope.png')).toBeUndefined();
    expect(await store.get('job-1', '../x')).toBeUndefined();
    await expect(store.put('job-1', '../evil', 'text/plain', Buffer.from('x'))).rejects.toThrow(/unsafe/);
  });
});
