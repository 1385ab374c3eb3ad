#!/usr/bin/env node
// The `paprika` command. The sources are TypeScript; tsx compiles them on the fly so the
// CLI always runs exactly what is in the tree (no stale build output to forget).
import { register } from 'tsx/esm/api';
register();
const { main } = await import('../hub-core/src/cli/main.ts');
await main(process.argv.slice(2));
