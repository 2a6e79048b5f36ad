import { Anchor, Badge, Box, Button, Divider, Group, Progress, Stack, Text, UnstyledButton } from '@mantine/core';
import {
  IconBook,
  IconCrown,
  IconDownload,
  IconHeadset,
  IconInfoCircle,
  IconLogout,
  IconMessage,
  IconSettings,
} from '@tabler/icons-react';
import { formatBytes } from '@skyferry/contract';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { openLogin } from '../auth/login.ts';
import { confirm, withLoading } from '../messages/store.ts';
import { logout } from '../session/actions.ts';
import { selectBillingOn, selectLoggedIn, selectPaid, useSession } from '../session/store.ts';
import { packetUsage, planLine } from './plan.ts';
import { openAbout, openFeedback, openSettings, openSupport, openUpgrade, openUserGuide } from './store.ts';
import { VisitorNotice } from './VisitorNotice.tsx';

/** Asks "Are you sure to log out?" and logs out on Yes. */
export async function confirmLogout(t: (key: string) => string): Promise<void> {
  const answer = await confirm({ message: t('user.logoutConfirm'), danger: true });
  if (answer === 'yes') await withLoading(logout());
}

/**
 * The user hover panel (spec section 2): e-mail or "Log in Here.", usage bars (the additional one
 * only when paid), plan with "Next billing date" or "Expired date", premium status or Buy Now,
 * Settings, User Guide, Support, the desktop-only entries, and Log out.
 */
export function UserPanel({ onAction }: { onAction?: () => void }) {
  const { t } = useTranslation('shell');
  const navigate = useNavigate();
  const user = useSession((s) => s.user);
  const loggedIn = useSession(selectLoggedIn);
  const paidUser = useSession(selectPaid);
  const billingOn = useSession(selectBillingOn);
  const runtime = useSession((s) => s.settings.runtime);
  const desktop = runtime !== 'web';
  const base = packetUsage(user.data_packet.base);
  const additional = packetUsage(user.data_packet.additional);
  const plan = planLine(user);
  const act = (fn: () => void) => () => {
    onAction?.();
    fn();
  };

  const entries: Array<{ key: string; label: string; icon: typeof IconSettings; run: () => void }> = [
    { key: 'settings', label: t('user.settings'), icon: IconSettings, run: () => openSettings() },
    { key: 'guide', label: t('user.guide'), icon: IconBook, run: openUserGuide },
    { key: 'support', label: t('user.support'), icon: IconHeadset, run: openSupport },
  ];
  if (desktop) {
    entries.push(
      { key: 'feedback', label: t('user.feedback'), icon: IconMessage, run: openFeedback },
      { key: 'about', label: t('user.about'), icon: IconInfoCircle, run: openAbout },
      {
        key: 'updates',
        label: t('user.checkUpdates'),
        icon: IconDownload,
        run: openUpgrade,
      },
    );
  }

  return (
    <Stack gap="sm" w={272} data-testid="user-panel">
      <Box>
        {loggedIn ? (
          <Text fw={600} size="sm" truncate="end" data-testid="user-email">
            {user.email}
          </Text>
        ) : (
          <Stack gap="xs">
            <Anchor component="button" type="button" fw={600} size="sm" onClick={act(() => void openLogin())}>
              {t('user.loginHere')}
            </Anchor>
            <VisitorNotice onAction={onAction} />
          </Stack>
        )}
      </Box>
      {loggedIn && billingOn && (
        <Stack gap={6}>
          <UsageBar label={t('user.baseUsage')} usage={base} testId="base-usage" />
          {paidUser && <UsageBar label={t('user.additionalUsage')} usage={additional} testId="additional-usage" />}
        </Stack>
      )}
      {loggedIn && billingOn && (
        <Box data-testid="plan">
          <Text size="sm" fw={500}>
            {plan.name ?? (paidUser ? t('user.planPremium') : t('user.planFree'))}
          </Text>
          {plan.dateLabel && plan.date && (
            <Text size="xs" c="dimmed" data-testid="plan-date">
              {t(plan.dateLabel === 'nextBilling' ? 'user.nextBilling' : 'user.expiredDate')}: {plan.date}
            </Text>
          )}
        </Box>
      )}
      {loggedIn &&
        (paidUser || !billingOn ? (
          <Badge
            leftSection={<IconCrown size={12} aria-hidden />}
            color="blue"
            variant="outline"
            data-testid="premium-status"
          >
            {billingOn ? t('user.premiumActive') : t('user.allFeatures')}
          </Badge>
        ) : (
          <Button size="xs" leftSection={<IconCrown size={14} aria-hidden />} onClick={act(() => navigate('/buy'))}>
            {t('user.buyNow')}
          </Button>
        ))}
      <Divider />
      <Stack gap={0}>
        {entries.map((e) => (
          <UnstyledButton key={e.key} onClick={act(e.run)} className="sf-menu-entry" data-entry={e.key}>
            <Group gap={8} px={6} py={6}>
              <e.icon size={16} aria-hidden />
              <Text size="sm">{e.label}</Text>
            </Group>
          </UnstyledButton>
        ))}
        {loggedIn && (
          <UnstyledButton
            onClick={act(() => void confirmLogout((k) => t(k)))}
            className="sf-menu-entry"
            data-entry="logout"
          >
            <Group gap={8} px={6} py={6}>
              <IconLogout size={16} aria-hidden />
              <Text size="sm">{t('user.logout')}</Text>
            </Group>
          </UnstyledButton>
        )}
      </Stack>
    </Stack>
  );
}

function UsageBar({ label, usage, testId }: { label: string; usage: ReturnType<typeof packetUsage>; testId: string }) {
  return (
    <Box data-testid={testId}>
      <Group justify="space-between" gap={4} mb={2}>
        <Text size="xs">{label}</Text>
        <Text size="xs" c="dimmed">
          {formatBytes(usage.used)} / {formatBytes(usage.total)}
        </Text>
      </Group>
      <Progress value={usage.percent} color={usage.colour} size="sm" aria-label={label} />
    </Box>
  );
}
