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
    outDir: 'dist-shell',
    emptyOutDir: true,
    sourcemap: false,
    rolldownOptions: { output: { codeSplitting: false } },
  },
});
