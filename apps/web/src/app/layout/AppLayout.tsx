import { AppShell, Group, NavLink, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link, Outlet, useLocation } from 'react-router';

const MENU = [
  { to: '/transfer', key: 'nav.transfer' },
  { to: '/sync', key: 'nav.sync' },
  { to: '/manage', key: 'nav.manage' },
  { to: '/slim', key: 'nav.slim' },
] as const;

/** The sidebar layout: menu on the side, the current screen in the main area. */
export function AppLayout() {
  const { t } = useTranslation();
  const { pathname } = useLocation();
  return (
    <AppShell header={{ height: 52 }} navbar={{ width: 220, breakpoint: 0 }} padding="md">
      <AppShell.Header>
        <Group h="100%" px="md">
          <img src="/favicon.svg" alt="" width={28} height={28} />
          <Title order={1} size="h4">
            {t('app.name')}
          </Title>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" component="nav" aria-label={t('app.name')}>
        {MENU.map((item) => (
          <NavLink
            key={item.to}
            component={Link}
            to={item.to}
            label={<Text size="sm">{t(item.key)}</Text>}
            active={pathname === item.to || pathname.startsWith(`${item.to}/`)}
          />
        ))}
      </AppShell.Navbar>
      <AppShell.Main>
        <Outlet />
      </AppShell.Main>
    </AppShell>
  );
}
