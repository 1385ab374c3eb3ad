// The version of this Paprika (package.json's), which hubs and workers report (GET /admin/config,
// `hello`). Read from the package.json this module sits in, so it is right from the sources,
// from dist/, from the installed package and from the desktop app; the single-file worker
// bundle (scripts/bundle-agent.mjs) has no package.json and gets the value written in.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const PACKAGE_VERSION: string = readVersion(path.dirname(fileURLToPath(import.meta.url)));

function readVersion(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    const version = paprikaVersionIn(path.join(dir, 'package.json'));
    if (version) return version;
    if (path.dirname(dir) === dir) return '0.0.0-unknown';
  }
}

function paprikaVersionIn(file: string): string | undefined {
  try {
    const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
    return pkg.name === 'paprika' && typeof pkg.version === 'string' ? pkg.version : undefined;
  } catch {
    return undefined;
  }
}
