import { AppShell, Box } from '@mantine/core';
import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { Outlet, useMatches } from 'react-router';
import { useGuideSteps } from '../../features/guide/steps.ts';
import { BannerBox, QrPanel, ServiceNoticeBox } from '../../features/messages/Overlays.tsx';
import { useSession } from '../../features/session/store.ts';
import { Header } from '../../features/shell/Header.tsx';
import { Sidebar } from '../../features/shell/Sidebar.tsx';

export const SIDEBAR_WIDTH = 232;
export const NARROW_SIDEBAR_WIDTH = 64;

/** Route handles the layout reads: `narrow` selects the narrow sidebar; `titleKey` names the page. */
export interface LayoutHandle {
  narrow?: boolean;
  titleKey?: string;
}

/** The sidebar layout: header, sidebar (narrow on some screens), notices, and the current screen. */
export function AppLayout() {
  const { t } = useTranslation('shell');
  const matches = useMatches();
  const narrow = matches.some((m) => (m.handle as LayoutHandle | undefined)?.narrow === true);
  const titleKey = [...matches].reverse().find((m) => (m.handle as LayoutHandle | undefined)?.titleKey)?.handle as
    LayoutHandle | undefined;
  const pageTitle = titleKey?.titleKey ? t(`common:${titleKey.titleKey}`) : '';
  useEffect(() => {
    document.title = pageTitle ? `${pageTitle} · Skyferry` : 'Skyferry';
  }, [pageTitle]);
  const started = useSession((s) => s.started);
  // First visit: where to add a drive, free up storage and find apps.
  useGuideSteps(['add-drive', 'menu-slimming', 'menu-ecology'], started);
  return (
    <AppShell
      header={{ height: 52 }}
      navbar={{ width: narrow ? NARROW_SIDEBAR_WIDTH : SIDEBAR_WIDTH, breakpoint: 0 }}
      padding="md"
      data-narrow={narrow || undefined}
    >
      <AppShell.Header component="header">
        <a href="#main-content" className="sf-skip-link">
          {t('nav.skip')}
        </a>
        <Header />
      </AppShell.Header>
      <AppShell.Navbar p="xs" component="nav" aria-label={t('nav.label')}>
        <Sidebar narrow={narrow} />
      </AppShell.Navbar>
      <AppShell.Main component="main" id="main-content" tabIndex={-1}>
        <ServiceNoticeBox />
        <BannerBox />
        <Box>
          <Outlet />
        </Box>
      </AppShell.Main>
      <QrPanel />
    </AppShell>
  );
}
