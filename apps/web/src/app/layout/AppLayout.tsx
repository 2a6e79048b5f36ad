import { AppShell, Box } from '@mantine/core';
import { useMediaQuery } from '@mantine/hooks';
import { lazy, Suspense, useEffect, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { matchRoutes, Outlet, useLocation, type RouteObject } from 'react-router';
import { useGuideSteps } from '../../features/guide/steps.ts';
import { BannerBox, ServiceNoticeBox } from '../../features/messages/Overlays.tsx';
import { qrPanelVisible } from '../../features/messages/rules.ts';
import { useSession } from '../../features/session/store.ts';
import { Header } from '../../features/shell/Header.tsx';
import { Sidebar } from '../../features/shell/Sidebar.tsx';
import { ScreenLoader } from '../../features/startup/pages.tsx';
import { STORAGE_KEYS, readJson } from '../../lib/storage.ts';
import { preloadScreen } from '../screens.ts';
import { ErrorBoundary } from '../ErrorBoundary.tsx';
import { lazyDialog } from '../lazy-dialog.tsx';
import { withRestStyles } from '../lazy-styles.ts';
import { useFirstPaintDone } from './first-paint.ts';

export const SIDEBAR_WIDTH = 232;
export const NARROW_SIDEBAR_WIDTH = 64;
/** Below this width (Mantine's `sm`) the sidebar is a drawer opened from the header's menu button. */
export const DRAWER_BREAKPOINT = 'sm';
/** The QR panel needs a wide sidebar and room below the clouds; phones never show it. */
const QR_MEDIA = '(min-width: 48em) and (min-height: 700px)';

// The drawer is fetched when first opened; the QR code's encoder when the panel shows.
const NavDrawer = lazyDialog(() => import('./NavDrawer.tsx').then((m) => m.NavDrawer));
const QrPanel = lazy(() =>
  withRestStyles(() => import('../../features/messages/QrPanel.tsx')).then((m) => ({ default: m.QrPanel })),
);

/**
 * Handles of the layout's routes (given as `routes`): `narrow` selects the narrow sidebar;
 * `titleKey` names the page.
 */
export interface LayoutHandle {
  narrow?: boolean;
  titleKey?: string;
}

/**
 * The sidebar layout: header, sidebar (narrow on some screens; a drawer on phones), notices, and
 * the current screen. The header and menu show before start-up has answered; the screen waits.
 */
export function AppLayout({ routes = [] }: { routes?: RouteObject[] }) {
  const { t } = useTranslation('shell');
  const location = useLocation();
  const { pathname, search } = location;
  // The screen's route among the layout's own (`routes`), for its handle.
  const handles = useMemo(
    () => (matchRoutes(routes, location) ?? []).map((m) => m.route.handle as LayoutHandle | undefined),
    [routes, location],
  );
  const narrow = handles.some((h) => h?.narrow === true);
  const titleKey = [...handles].reverse().find((h) => h?.titleKey);
  const pageTitle = titleKey?.titleKey ? t(`common:${titleKey.titleKey}`) : '';
  useEffect(() => {
    document.title = pageTitle ? `${pageTitle} · Skyferry` : 'Skyferry';
  }, [pageTitle]);
  const started = useSession((s) => s.started);
  const painted = useFirstPaintDone();
  // The screen's chunk downloads while start-up runs, once the header and menu are on screen.
  useEffect(() => {
    if (painted) preloadScreen(pathname);
  }, [painted, pathname]);
  // First visit: where to add a drive, free up storage and find apps.
  useGuideSteps(['add-drive', 'menu-slimming', 'menu-ecology'], started);
  const [drawerOpened, setDrawerOpened] = useState(false);
  // Going somewhere from the drawer closes it.
  const [shownAt, setShownAt] = useState(pathname + search);
  if (shownAt !== pathname + search) {
    setShownAt(pathname + search);
    setDrawerOpened(false);
  }
  const qrRoom = useMediaQuery(QR_MEDIA, false, { getInitialValueInEffect: false });
  const [qrWanted] = useState(() => qrPanelVisible(readJson<number | null>(STORAGE_KEYS.qrClosedAt, null), Date.now()));
  const qr =
    qrRoom && qrWanted && !narrow && painted ? (
      <Suspense fallback={null}>
        <QrPanel />
      </Suspense>
    ) : null;
  return (
    <AppShell
      header={{ height: 52 }}
      navbar={{
        width: narrow ? NARROW_SIDEBAR_WIDTH : SIDEBAR_WIDTH,
        breakpoint: DRAWER_BREAKPOINT,
        collapsed: { mobile: true },
      }}
      padding="md"
      data-narrow={narrow || undefined}
    >
      <AppShell.Header component="header">
        <a href="#main-content" className="sf-skip-link">
          {t('nav.skip')}
        </a>
        <Header navOpened={drawerOpened} onToggleNav={() => setDrawerOpened((o) => !o)} />
      </AppShell.Header>
      <AppShell.Navbar p="xs" component="nav" aria-label={t('nav.label')} visibleFrom={DRAWER_BREAKPOINT}>
        <Sidebar narrow={narrow} footer={qr} />
      </AppShell.Navbar>
      <NavDrawer opened={drawerOpened} onClose={() => setDrawerOpened(false)} />
      <AppShell.Main component="main" id="main-content" tabIndex={-1}>
        {/* The notices come with the screen (a new box, keyed): nothing on the page moves down. */}
        {started && (
          <>
            <ServiceNoticeBox />
            <BannerBox />
          </>
        )}
        <Box key={started ? 'screen' : 'starting'}>
          {started ? (
            <ErrorBoundary key={pathname}>
              <Suspense fallback={<ScreenLoader />}>
                <Outlet />
              </Suspense>
            </ErrorBoundary>
          ) : (
            <ScreenLoader />
          )}
        </Box>
      </AppShell.Main>
    </AppShell>
  );
}
