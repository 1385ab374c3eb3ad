#!/usr/bin/env node
// `npm run bench [-- --quick]`: the benchmarks in bench/, TypeScript run through tsx.
import { runFromSource } from './from-source.mjs';
// The hubs and workers it starts run the same TypeScript sources, never a stale dist/.
process.env.PAPRIKA_FROM_SOURCE = '1';
runFromSource();
const { main } = await import('../bench/run.ts');
await main(process.argv.slice(2));
