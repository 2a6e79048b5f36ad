import { ActionIcon, Box, Tooltip, UnstyledButton } from '@mantine/core';
import { APP_TABS_NARROW_AFTER } from '@skyferry/contract';
import { IconX } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { useLocation, useNavigate } from 'react-router';
import { closeApp, routeOf, useAppTabs } from './tabs.ts';
import classes from './AppTabs.module.css';

/** The header's tabs of open apps: truncated names, a close button each, narrower over 8. */
export function AppTabs() {
  const { t } = useTranslation('apps');
  const tabs = useAppTabs();
  const navigate = useNavigate();
  const location = useLocation();
  const active = location.pathname === '/ecology/app' ? new URLSearchParams(location.search).get('app_id') : null;
  if (tabs.length === 0) return null;
  const narrow = tabs.length > APP_TABS_NARROW_AFTER;
  return (
    <Box
      component="nav"
      aria-label={t('tabs')}
      className={classes.tabs}
      data-narrow={narrow || undefined}
      data-testid="app-tabs"
    >
      {tabs.map((tab) => (
        <Box key={tab.key} className={classes.tab} data-active={tab.key === active || undefined} data-testid="app-tab">
          <Tooltip label={tab.label} openDelay={400}>
            <UnstyledButton
              className={classes.label}
              aria-current={tab.key === active ? 'page' : undefined}
              onClick={() => navigate(`${routeOf(tab)}&is_keeping=1`)}
            >
              {tab.label}
            </UnstyledButton>
          </Tooltip>
          <ActionIcon
            size="xs"
            variant="subtle"
            color="gray"
            aria-label={t('close', { name: tab.label })}
            onClick={() => {
              const next = closeApp(tab.key);
              if (tab.key !== active) return;
              if (next) navigate(`${routeOf(next)}&is_keeping=1`, { replace: true });
              else navigate('/ecology', { replace: true });
            }}
          >
            <IconX size={12} aria-hidden />
          </ActionIcon>
        </Box>
      ))}
    </Box>
  );
}
