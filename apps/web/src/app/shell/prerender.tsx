import { DirectionProvider, MantineProvider } from '@mantine/core';
import { renderToString } from 'react-dom/server';
import { I18nextProvider } from 'react-i18next';
import { MemoryRouter } from 'react-router';
import { isRtl, type Language, type ShellAccount, type ShellManifest } from '@skyferry/contract';
import { initI18n } from '../../i18n/index.ts';
import { patchUser } from '../../features/session/store.ts';
import { activeMenu } from '../../features/shell/Sidebar.tsx';
import { AppLayout } from '../layout/AppLayout.tsx';
import { LAYOUT_ROUTES } from '../routes.tsx';
import { cssVariablesResolver, localizedTheme } from '../theme.ts';

/**
 * The sidebar layout as the app first renders it, before start-up has answered (header, menu, the
 * screen's loader), as HTML: the build writes one per language, account kind and highlighted menu
 * entry (the page is drawn at `path`), and the server sends it as the page
 * (apps/server/src/http/web-app.ts), so the header and menu are on screen before any script has
 * run. The app renders the same markup when it starts and replaces it.
 */
export async function renderShell(lang: Language, account: ShellAccount, path: string): Promise<string> {
  const i18n = await initI18n(lang);
  // Only whether a token exists matters to the first render (the visitor's badge); none is real.
  patchUser({ access_token: account === 'member' ? 'signed-in' : '' });
  const theme = localizedTheme(i18n.t('common:close'), false);
  return renderToString(
    <I18nextProvider i18n={i18n}>
      <DirectionProvider initialDirection={isRtl(lang) ? 'rtl' : 'ltr'} detectDirection={false}>
        <MantineProvider theme={theme} defaultColorScheme="light" cssVariablesResolver={cssVariablesResolver}>
          <MemoryRouter initialEntries={[path]}>
            <AppLayout />
          </MemoryRouter>
        </MantineProvider>
      </DirectionProvider>
    </I18nextProvider>,
  );
}

/**
 * The routes the shell is for, with the menu entry each highlights (`none`): the sidebar layout's
 * wide ones, and `/` (which goes to /transfer). The narrow-sidebar screens, and the pages outside
 * the layout, start from index.html's outline.
 */
export function shellRoutes(): ShellManifest['routes'] {
  const wide = LAYOUT_ROUTES.filter((r) => r.narrow !== true).map((r) => r.path);
  return [{ path: '/', menu: 'transfer' }, ...wide.map((path) => ({ path, menu: menuOf(path) }))];
}

function menuOf(path: string): string {
  return activeMenu(path, false)?.slice(1) ?? 'none';
}

/** For each highlighted menu entry, a path of the layout that highlights it (the shell is drawn there). */
export function shellMenus(): Record<string, string> {
  const paths: Record<string, string> = {};
  for (const { path } of LAYOUT_ROUTES) if (!path.includes(':')) paths[menuOf(path)] ??= path;
  return paths;
}
