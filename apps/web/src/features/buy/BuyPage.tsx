import {
  Alert,
  Badge,
  Button,
  Card,
  Group,
  SegmentedControl,
  SimpleGrid,
  Stack,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { IconShieldCheck } from '@tabler/icons-react';
import { formatBytes, formatDate, type BillingOffers, type Order, type ProductId } from '@skyferry/contract';
import { useCallback, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { openLogin } from '../auth/login.ts';
import { confirm } from '../messages/store.ts';
import { toast } from '../messages/toast.ts';
import { refreshMe } from '../session/actions.ts';
import { selectLoggedIn, selectPaid, useSession } from '../session/store.ts';
import { PlanTable } from '../settings/GeneralTab.tsx';
import { billingApi } from './api.ts';
import { startBuyPolling } from './polling.ts';

type Period = 'monthly' | 'quarterly' | 'yearly';

/** An amount in the smallest unit, in the interface language's money format. */
export function formatPrice(amount: number, currency: string, language: string): string {
  try {
    const digits =
      new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
    return new Intl.NumberFormat(language, { style: 'currency', currency }).format(amount / 10 ** digits);
  } catch {
    return `${(amount / 100).toFixed(2)} ${currency}`;
  }
}

/**
 * /buy (spec sections 2 and 9): the licence for each pricing period with its monthly allowance, the
 * data packets (only with a licence), the prices and currency the operator set, the 7-day full
 * refund, Free vs Premium; Buy opens the checkout and user info is then polled (ST-BUY). The
 * buyer's purchases below can be refunded within the refund days, and renewal cancelled.
 */
export function BuyPage() {
  const { t, i18n } = useTranslation('buy');
  const loggedIn = useSession(selectLoggedIn);
  const paid = useSession(selectPaid);
  const subscribe = useSession((s) => s.user.subscribe);
  const [offers, setOffers] = useState<BillingOffers | null>(null);
  const [orders, setOrders] = useState<Order[]>([]);
  const [period, setPeriod] = useState<Period>('monthly');
  const [busy, setBusy] = useState<ProductId | null>(null);
  const [waiting, setWaiting] = useState(false);

  const loadOrders = useCallback(() => {
    if (!loggedIn) return;
    billingApi
      .orders()
      .then((d) => setOrders(d.items))
      .catch(() => undefined);
  }, [loggedIn]);

  useEffect(() => {
    billingApi
      .offers()
      .then(setOffers)
      .catch(() => undefined);
    loadOrders();
  }, [loadOrders]);

  const packets = useSession((s) => s.user.data_packet.additional.length);
  useEffect(() => {
    // The purchase went through: the polling saw the licence (or packet) arrive.
    if (paid) loadOrders();
  }, [paid, subscribe.length, packets, loadOrders]);

  if (!offers) return <Title order={2}>{t('title')}</Title>;
  const price = (amount: number) => formatPrice(amount, offers.currency, i18n.language);

  const buy = async (product: ProductId) => {
    if (!loggedIn) {
      toast.info(t('loginFirst'));
      await openLogin();
      return;
    }
    setBusy(product);
    try {
      const { url } = await billingApi.checkout(product);
      startBuyPolling();
      setWaiting(true);
      window.open(url, '_blank');
    } catch (err) {
      toast.error(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(null);
    }
  };

  const refund = async (order: Order) => {
    if ((await confirm({ message: t('refundConfirm'), danger: true })) !== 'yes') return;
    try {
      await billingApi.refund(order.id);
      toast.success(t('refunded'));
      await refreshMe();
      loadOrders();
    } catch (err) {
      toast.error(err instanceof Error ? err.message : String(err));
    }
  };

  const cancelRenewal = async () => {
    const end = subscribe.find((s) => s.purchase_state === 1)?.expires_date ?? 0;
    if ((await confirm({ message: t('cancelConfirm', { date: formatDate(end * 1000) }) })) !== 'yes') return;
    await billingApi.cancel();
    toast.success(t('cancelled'));
    await refreshMe();
  };

  const licence = offers.licenses.find((l) => l.period === period) ?? offers.licenses[0];
  const renewing = subscribe.some((s) => s.purchase_state === 1);

  return (
    <Stack gap="lg" data-testid="buy-page">
      <Stack gap={4}>
        <Title order={2}>{t('title')}</Title>
        <Text c="dimmed">{t('subtitle')}</Text>
      </Stack>
      {offers.mode === 'off' ? (
        <Alert color="blue" variant="light">
          {t('off')}
        </Alert>
      ) : (
        <>
          {waiting && !paid && (
            <Alert color="blue" variant="light" data-testid="buy-waiting">
              {t('waiting')}
            </Alert>
          )}
          {paid && (
            <Alert color="teal" variant="light" data-testid="buy-active">
              {t('active')}
            </Alert>
          )}
          <Group gap="xs">
            <IconShieldCheck size={18} color="var(--mantine-color-teal-7)" aria-hidden />
            <Text fw={600} data-testid="refund-line">
              {t('refundLine', { days: offers.refund_days })}
            </Text>
          </Group>
          <SegmentedControl
            value={period}
            onChange={(v) => setPeriod(v as Period)}
            data={offers.licenses.map((l) => ({ value: l.period, label: t(`periods.${l.period}`) }))}
            data-testid="period-switch"
          />
          {licence && (
            <Card withBorder padding="lg" maw={420} data-testid={`plan-${licence.id}`}>
              <Stack gap="xs">
                <Group justify="space-between">
                  <Title order={3} size="h4">
                    {t(`plans.${licence.id}`)}
                  </Title>
                  <Badge variant="light">{t('autoRenew')}</Badge>
                </Group>
                <Text size="xl" fw={700} data-testid="plan-price">
                  {price(licence.price)}
                </Text>
                <Text size="sm">{t('perMonth', { size: formatBytes(licence.monthly_allowance) })}</Text>
                <Text size="sm" c="dimmed">
                  {t(`renews.${licence.period}`)}
                </Text>
                <Button onClick={() => void buy(licence.id)} loading={busy === licence.id} data-testid="buy-licence">
                  {t('buy')}
                </Button>
              </Stack>
            </Card>
          )}
          <Stack gap="xs">
            <Title order={3} size="h4">
              {t('packets')}
            </Title>
            <Text size="sm" c="dimmed">
              {t('packetsNote')}
            </Text>
            <SimpleGrid cols={{ base: 1, sm: 2 }} maw={640}>
              {offers.packets.map((p) => (
                <Card withBorder key={p.id} data-testid={`packet-${p.id}`}>
                  <Stack gap={6}>
                    <Text fw={600}>{formatBytes(p.size)}</Text>
                    <Text>{price(p.price)}</Text>
                    <Button
                      variant="light"
                      onClick={() => void buy(p.id)}
                      disabled={!paid}
                      loading={busy === p.id}
                      data-testid={`buy-${p.id}`}
                    >
                      {paid ? t('buy') : t('packetsNeedLicence')}
                    </Button>
                  </Stack>
                </Card>
              ))}
            </SimpleGrid>
          </Stack>
          <PlanTable />
          {orders.length > 0 && (
            <Stack gap="xs">
              <Group justify="space-between">
                <Title order={3} size="h4">
                  {t('orders')}
                </Title>
                <Group gap="xs">
                  {renewing && (
                    <Button
                      size="xs"
                      variant="default"
                      onClick={() => void cancelRenewal()}
                      data-testid="cancel-renewal"
                    >
                      {t('cancelRenewal')}
                    </Button>
                  )}
                  {offers.portal && (
                    <Button
                      size="xs"
                      variant="default"
                      onClick={() => void billingApi.portal().then(({ url }) => window.open(url, '_blank'))}
                    >
                      {t('manage')}
                    </Button>
                  )}
                </Group>
              </Group>
              <Table withTableBorder data-testid="orders">
                <Table.Tbody>
                  {orders.map((o) => (
                    <Table.Tr key={o.id}>
                      <Table.Td>{t(`products.${o.product}`)}</Table.Td>
                      <Table.Td>{formatDate(o.created_at * 1000)}</Table.Td>
                      <Table.Td>{price(o.amount)}</Table.Td>
                      <Table.Td>{t(`status.${o.status}`)}</Table.Td>
                      <Table.Td>
                        {o.refundable && (
                          <Button size="xs" variant="subtle" color="red" onClick={() => void refund(o)}>
                            {t('refundAction')}
                          </Button>
                        )}
                      </Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            </Stack>
          )}
        </>
      )}
    </Stack>
  );
}
