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
  },
});
