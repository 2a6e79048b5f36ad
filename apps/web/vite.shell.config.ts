import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';
import { FIRST_PAINT_COMPONENTS } from './src/app/first-paint-styles.ts';
import { mantineStyles } from './vite.plugins.ts';

/**
 * The app shell's renderer for Node (src/app/shell/prerender.tsx), built beside the app with the
 * same CSS modules so that its class names are the app's; scripts/prerender-shell.ts runs it.
 */
export default defineConfig({
  plugins: [react(), mantineStyles(FIRST_PAINT_COMPONENTS)],
  build: {
    ssr: 'src/app/shell/prerender.tsx',
    // Only the build reads it: out of the way of the linters and git, as Vite's own cache is.
    outDir: 'node_modules/.shell-build',
    emptyOutDir: true,
    sourcemap: false,
    copyPublicDir: false,
    rolldownOptions: { output: { codeSplitting: false } },
  },
});
