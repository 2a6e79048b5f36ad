import { ActionIcon, Anchor, Box, Burger, Group, Popover, Title, Tooltip, useDirection } from '@mantine/core';
import {
  IconApps,
  IconArrowLeft,
  IconArrowRight,
  IconCopy,
  IconCrown,
  IconHome,
  IconListDetails,
  IconMinus,
  IconSquare,
  IconUserCircle,
  IconX,
} from '@tabler/icons-react';
import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate } from 'react-router';
import { AppTabs } from '../../app/slots.tsx';
import { QuestionnairePrompt } from '../messages/Overlays.tsx';
import { CloseSurvey } from '../buy/CloseSurvey.tsx';
import { closeSurveyAllowed, closeWithSurvey, lastCloseSurveyAt, transferUsed } from '../buy/close-survey.ts';
import { patchSettings, selectBillingOn, selectPaid, selectVisibleClouds, useSession } from '../session/store.ts';
import { desktopBridge } from './desktop.ts';
import { openTransmissionList } from './store.ts';
import { UserPanel } from './UserPanel.tsx';
import { VisitorBadge } from './VisitorNotice.tsx';
import classes from './Header.module.css';

export interface HeaderProps {
  /** Whether the sidebar's drawer (phones) is open. */
  navOpened?: boolean;
  onToggleNav?: () => void;
}

/**
 * The header: menu button (phones), logo and name, back/forward, home (Mac), app tabs, Premium,
 * user panel, task list, window controls. On phones the browser's own back/forward and the
 * questionnaire's label give way so that the icons fit.
 */
export function Header({ navOpened = false, onToggleNav }: HeaderProps) {
  const { t } = useTranslation('shell');
  const navigate = useNavigate();
  const runtime = useSession((s) => s.settings.runtime);
  const billingOn = useSession(selectBillingOn);
  const paidUser = useSession(selectPaid);
  const desktop = runtime !== 'web';
  const { dir } = useDirection();
  const Back = dir === 'rtl' ? IconArrowRight : IconArrowLeft;
  const Forward = dir === 'rtl' ? IconArrowLeft : IconArrowRight;
  return (
    <Group h="100%" px="sm" gap="xs" wrap="nowrap" className={desktop ? classes.dragRegion : undefined}>
      {onToggleNav && (
        <Burger
          opened={navOpened}
          onClick={onToggleNav}
          size="sm"
          hiddenFrom="sm"
          className={classes.noDrag}
          aria-label={t('nav.open')}
          aria-expanded={navOpened}
          aria-controls="nav-drawer"
          data-testid="nav-burger"
        />
      )}
      <Group gap={6} wrap="nowrap" className={classes.noDrag}>
        <img src="/favicon.svg" alt="" width={26} height={26} />
        <Title order={1} size="h4" style={{ whiteSpace: 'nowrap' }}>
          {t('common:app.name')}
        </Title>
      </Group>
      <Group gap={2} wrap="nowrap" className={classes.noDrag} ms="sm" visibleFrom="sm">
        <Tooltip label={t('header.back')}>
          <ActionIcon variant="subtle" color="gray" aria-label={t('header.back')} onClick={() => navigate(-1)}>
            <Back size={18} aria-hidden />
          </ActionIcon>
        </Tooltip>
        <Tooltip label={t('header.forward')}>
          <ActionIcon variant="subtle" color="gray" aria-label={t('header.forward')} onClick={() => navigate(1)}>
            <Forward size={18} aria-hidden />
          </ActionIcon>
        </Tooltip>
        {runtime === 'app-mac' && (
          <Tooltip label={t('header.home')}>
            <ActionIcon
              variant="subtle"
              color="gray"
              aria-label={t('header.home')}
              onClick={() => navigate('/')}
              data-testid="mac-home"
            >
              <IconHome size={18} aria-hidden />
            </ActionIcon>
          </Tooltip>
        )}
      </Group>
      <Box className={`${classes.tabs} ${classes.noDrag}`}>
        <Tooltip label={t('header.apps')}>
          <ActionIcon
            component={Link}
            to="/ecology"
            variant="subtle"
            color="gray"
            aria-label={t('header.apps')}
            data-guide="menu-ecology"
          >
            <IconApps size={18} aria-hidden />
          </ActionIcon>
        </Tooltip>
        <AppTabs />
      </Box>
      <Group gap={4} wrap="nowrap" className={classes.noDrag}>
        <Box visibleFrom="sm">
          <QuestionnairePrompt />
        </Box>
        {billingOn && (
          <Anchor
            component={Link}
            to="/buy"
            size="sm"
            fw={600}
            className={classes.premium}
            aria-label={t('header.premium')}
          >
            <IconCrown
              size={16}
              aria-hidden
              color="var(--mantine-color-yellow-7)"
              style={{ verticalAlign: 'text-bottom' }}
            />
            <span className={classes.premiumLabel}> {t('header.premium')}</span>
          </Anchor>
        )}
        <VisitorBadge />
        <UserMenu />
        {billingOn && (
          <Tooltip label={paidUser ? t('header.premiumActive') : t('header.premiumInactive')}>
            <Box
              component="span"
              role="img"
              aria-label={paidUser ? t('header.premiumActive') : t('header.premiumInactive')}
              data-testid="premium-icon"
              data-paid={paidUser || undefined}
              className={classes.premiumIcon}
            >
              <IconCrown
                size={18}
                aria-hidden
                color={paidUser ? 'var(--mantine-color-yellow-6)' : 'var(--mantine-color-gray-5)'}
              />
            </Box>
          </Tooltip>
        )}
        <Tooltip label={t('header.taskList')}>
          <ActionIcon variant="subtle" color="gray" aria-label={t('header.taskList')} onClick={openTransmissionList}>
            <IconListDetails size={18} aria-hidden />
          </ActionIcon>
        </Tooltip>
        {desktop && <WindowControls />}
      </Group>
    </Group>
  );
}

/** The user icon: hovering (or clicking, or Enter/Space) opens the user panel. */
function UserMenu() {
  const { t } = useTranslation('shell');
  const [opened, setOpened] = useState(false);
  // Opened from the keyboard: focus moves into the panel and stays there until it closes.
  const [byKeyboard, setByKeyboard] = useState(false);
  const closeTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const openNow = () => {
    clearTimeout(closeTimer.current);
    setOpened(true);
  };
  const closeSoon = () => {
    if (byKeyboard) return;
    clearTimeout(closeTimer.current);
    closeTimer.current = setTimeout(() => setOpened(false), 200);
  };
  const change = (next: boolean) => {
    setOpened(next);
    if (!next) setByKeyboard(false);
  };
  useEffect(() => () => clearTimeout(closeTimer.current), []);
  return (
    <Popover
      opened={opened}
      onChange={change}
      position="bottom-end"
      shadow="md"
      withArrow
      trapFocus={byKeyboard}
      returnFocus
    >
      <Popover.Target>
        <ActionIcon
          variant="subtle"
          color="gray"
          size="lg"
          aria-label={t('header.user')}
          aria-expanded={opened}
          aria-haspopup="dialog"
          onMouseEnter={openNow}
          onMouseLeave={closeSoon}
          onClick={(event: React.MouseEvent) => {
            // Enter and Space make a click with no pointer detail.
            if (event.detail === 0) setByKeyboard(true);
            openNow();
          }}
          data-testid="user-icon"
        >
          <IconUserCircle size={22} aria-hidden />
        </ActionIcon>
      </Popover.Target>
      <Popover.Dropdown onMouseEnter={openNow} onMouseLeave={closeSoon} aria-label={t('header.user')}>
        <UserPanel onAction={() => change(false)} />
      </Popover.Dropdown>
    </Popover>
  );
}

/** Minimize, maximize/restore and close: desktop client only. */
export function WindowControls() {
  const { t } = useTranslation('shell');
  const maximized = useSession((s) => s.settings.maximized);
  useEffect(() => {
    const bridge = desktopBridge();
    return bridge?.onMaximizedChange?.((m) => patchSettings({ maximized: m }));
  }, []);
  const init = useSession((s) => s.init);
  const paid = useSession(selectPaid);
  const hasClouds = useSession((s) => selectVisibleClouds(s).length > 0);
  const bridge = desktopBridge();
  if (!bridge) return null;
  // ST-SURV: on close, the survey when its rules allow, then the window closes.
  const closeWindow = () =>
    closeWithSurvey(
      closeSurveyAllowed(init?.popup_nps_rules, lastCloseSurveyAt(), Date.now(), {
        paid,
        hasClouds,
        usedTransfer: transferUsed(),
      }),
      () => bridge.close(),
    );
  return (
    <Group gap={0} ms="xs" wrap="nowrap" data-testid="window-controls">
      <CloseSurvey />
      <ActionIcon variant="subtle" color="gray" aria-label={t('window.minimize')} onClick={() => bridge.minimize()}>
        <IconMinus size={16} aria-hidden />
      </ActionIcon>
      <ActionIcon
        variant="subtle"
        color="gray"
        aria-label={maximized ? t('window.restore') : t('window.maximize')}
        onClick={() => {
          bridge.toggleMaximize();
          patchSettings({ maximized: bridge.isMaximized?.() ?? !maximized });
        }}
      >
        {maximized ? <IconCopy size={14} aria-hidden /> : <IconSquare size={14} aria-hidden />}
      </ActionIcon>
      <ActionIcon variant="subtle" color="red" aria-label={t('window.close')} onClick={closeWindow}>
        <IconX size={16} aria-hidden />
      </ActionIcon>
    </Group>
  );
}
