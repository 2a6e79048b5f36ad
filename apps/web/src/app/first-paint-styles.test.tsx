import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ErrorPage, WhenStarted } from '../features/startup/pages.tsx';
import { resetSessionStore, sessionStore } from '../features/session/store.ts';
import { cloud, initData, renderWithProviders } from '../test/utils.tsx';
import { FIRST_PAINT_COMPONENTS } from './first-paint-styles.ts';
import { AppLayout } from './layout/AppLayout.tsx';

/**
 * The page loads only some of Mantine's styles before the first paint (the rest follows with the
 * screens and dialogs): whatever the shell shows by itself must be styled by those.
 */

const require = createRequire(import.meta.url);
const stylesDir = join(dirname(require.resolve('@mantine/core/styles.css')), 'styles');

/** Mantine's class names (m_xxxxxxxx) and the component style file that defines each. */
const OWNER = new Map<string, string>();
for (const file of readdirSync(stylesDir).filter((f) => f.endsWith('.css') && !f.endsWith('.layer.css')))
  for (const m of readFileSync(join(stylesDir, file), 'utf8').matchAll(/\.(m_[0-9a-f]{8})\b/g))
    if (!OWNER.has(m[1] as string)) OWNER.set(m[1] as string, file.slice(0, -'.css'.length));

/**
 * The core style files the page's Mantine classes come from. Other Mantine packages' classes (the
 * test harness's toasts) are not core's: their styles come with the chunks that use them.
 */
function styleFilesInUse(): string[] {
  const classes = [...document.querySelectorAll('[class]')].flatMap((e) => [...e.classList]);
  const files = classes.flatMap((c) => OWNER.get(c) ?? []);
  return [...new Set(files)].sort();
}

beforeEach(() => {
  localStorage.clear();
  resetSessionStore();
});
afterEach(() => vi.unstubAllGlobals());

describe('styles of the first paint', () => {
  it('cover the shell while start-up runs and once it has answered', async () => {
    const routes = [{ element: <AppLayout />, children: [{ path: '/transfer', element: <p>screen</p> }] }];
    // Before start-up answered: header, menu, sidebar and the screen's loader.
    renderWithProviders(<p>root</p>, { path: '/transfer', routes });
    expect(screen.getByTestId('screen-loader')).toBeInTheDocument();
    const before = styleFilesInUse();
    // After: with billing (Premium), the banner box, a service notice and clouds in the sidebar.
    sessionStore.setState({
      started: true,
      cloudsLoaded: true,
      init: initData({ billing_mode: 'test', service_notice: { text: 'Maintenance', date: '', contact_url: '' } }),
      tempClouds: [cloud('a', { cloud_alias_name: 'Work' }), cloud('b', { status: 'expired' })],
    });
    await screen.findByText('screen');
    expect(screen.getByTestId('service-notice')).toBeInTheDocument();
    expect(screen.getByTestId('banner-box')).toBeInTheDocument();
    const after = styleFilesInUse();
    const used = [...new Set([...before, ...after])];
    expect(used.length).toBeGreaterThan(5);
    expect(used.filter((file) => !(FIRST_PAINT_COMPONENTS as readonly string[]).includes(file))).toEqual([]);
  });

  it('cover the pages outside the layout: the start-up loader and the error page', () => {
    renderWithProviders(<p>root</p>, {
      path: '/wait',
      routes: [
        { element: <WhenStarted />, children: [{ path: '/wait', element: <p>app</p> }] },
        { path: '/error', element: <ErrorPage /> },
      ],
    });
    const loader = styleFilesInUse();
    expect(loader).toContain('Loader');
    document.body.innerHTML = '';
    renderWithProviders(<ErrorPage />, { path: '/error?src=boom' });
    const used = [...new Set([...loader, ...styleFilesInUse()])];
    expect(used.filter((file) => !(FIRST_PAINT_COMPONENTS as readonly string[]).includes(file))).toEqual([]);
  });
});
