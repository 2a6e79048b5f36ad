import { Alert, Button, Card, Group, Stack, Table, Text, Title } from '@mantine/core';
import type { Order } from '@skyferry/contract';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useSearchParams } from 'react-router';
import { billingApi } from './api.ts';
import { formatPrice } from './BuyPage.tsx';

/**
 * The built-in checkout of BILLING_MODE=test (DECISIONS): opened by Buy in a window of its own, it
 * shows the order and completes or declines it without any payment network, through the same
 * server code a payment provider's webhook goes through.
 */
export function CheckoutPage() {
  const { t, i18n } = useTranslation('buy');
  const [params] = useSearchParams();
  const checkout = params.get('checkout') ?? '';
  const [order, setOrder] = useState<Order | null>(null);
  const [missing, setMissing] = useState(false);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    billingApi
      .testCheckout(checkout)
      .then(setOrder)
      .catch(() => setMissing(true));
  }, [checkout]);

  const answer = async (action: 'complete' | 'decline') => {
    setBusy(true);
    try {
      setOrder(await billingApi.answerTestCheckout(checkout, action));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Stack maw={480} mx="auto" my="xl" gap="md" data-testid="test-checkout">
      <Title order={2}>{t('checkout.title')}</Title>
      <Text size="sm" c="dimmed">
        {t('checkout.note')}
      </Text>
      {missing && <Alert color="red">{t('checkout.missing')}</Alert>}
      {order && (
        <Card withBorder>
          <Table>
            <Table.Tbody>
              <Table.Tr>
                <Table.Th scope="row">{t('checkout.item')}</Table.Th>
                <Table.Td>{t(`products.${order.product}`)}</Table.Td>
              </Table.Tr>
              <Table.Tr>
                <Table.Th scope="row">{t('checkout.amount')}</Table.Th>
                <Table.Td>{formatPrice(order.amount, order.currency, i18n.language)}</Table.Td>
              </Table.Tr>
            </Table.Tbody>
          </Table>
        </Card>
      )}
      {order?.status === 'pending' && (
        <Group>
          <Button onClick={() => void answer('complete')} loading={busy} data-testid="checkout-pay">
            {t('checkout.pay')}
          </Button>
          <Button
            variant="default"
            onClick={() => void answer('decline')}
            disabled={busy}
            data-testid="checkout-decline"
          >
            {t('checkout.decline')}
          </Button>
        </Group>
      )}
      {order?.status === 'paid' && (
        <Alert color="teal" data-testid="checkout-paid">
          {t('checkout.paid')}
        </Alert>
      )}
      {order?.status === 'declined' && <Alert color="orange">{t('checkout.declined')}</Alert>}
      <Link to="/buy">{t('checkout.back')}</Link>
    </Stack>
  );
}
