// `npm run docs`: rewrite README.md's generated blocks from the sources. `--check` changes
// nothing and exits 1 when the README is out of date.
import fs from 'node:fs';
import path from 'node:path';
import { renderReadme } from './readme-blocks.ts';

const file = path.resolve(import.meta.dirname, '../../README.md');
const before = fs.readFileSync(file, 'utf8');
const after = renderReadme(before);
if (process.argv.includes('--check')) {
  if (after !== before) {
    console.error('README.md is out of date: run npm run docs');
    process.exit(1);
  }
  console.log('README.md is up to date');
} else if (after !== before) {
  fs.writeFileSync(file, after);
  console.log('README.md: generated blocks rewritten');
} else {
  console.log('README.md: already up to date');
}
