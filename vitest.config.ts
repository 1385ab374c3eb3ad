import { defineConfig } from 'vitest/config';

export default defineConfig({
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
