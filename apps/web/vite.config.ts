import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';
import { FIRST_PAINT_COMPONENTS } from './src/app/first-paint-styles.ts';
import { mantineStyles, precompress, preloadDynamicStart } from './vite.plugins.ts';

const START = 'src/app/start.tsx';
/** The entry's own modules: it picks the language and fetches its translations, then imports start. */
const ENTRY_MODULES = /[\\/](index\.html|src[\\/]main\.tsx)$/;
/** What the entry shares with start: a chunk of its own, so that the entry runs before start arrives. */
const LANGUAGE_MODULES = /[\\/](src[\\/]i18n[\\/]load\.ts|contract[\\/]src[\\/]languages\.ts)$/;

export default defineConfig({
  plugins: [react(), mantineStyles(FIRST_PAINT_COMPONENTS), preloadDynamicStart(START), precompress()],
  server: { proxy: { '/api': 'http://127.0.0.1:8080', '/account': 'http://127.0.0.1:8080' } },
  build: {
    outDir: 'dist',
    sourcemap: true,
    // libs is one chunk on purpose (see below).
    chunkSizeWarningLimit: 700,
    // Every browser the app supports knows modulepreload (the polyfill would sit in the start chunk).
    modulePreload: { polyfill: false },
    rolldownOptions: {
      // start.tsx is an entry of its own (main.tsx imports it dynamically and index.html preloads
      // it), so that what it needs counts as initial: one chunk of libraries and one of the app's
      // code, instead of the many small chunks shared with the screens that automatic splitting
      // makes (each a request before first paint). The libraries' chunk stays cached across
      // releases that change only the app.
      input: {
        index: fileURLToPath(new URL('index.html', import.meta.url)),
        start: fileURLToPath(new URL(START, import.meta.url)),
      },
      output: {
        codeSplitting: {
          groups: [
            { name: 'language', test: LANGUAGE_MODULES, priority: 6 },
            { name: 'libs', test: (id) => /[\\/]node_modules[\\/]/.test(id), tags: ['$initial'], priority: 5 },
            {
              name: 'app',
              test: (id) => !ENTRY_MODULES.test(id) && !LANGUAGE_MODULES.test(id),
              tags: ['$initial'],
              priority: 4,
            },
            // What the screens load after that: the libraries they share in one chunk (a screen
            // would otherwise wait for a dozen small ones, a round trip each on a slow link) and
            // the larger ones that few screens use apart.
            { name: 'zod', test: /[\\/]node_modules[\\/]zod[\\/]/, priority: 3 },
            { name: 'dates', test: /[\\/]node_modules[\\/](@mantine[\\/]dates|dayjs)[\\/]/, priority: 3 },
            { name: 'virtual', test: /[\\/]node_modules[\\/]@tanstack[\\/]/, priority: 3 },
            { name: 'ui', test: /[\\/]node_modules[\\/]/, priority: 2 },
          ],
        },
      },
    },
  },
  test: {
    name: 'web',
    environment: 'jsdom',
    include: ['src/**/*.test.{ts,tsx}'],
    setupFiles: ['./src/test/setup.ts'],
    // Component tests type and click like a user; on a busy 2-CPU machine one can take several seconds.
    testTimeout: 20_000,
  },
});
