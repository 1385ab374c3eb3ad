// The console the hubs in tests serve (renderer/dist) must be built from the sources as they
// are: a build older than a source change would test yesterday's console (a stale build once
// still sent its token in the event stream's URL). Run once per test run, before any worker.
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DIST_INDEX = path.join(ROOT, 'renderer/dist/index.html');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : fs.statSync(p).mtimeMs);
  }
  return newest;
}

export async function ensureConsoleBuilt(): Promise<void> {
  const sources = Math.max(newestMtime(path.join(ROOT, 'renderer/src')), fs.statSync(path.join(ROOT, 'renderer/index.html')).mtimeMs);
  if (fs.existsSync(DIST_INDEX) && fs.statSync(DIST_INDEX).mtimeMs >= sources) return;
  const { build } = await import('vite');
  await build({ configFile: path.join(ROOT, 'renderer/vite.config.ts'), logLevel: 'warn' });
}
