import { initialLanguage, loadLanguage } from './i18n/load.ts';

// The interface language's translations load while the app's own chunks download: index.html
// preloads the start chunk (see vite.plugins.ts), so neither waits for the other. No top-level
// await: it would turn off the bundler's chunk merging.
const lang = initialLanguage();
void loadLanguage(lang).catch(() => undefined);
void import('./app/start.tsx').then(({ start }) => start(lang));
