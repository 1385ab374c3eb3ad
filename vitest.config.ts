import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // `paprika/wire` (the worker's one door into hub-core) resolves to its TypeScript source here,
  // to dist/ everywhere else (package.json `exports`).
  ssr: { resolve: { conditions: [...defaultServerConditions, 'paprika-source'] } },
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Two cores: two test files at a time; each file owns its databases, key prefixes and ports.
    maxWorkers: 2,
    globalSetup: ['test/harness/global-setup.ts'],
    // Every `paprika` process a test starts runs the TypeScript in the tree, not dist/ (a
    // build of the sources as they were at the last `npm run build`).
    env: { PAPRIKA_FROM_SOURCE: '1' },
  },
});
