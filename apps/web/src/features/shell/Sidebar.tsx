import { NavLink, ScrollArea, Stack, Tooltip } from '@mantine/core';
import { IconArrowsExchange, IconEraser, IconLayoutDashboard, IconListCheck, IconRefresh } from '@tabler/icons-react';
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useLocation, useSearchParams } from 'react-router';
import { selectVisibleClouds, useSession } from '../session/store.ts';
import { CloudList } from './CloudList.tsx';
import classes from './Sidebar.module.css';

export const MENU = [
  { to: '/transfer', key: 'nav.transfer', icon: IconArrowsExchange, guide: undefined },
  { to: '/sync', key: 'nav.sync', icon: IconRefresh, guide: undefined },
  { to: '/manage', key: 'nav.manage', icon: IconLayoutDashboard, guide: undefined },
  { to: '/slim', key: 'nav.slim', icon: IconEraser, guide: 'menu-slimming' },
  { to: '/tasks', key: 'nav.tasks', icon: IconListCheck, guide: undefined },
] as const;

/** Which menu entry the current path belongs to; a cloud row takes the highlight in the explorer. */
export function activeMenu(pathname: string, cloudRowActive: boolean): string | null {
  if (cloudRowActive) return null;
  for (const item of MENU) if (pathname === item.to || pathname.startsWith(`${item.to}/`)) return item.to;
  return null;
}

/** The sidebar: the menu entries and the connected clouds; icons only when narrow; `footer` below. */
export function Sidebar({ narrow, footer }: { narrow: boolean; footer?: ReactNode }) {
  const { t } = useTranslation();
  const { pathname } = useLocation();
  const [params] = useSearchParams();
  const clouds = useSession(selectVisibleClouds);
  const index = Number(params.get('cloud_index') ?? NaN);
  const cloudRowActive =
    (pathname === '/manage/explorer' || pathname === '/manage/photos') && index >= 0 && index < clouds.length;
  const active = activeMenu(pathname, cloudRowActive);
  return (
    <Stack gap={0} h="100%" data-narrow={narrow || undefined} data-testid="sidebar">
      <Stack gap={2} component="ul" style={{ listStyle: 'none', margin: 0, padding: 0 }}>
        {MENU.map((item) => {
          const Icon = item.icon;
          const link = (
            <NavLink
              component={Link}
              to={item.to}
              className={classes.menuLink}
              label={narrow ? undefined : t(item.key)}
              aria-label={narrow ? t(item.key) : undefined}
              leftSection={<Icon size={20} stroke={1.6} aria-hidden />}
              active={active === item.to}
              aria-current={active === item.to ? 'page' : undefined}
              data-guide={item.guide}
              styles={narrow ? { section: { marginInlineEnd: 0 }, root: { justifyContent: 'center' } } : undefined}
            />
          );
          return (
            <li key={item.to}>
              {narrow ? (
                <Tooltip label={t(item.key)} position="right" withArrow>
                  {link}
                </Tooltip>
              ) : (
                link
              )}
            </li>
          );
        })}
      </Stack>
      <ScrollArea style={{ flex: 1 }} type="auto" offsetScrollbars>
        <CloudList narrow={narrow} />
      </ScrollArea>
      {footer}
    </Stack>
  );
}
