#!/usr/bin/env node
// `npm run chaos [-- --seed N --duration S --agents N --hubs N --lanes N --clients N]`:
// a seeded, time-bounded chaos run on a private Postgres, Redis and nginx (test/harness/chaos).
import { runFromSource } from './from-source.mjs';
// The hubs and workers it starts run the same TypeScript sources, never a stale dist/.
process.env.PAPRIKA_FROM_SOURCE = '1';
runFromSource();
const { main } = await import('../test/harness/chaos/main.ts');
await main(process.argv.slice(2));
