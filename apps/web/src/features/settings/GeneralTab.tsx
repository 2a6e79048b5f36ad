import { Alert, Button, Group, Progress, Stack, Table, Text, Title } from '@mantine/core';
import { IconCheck, IconMinus } from '@tabler/icons-react';
import { LIMITS, LICENSES, formatBytes, formatDate } from '@skyferry/contract';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { openLogin } from '../auth/login.ts';
import { selectBillingOn, selectLoggedIn, selectPaid, useSession } from '../session/store.ts';
import { toMs, type DataPacketItem } from '../session/types.ts';
import { packetUsage } from '../shell/plan.ts';
import { closeSettings } from '../shell/store.ts';

const FEATURE_ROWS = ['transfer', 'sync', 'schedule', 'offline', 'filter', 'cleanup', 'packets'] as const;

/** General: account, data usage per packet with end time, Free vs Premium, Renew or Upgrade. */
export function GeneralTab() {
  const { t } = useTranslation('settings');
  const navigate = useNavigate();
  const user = useSession((s) => s.user);
  const loggedIn = useSession(selectLoggedIn);
  const paidUser = useSession(selectPaid);
  const billingOn = useSession(selectBillingOn);
  const goBuy = () => {
    closeSettings();
    navigate('/buy');
  };
  return (
    <Stack gap="lg">
      <Stack gap={4}>
        <Title order={3} size="h5">
          {t('general.account')}
        </Title>
        {loggedIn ? (
          <Text size="sm" data-testid="settings-email">
            {user.email}
          </Text>
        ) : (
          <Group gap="sm">
            <Text size="sm" c="dimmed">
              {t('general.notLoggedIn')}
            </Text>
            <Button size="xs" variant="light" onClick={() => void openLogin()}>
              {t('general.login')}
            </Button>
          </Group>
        )}
      </Stack>
      {!billingOn && (
        <Alert color="blue" variant="light" title={t('general.allFeaturesTitle')}>
          {t('general.allFeatures')}
        </Alert>
      )}
      {billingOn && loggedIn && (
        <Stack gap="xs">
          <Title order={3} size="h5">
            {t('general.dataUsage')}
          </Title>
          <PacketRows label={t('general.basePacket')} items={user.data_packet.base} />
          <PacketRows label={t('general.additionalPacket')} items={user.data_packet.additional} />
          {user.data_packet.base.length + user.data_packet.additional.length === 0 && (
            <Text size="sm" c="dimmed">
              {t('general.noPackets')}
            </Text>
          )}
        </Stack>
      )}
      {billingOn && (
        <Stack gap="xs">
          <Title order={3} size="h5">
            {t('general.compare')}
          </Title>
          <PlanTable />
          <Group>
            <Button onClick={goBuy} data-testid="renew-upgrade">
              {paidUser ? t('general.renew') : t('general.upgrade')}
            </Button>
          </Group>
        </Stack>
      )}
    </Stack>
  );
}

/** Free vs Premium (spec section 9: cloud management is free, every other feature is paid). */
export function PlanTable() {
  const { t } = useTranslation('settings');
  const minAllowance = formatBytes(Math.min(...LICENSES.map((l) => l.monthlyAllowance)));
  const maxAllowance = formatBytes(Math.max(...LICENSES.map((l) => l.monthlyAllowance)));
  return (
    <Table withTableBorder striped data-testid="plan-table">
      <Table.Thead>
        <Table.Tr>
          <Table.Th scope="col">{t('general.feature')}</Table.Th>
          <Table.Th scope="col">{t('general.free')}</Table.Th>
          <Table.Th scope="col">{t('general.premium')}</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        <Table.Tr>
          <Table.Th scope="row" fw={400}>
            {t('general.rows.clouds')}
          </Table.Th>
          <Table.Td>{LIMITS.freeCloudDrives}</Table.Td>
          <Table.Td>{LIMITS.maxCloudDrives}</Table.Td>
        </Table.Tr>
        <Table.Tr>
          <Table.Th scope="row" fw={400}>
            {t('general.rows.traffic')}
          </Table.Th>
          <Table.Td>
            <No label={t('general.notIncluded')} />
          </Table.Td>
          <Table.Td>{t('general.perMonth', { min: minAllowance, max: maxAllowance })}</Table.Td>
        </Table.Tr>
        {FEATURE_ROWS.map((row) => (
          <Table.Tr key={row}>
            <Table.Th scope="row" fw={400}>
              {t(`general.rows.${row}`)}
            </Table.Th>
            <Table.Td>
              {row === 'cleanup' ? (
                t('general.firstResults', { count: LIMITS.freeCleanupResults })
              ) : (
                <No label={t('general.notIncluded')} />
              )}
            </Table.Td>
            <Table.Td>
              <IconCheck size={16} color="var(--mantine-color-teal-7)" aria-label={t('general.included')} />
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

function No({ label }: { label: string }) {
  return <IconMinus size={16} color="var(--mantine-color-gray-6)" aria-label={label} />;
}

function PacketRows({ label, items }: { label: string; items: DataPacketItem[] }) {
  const { t } = useTranslation('settings');
  return (
    <>
      {items.map((item, i) => {
        const usage = packetUsage([item]);
        const end = toMs(item.end_time);
        const from = toMs(item.deduction_time);
        return (
          <Stack key={`${label}-${i}`} gap={2} data-testid="packet-row">
            <Group justify="space-between" gap="xs">
              <Text size="sm">{item.name || label}</Text>
              <Text size="xs" c="dimmed">
                {formatBytes(item.usage)} / {formatBytes(item.size)}
                {from ? ` · ${t('general.deductionTime', { date: formatDate(from) })}` : ''}
                {end ? ` · ${t('general.endTime', { date: formatDate(end) })}` : ''}
              </Text>
            </Group>
            <Progress value={usage.percent} color={usage.colour} size="sm" aria-label={item.name || label} />
          </Stack>
        );
      })}
    </>
  );
}
