import 'virtual:mantine-first.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import type { Language } from '@skyferry/contract';
import { initI18n } from '../i18n/index.ts';
import { App } from './App.tsx';

/** Renders the app into #root once the interface language is loaded. */
export async function start(lang: Language): Promise<void> {
  await initI18n(lang);
  const root = document.getElementById('root');
  if (!root) throw new Error('missing #root');
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
}
