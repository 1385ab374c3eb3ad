// The embedded database in a directory (the hub's default without DATABASE_URL): a fresh
// directory is initialised in a child process, then opened here; a restart finds its rows; an
// initialisation that fails says which directory and why, and nothing is left half-open.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pgliteClient } from '../../hub-core/src/adapters/sql/pglite-client.ts';

const dirs: string[] = [];
function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'paprika-pglite-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('PGlite in a data directory', () => {
  it('initialises a fresh directory, and a second open of it finds what the first wrote', async () => {
    const dir = path.join(tempDir(), 'db');
    const first = await pgliteClient(dir);
    expect(fs.existsSync(path.join(dir, 'PG_VERSION'))).toBe(true);
    await first.query('CREATE TABLE kept (v text)');
    await first.query('INSERT INTO kept VALUES ($1)', ['written before the restart']);
    await first.close();

    const second = await pgliteClient(dir);
    try {
      expect(await second.query<{ v: string }>('SELECT v FROM kept')).toEqual([{ v: 'written before the restart' }]);
    } finally {
      await second.close();
    }
  }, 120_000);

  it('a directory initdb cannot use fails with an error naming it', async () => {
    const dir = tempDir();
    // `base` is where initdb puts the template databases: a plain file in its place breaks it.
    fs.writeFileSync(path.join(dir, 'base'), 'not a directory');
    await expect(pgliteClient(dir)).rejects.toThrow(new RegExp(`PGlite initdb in ${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} exited with`));
    expect(fs.existsSync(path.join(dir, 'PG_VERSION'))).toBe(false);
  }, 120_000);
});
