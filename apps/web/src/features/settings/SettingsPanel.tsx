import { Modal, ScrollArea, Tabs, Title } from '@mantine/core';
import { useMediaQuery } from '@mantine/hooks';
import {
  IconAdjustments,
  IconBell,
  IconFileExport,
  IconInbox,
  IconLifebuoy,
  IconLanguage,
  IconShieldLock,
  IconUser,
  IconUsers,
} from '@tabler/icons-react';
import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { NARROW_SCREEN } from '../../lib/media.ts';
import { selectLoggedIn, useSession } from '../session/store.ts';
import { closeSettings, setSettingsTab, useShell, type SettingsTab } from '../shell/store.ts';
import { AccountTab } from './AccountTab.tsx';
import { DefaultsTab } from './DefaultsTab.tsx';
import { ExportTab } from './ExportTab.tsx';
import { GeneralTab } from './GeneralTab.tsx';
import { LanguageTab } from './LanguageTab.tsx';
import { NotificationTab } from './NotificationTab.tsx';
import { OperatorTab } from './OperatorTab.tsx';
import { OperatorApps } from '../ecology/OperatorApps.tsx';
import { InboxTab } from '../support/InboxTab.tsx';
import { TicketsTab } from '../support/TicketsTab.tsx';

/**
 * The settings tabs: General, Account and Notification (logged in only), Language, Export Setting,
 * Transfer defaults, and Users for the server's operator.
 */
export function SettingsPanel() {
  const { t } = useTranslation('settings');
  const { t: ts } = useTranslation('support');
  const loggedIn = useSession(selectLoggedIn);
  const operator = useSession((s) => selectLoggedIn(s) && s.user.info?.role === 'operator');
  const requested = useShell((s) => s.settingsTab);
  const tab: SettingsTab =
    ((requested === 'notification' || requested === 'account' || requested === 'support') && !loggedIn) ||
    ((requested === 'operator' || requested === 'inbox') && !operator)
      ? 'general'
      : requested;
  // Small screens: the tabs run across the top instead of down the side.
  const narrow = useMediaQuery(NARROW_SCREEN, false, { getInitialValueInEffect: false });
  useEffect(() => {
    if (tab !== requested) setSettingsTab(tab);
  }, [tab, requested]);
  return (
    <Tabs
      value={tab}
      onChange={(v) => v && setSettingsTab(v as SettingsTab)}
      orientation={narrow ? 'horizontal' : 'vertical'}
      keepMounted={false}
      data-testid="settings-tabs"
    >
      <Tabs.List aria-label={t('title')}>
        <Tabs.Tab value="general" leftSection={<IconUser size={16} aria-hidden />}>
          {t('tabs.general')}
        </Tabs.Tab>
        {loggedIn && (
          <Tabs.Tab value="account" leftSection={<IconShieldLock size={16} aria-hidden />}>
            {t('tabs.account')}
          </Tabs.Tab>
        )}
        <Tabs.Tab value="language" leftSection={<IconLanguage size={16} aria-hidden />}>
          {t('tabs.language')}
        </Tabs.Tab>
        {loggedIn && (
          <Tabs.Tab value="notification" leftSection={<IconBell size={16} aria-hidden />}>
            {t('tabs.notification')}
          </Tabs.Tab>
        )}
        <Tabs.Tab value="export" leftSection={<IconFileExport size={16} aria-hidden />}>
          {t('tabs.export')}
        </Tabs.Tab>
        <Tabs.Tab value="defaults" leftSection={<IconAdjustments size={16} aria-hidden />}>
          {t('tabs.defaults')}
        </Tabs.Tab>
        {operator && (
          <Tabs.Tab value="operator" leftSection={<IconUsers size={16} aria-hidden />}>
            {t('tabs.operator')}
          </Tabs.Tab>
        )}
        {operator && (
          <Tabs.Tab value="inbox" leftSection={<IconInbox size={16} aria-hidden />}>
            {ts('tabs.inbox')}
          </Tabs.Tab>
        )}
        {loggedIn && (
          <Tabs.Tab value="support" leftSection={<IconLifebuoy size={16} aria-hidden />}>
            {ts('tabs.support')}
          </Tabs.Tab>
        )}
      </Tabs.List>
      <ScrollArea.Autosize mah="70vh" style={{ flex: 1 }}>
        <Tabs.Panel value="general" px="lg" py="xs">
          <GeneralTab />
        </Tabs.Panel>
        {loggedIn && (
          <Tabs.Panel value="account" px="lg" py="xs">
            <AccountTab />
          </Tabs.Panel>
        )}
        <Tabs.Panel value="language" px="lg" py="xs">
          <LanguageTab />
        </Tabs.Panel>
        {loggedIn && (
          <Tabs.Panel value="notification" px="lg" py="xs">
            <NotificationTab />
          </Tabs.Panel>
        )}
        <Tabs.Panel value="export" px="lg" py="xs">
          <ExportTab />
        </Tabs.Panel>
        <Tabs.Panel value="defaults" px="lg" py="xs">
          <DefaultsTab />
        </Tabs.Panel>
        {operator && (
          <Tabs.Panel value="operator" px="lg" py="xs">
            <OperatorTab />
            <OperatorApps />
          </Tabs.Panel>
        )}
        {operator && (
          <Tabs.Panel value="inbox" px="lg" py="xs">
            <InboxTab />
          </Tabs.Panel>
        )}
        {loggedIn && (
          <Tabs.Panel value="support" px="lg" py="xs">
            <TicketsTab />
          </Tabs.Panel>
        )}
      </ScrollArea.Autosize>
    </Tabs>
  );
}

/** The Settings dialog, opened from the user panel (and shown as a page at /user). */
export function SettingsDialog() {
  const { t } = useTranslation('settings');
  const opened = useShell((s) => s.settingsOpen);
  return (
    <Modal opened={opened} onClose={closeSettings} title={t('title')} size="xl" centered>
      <SettingsPanel />
    </Modal>
  );
}

/** /user: the settings as a page. */
export function SettingsPage() {
  const { t } = useTranslation('settings');
  return (
    <>
      <Title order={2} mb="md">
        {t('title')}
      </Title>
      <SettingsPanel />
    </>
  );
}
