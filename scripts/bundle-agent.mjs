#!/usr/bin/env node
// Bundles the worker agent into one ESM file for node 20 (the Windows portable package and
// hosts without a checkout): `node scripts/bundle-agent.mjs [entry] [--out FILE] [--external PKG]…`.
// Defaults: entry worker-agent/src/main.ts, out dist/paprika-worker.mjs.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';

// Kept out of the bundle, to be installed next to it (node_modules): packages that read their own
// files at run time or load native code. puppeteer bundles cleanly, so it is not here by default.
const ALWAYS_EXTERNAL = [
  // puppeteer's config loader (cosmiconfig) imports the TypeScript compiler only to read a
  // `.puppeteerrc.ts`, which a worker never has: 9 MB of bundle for nothing.
  'typescript',
  // Optional native speed-ups of `ws`: required inside try/catch, absent is fine.
  'bufferutil',
  'utf-8-validate',
];

const PACKAGE_VERSION = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    out: { type: 'string', default: 'dist/paprika-worker.mjs' },
    external: { type: 'string', multiple: true, default: [] },
    minify: { type: 'boolean', default: false },
  },
});
const entry = positionals[0] ?? 'worker-agent/src/main.ts';
if (!fs.existsSync(entry)) {
  console.error(`bundle-agent: no entry file at ${entry}`);
  process.exit(2);
}

const result = await build({
  entryPoints: [entry],
  outfile: values.out,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  minify: values.minify,
  sourcemap: 'linked',
  legalComments: 'linked',
  external: [...ALWAYS_EXTERNAL, ...values.external],
  // `paprika/wire` (package.json "exports"): bundle its TypeScript source, not a dist/ build.
  conditions: ['paprika-source'],
  // The bundle travels without package.json: write the version it would read from there in.
  plugins: [
    {
      name: 'paprika-version',
      setup(b) {
        b.onLoad({ filter: /[\\/]wire[\\/]version\.ts$/ }, () => ({ contents: `export const PACKAGE_VERSION = ${JSON.stringify(PACKAGE_VERSION)};`, loader: 'ts' }));
      },
    },
  ],
  // CommonJS dependencies (pino, ws, puppeteer's helpers) call require/__dirname, which an ESM
  // file lacks: give them real ones, rooted at the bundle's own location.
  banner: {
    js: [
      `import { createRequire as __paprikaCreateRequire } from 'node:module';`,
      `import { fileURLToPath as __paprikaFileURLToPath } from 'node:url';`,
      `import { dirname as __paprikaDirname } from 'node:path';`,
      `const require = __paprikaCreateRequire(import.meta.url);`,
      `const __filename = __paprikaFileURLToPath(import.meta.url);`,
      `const __dirname = __paprikaDirname(__filename);`,
    ].join('\n'),
  },
  metafile: true,
  logLevel: 'warning',
});

const bytes = fs.statSync(values.out).size;
const inputs = Object.keys(result.metafile.inputs).length;
console.log(`bundle-agent: ${path.relative(process.cwd(), values.out)} (${(bytes / 1024 / 1024).toFixed(1)} MB from ${inputs} files; external: ${[...ALWAYS_EXTERNAL, ...values.external].join(', ')})`);
