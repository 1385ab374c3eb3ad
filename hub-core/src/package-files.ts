// Files the code reads at run time (migrations, Lua scripts, the built console) sit in the
// package, not next to every compiled module: the same module runs from the source tree (tsx),
// from the compiled `dist/` and from the desktop app's `electron-dist/`. Each asks for its file
// by its path in the package and takes the nearest folder above it that has it.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** `rel` under the nearest ancestor of the module at `fromUrl` that has it; `fallback` (resolved from that module) when none does. */
export function packageFile(fromUrl: string, rel: string, fallback: string): string {
  const start = path.dirname(fileURLToPath(fromUrl));
  for (let dir = start; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, rel);
    if (fs.existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir) return path.resolve(start, fallback);
  }
}
