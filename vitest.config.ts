import { defineConfig } from 'vitest/config';

// Two projects: everything on Node (unit and *.int.test.ts against real servers on 127.0.0.1),
// and the web app's component tests in jsdom. Browser journeys live in e2e/ and run after a build.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'node',
          environment: 'node',
          include: [
            'packages/*/src/**/*.test.ts',
            'packages/*/test/**/*.test.ts',
            'apps/server/src/**/*.test.ts',
            'apps/cli/src/**/*.test.ts',
            'apps/desktop/src/**/*.test.ts',
            'apps/server/test/**/*.test.ts',
          ],
          globalSetup: ['packages/testing/src/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          pool: 'forks',
        },
      },
      'apps/web/vite.config.ts',
    ],
  },
});
