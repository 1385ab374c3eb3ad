#!/usr/bin/env node
// The `paprika` command. It runs the compiled JavaScript in dist/ (`npm run build`, which
// npm runs by itself at `npm install` in a clone and before `npm pack`). PAPRIKA_FROM_SOURCE=1
// runs the TypeScript sources instead, through tsx (a dev dependency: the tests use it so they
// always run what is in the tree, never a stale build).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const compiled = path.join(root, 'dist/launcher/main.js');
let entry;
if (process.env.PAPRIKA_FROM_SOURCE === '1' || !fs.existsSync(compiled)) {
  try {
    // Not shipped in the package (nor is tsx): there, a missing dist/ is the error below.
    const { runFromSource } = await import('./from-source.mjs');
    runFromSource();
  } catch {
    console.error(`paprika: ${path.relative(process.cwd(), compiled) || compiled} is missing; run \`npm run build\` in ${root}`);
    process.exit(1);
  }
  entry = pathToFileURL(path.join(root, 'launcher/main.ts')).href;
} else {
  entry = pathToFileURL(compiled).href;
}

// `npx paprika …` runs this as npm → sh -c → node, and npm exits on SIGTERM without passing the
// signal on: a supervisor stopping npx's pid would leave the hub or worker running with nobody
// to stop it. So under npm exec, the launcher's death is taken as the SIGTERM it did not pass.
function ancestors(limit) {
  const pids = [];
  let pid = process.ppid;
  for (let i = 0; i < limit && pid > 1; i++) {
    pids.push(pid);
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      break;
    }
  }
  return pids;
}
if (process.env.npm_command === 'exec' && process.platform === 'linux') {
  const launchers = ancestors(3);
  const watch = setInterval(() => {
    const gone = launchers.some((pid) => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    });
    if (gone) {
      clearInterval(watch);
      process.kill(process.pid, 'SIGTERM');
    }
  }, 500);
  watch.unref();
}

const { main } = await import(entry);
await main(process.argv.slice(2));
