import { defineConfig } from 'vitest/config';

// Browser journeys: the real server (built web app) driven by Debian's Chromium through playwright-core.
export default defineConfig({
  test: {
    name: 'e2e',
    include: ['journeys/**/*.e2e.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    fileParallelism: false,
    pool: 'forks',
  },
});
