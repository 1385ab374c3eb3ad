#!/usr/bin/env node
// `npm run bench [-- --quick]`: the benchmarks in bench/, TypeScript run through tsx.
import { register } from 'tsx/esm/api';
register();
const { main } = await import('../bench/run.ts');
await main(process.argv.slice(2));
