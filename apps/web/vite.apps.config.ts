import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { precompress } from './vite.plugins.ts';

/**
 * The first-party apps (viewer, editor, image converter): pages of their own under /apps/, built
 * apart from the main app so that neither's chunks end up in the other's. Run after the main build
 * (same dist, not emptied).
 */
const page = (name: string) => fileURLToPath(new URL(`apps/${name}.html`, import.meta.url));

export default defineConfig({
  plugins: [precompress()],
  build: {
    outDir: 'dist',
    emptyOutDir: false,
    assetsDir: 'apps/assets',
    sourcemap: true,
    chunkSizeWarningLimit: 1500,
    modulePreload: { polyfill: false },
    rolldownOptions: {
      input: { viewer: page('viewer'), editor: page('editor'), converter: page('converter') },
    },
  },
});
