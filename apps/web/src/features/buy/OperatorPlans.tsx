import { Button, Group, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { LICENSES, formatBytes, formatDate, type LicenseId, type UsageReport } from '@skyferry/contract';
import { useCallback, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { api } from '../../api/client.ts';
import { toast } from '../messages/toast.ts';
import { selectBillingOn, useSession } from '../session/store.ts';

const operatorBilling = {
  usage: () => api<UsageReport>('/api/operator/billing/usage', { method: 'GET', query: { page_size: 100 } }),
  grant: (uid: string, plan: LicenseId, until?: number) =>
    api<unknown>(`/api/operator/users/${encodeURIComponent(uid)}/plan`, {
      method: 'PUT',
      body: { plan, ...(until !== undefined ? { until } : {}) },
    }),
  revoke: (uid: string) => api<unknown>(`/api/operator/users/${encodeURIComponent(uid)}/plan`, { method: 'DELETE' }),
};

/**
 * The operator's plans (billing on): per account its plan, end and traffic used; give a plan (until
 * a date, or the plan's months), extend the current one, or take it back. The server audits each.
 */
export function OperatorPlans() {
  const { t } = useTranslation('buy');
  const billingOn = useSession(selectBillingOn);
  const [report, setReport] = useState<UsageReport | null>(null);
  const [plan, setPlan] = useState<Record<string, LicenseId>>({});
  const [until, setUntil] = useState<Record<string, string>>({});

  const load = useCallback(() => {
    operatorBilling
      .usage()
      .then(setReport)
      .catch(() => undefined);
  }, []);
  useEffect(() => {
    if (billingOn) load();
  }, [billingOn, load]);
  if (!billingOn || !report) return null;

  const act = async (fn: () => Promise<unknown>) => {
    try {
      await fn();
      toast.success(t('operator.saved'));
      load();
    } catch (err) {
      toast.error(err instanceof Error ? err.message : String(err));
    }
  };

  return (
    <Stack gap="xs" data-testid="operator-plans">
      <Title order={3} size="h5">
        {t('operator.title')}
      </Title>
      <Table withTableBorder>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>{t('operator.account')}</Table.Th>
            <Table.Th>{t('operator.plan')}</Table.Th>
            <Table.Th>{t('operator.used')}</Table.Th>
            <Table.Th>{t('operator.change')}</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {report.items.map((row) => {
            const chosen = plan[row.uid] ?? 'month';
            const date = until[row.uid] ?? '';
            return (
              <Table.Tr key={row.uid}>
                <Table.Td>{row.email}</Table.Td>
                <Table.Td>
                  {row.plan ? `${t(`plans.${row.plan}`)} · ${formatDate(row.expire * 1000)}` : t('operator.free')}
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{`${formatBytes(row.used)} / ${formatBytes(row.allowance)}`}</Text>
                </Table.Td>
                <Table.Td>
                  <Group gap={6} wrap="nowrap">
                    <Select
                      size="xs"
                      w={120}
                      aria-label={t('operator.plan')}
                      value={chosen}
                      onChange={(v) => v && setPlan({ ...plan, [row.uid]: v as LicenseId })}
                      data={LICENSES.map((l) => ({ value: l.id, label: t(`plans.${l.id}`) }))}
                    />
                    <TextInput
                      size="xs"
                      type="date"
                      aria-label={t('operator.until')}
                      value={date}
                      onChange={(e) => setUntil({ ...until, [row.uid]: e.currentTarget.value })}
                    />
                    <Button
                      size="xs"
                      onClick={() =>
                        void act(() =>
                          operatorBilling.grant(
                            row.uid,
                            chosen,
                            date ? Math.floor(Date.parse(date) / 1000) + 86_399 : undefined,
                          ),
                        )
                      }
                    >
                      {t('operator.grant')}
                    </Button>
                    {row.plan && (
                      <Button
                        size="xs"
                        variant="subtle"
                        color="red"
                        onClick={() => void act(() => operatorBilling.revoke(row.uid))}
                      >
                        {t('operator.revoke')}
                      </Button>
                    )}
                  </Group>
                </Table.Td>
              </Table.Tr>
            );
          })}
        </Table.Tbody>
      </Table>
    </Stack>
  );
}
