#!/usr/bin/env node
// Before `npm run demo`: build the console once if renderer/dist is missing, so a fresh clone
// shows the console and not the "not built" page.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
if (!fs.existsSync(path.join(root, 'renderer/dist/index.html'))) {
  console.log('paprika: building the console (first run only)…');
  const { build } = await import('vite');
  await build({ configFile: path.join(root, 'renderer/vite.config.ts'), logLevel: 'warn' });
}
