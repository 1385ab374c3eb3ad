#!/usr/bin/env node
// `npm run chaos [-- --seed N --duration S --agents N --hubs N --lanes N --clients N]`:
// a seeded, time-bounded chaos run on a private Postgres, Redis and nginx (test/harness/chaos).
import { register } from 'tsx/esm/api';
register();
const { main } = await import('../test/harness/chaos/main.ts');
await main(process.argv.slice(2));
