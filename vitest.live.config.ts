import { defineConfig } from 'vitest/config';

// `npm run test:live -- <kind>`: the provider conformance suite against real accounts of the OAuth
// kinds, with credentials from the environment (packages/providers/src/backends/oauth-common/live/).
// Not part of `npm test`: CI runs the same suite against local emulators.
export default defineConfig({
  test: {
    name: 'live',
    environment: 'node',
    include: ['packages/providers/src/backends/oauth-common/live/*.live.ts'],
    testTimeout: 30 * 60_000,
    hookTimeout: 10 * 60_000,
    fileParallelism: false,
  },
});
