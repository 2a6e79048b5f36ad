import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { BillingOffers } from '@skyferry/contract';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { authData, initData, mockApi, renderWithProviders } from '../../test/utils.tsx';
import { sessionStore, resetSessionStore } from '../session/store.ts';
import { MessageHost } from '../messages/MessageHost.tsx';
import { BuyPage } from './BuyPage.tsx';

const OFFERS: BillingOffers = {
  mode: 'test',
  currency: 'EUR',
  refund_days: 7,
  portal: false,
  licenses: [
    {
      id: 'month',
      name: '1 Month',
      period: 'monthly',
      months: 1,
      monthly_allowance: 150 * 1024 ** 3,
      price: 1200,
      currency: 'EUR',
    },
    {
      id: 'quarter',
      name: '1 Quarter',
      period: 'quarterly',
      months: 3,
      monthly_allowance: 200 * 1024 ** 3,
      price: 2499,
      currency: 'EUR',
    },
    {
      id: 'year',
      name: '1 Year',
      period: 'yearly',
      months: 12,
      monthly_allowance: 400 * 1024 ** 3,
      price: 6999,
      currency: 'EUR',
    },
  ],
  packets: [
    { id: 'packet_50g', name: '50G', size: 50 * 1024 ** 3, price: 500, currency: 'EUR' },
    { id: 'packet_100g', name: '100G', size: 100 * 1024 ** 3, price: 1699, currency: 'EUR' },
  ],
};

describe('/buy', () => {
  beforeEach(() => {
    resetSessionStore();
    sessionStore.setState({ init: initData({ billing_mode: 'test' }) });
  });
  afterEach(() => vi.restoreAllMocks());

  it("shows each period's licence with price and monthly allowance, the packets, the 7-day refund and Free vs Premium", async () => {
    mockApi({ 'GET /api/billing/offers': () => OFFERS });
    renderWithProviders(<BuyPage />);
    expect(await screen.findByTestId('refund-line')).toHaveTextContent('7-day unconditional full refund');
    const month = screen.getByTestId('plan-month');
    expect(within(month).getByText('1 Month')).toBeInTheDocument();
    expect(within(month).getByTestId('plan-price')).toHaveTextContent('€12.00');
    expect(within(month).getByText('150.00 GB of data per month')).toBeInTheDocument();
    await userEvent.click(screen.getByText('Yearly'));
    expect(within(screen.getByTestId('plan-year')).getByText('400.00 GB of data per month')).toBeInTheDocument();
    // Packets only with a licence.
    expect(screen.getByTestId('buy-packet_50g')).toBeDisabled();
    expect(screen.getByTestId('buy-packet_50g')).toHaveTextContent('Needs a licence');
    expect(screen.getByTestId('plan-table')).toBeInTheDocument();
  });

  it('Buy opens the checkout and polls user info once the window regains focus, until the licence is active', async () => {
    sessionStore.setState({ user: { ...sessionStore.getState().user, access_token: 'token' } });
    let meCalls = 0;
    const paidInfo = { ...authData().user_info, type: 1, expired: 0, expire: Math.floor(Date.now() / 1000) + 86_400 };
    const api = mockApi({
      'GET /api/billing/offers': () => OFFERS,
      'GET /api/billing/orders': () => ({ items: [] }),
      'POST /api/billing/checkout': () => ({
        order_id: 'o1',
        url: '/billing/checkout?checkout=tc_abcdefghijklmnopqrstu',
      }),
      'GET /api/users/me': () => {
        meCalls++;
        return {
          user_info: meCalls >= 2 ? paidInfo : { ...paidInfo, type: 0, expire: 0 },
          my_data_packet: { base: [], additional: [] },
          my_subscribe: [],
        };
      },
    });
    const open = vi.spyOn(window, 'open').mockReturnValue(null);
    renderWithProviders(<BuyPage />);
    await userEvent.click(await screen.findByTestId('buy-licence'));
    await waitFor(() =>
      expect(open).toHaveBeenCalledWith('/billing/checkout?checkout=tc_abcdefghijklmnopqrstu', '_blank'),
    );
    expect(api.calls.filter((c) => c.path === '/api/billing/checkout')[0]?.body).toEqual({ product: 'month' });
    expect(meCalls).toBe(0);
    window.dispatchEvent(new Event('focus'));
    await waitFor(() => expect(meCalls).toBe(1));
    expect(await screen.findByTestId('buy-waiting')).toBeInTheDocument();
  });

  it('a paid user cancels renewal and refunds a purchase within the refund days', async () => {
    const expire = Math.floor(Date.now() / 1000) + 20 * 86_400;
    const paidInfo = { ...authData().user_info, type: 1, expired: 0, expire };
    sessionStore.setState({
      user: {
        ...sessionStore.getState().user,
        access_token: 'token',
        info: paidInfo,
        subscribe: [{ data_packet_name: '1 Month', purchase_state: 1, expires_date: expire }],
      },
    });
    const order = {
      id: 'o1',
      product: 'month',
      amount: 1200,
      currency: 'EUR',
      status: 'paid',
      created_at: 1_790_000_000,
      paid_at: 1_790_000_000,
      refundable: true,
    };
    const api = mockApi({
      'GET /api/billing/offers': () => OFFERS,
      'GET /api/billing/orders': () => ({ items: [order] }),
      'POST /api/billing/cancel': () => null,
      'POST /api/billing/orders/o1/refund': () => ({ ...order, status: 'refunded', refundable: false }),
      'GET /api/users/me': () => ({
        user_info: paidInfo,
        my_data_packet: { base: [], additional: [] },
        my_subscribe: [{ data_packet_name: '1 Month', purchase_state: 0, expires_date: expire }],
      }),
    });
    renderWithProviders(
      <>
        <BuyPage />
        <MessageHost />
      </>,
    );
    await userEvent.click(await screen.findByTestId('cancel-renewal'));
    const confirmCancel = await screen.findByRole('dialog', { name: 'Please confirm' });
    expect(confirmCancel).toHaveTextContent('Stop your licence renewing? It stays active until');
    await userEvent.click(within(confirmCancel).getByRole('button', { name: 'Yes' }));
    await waitFor(() => expect(api.find('POST /api/billing/cancel')).toHaveLength(1));
    await waitFor(() => expect(screen.queryByTestId('cancel-renewal')).toBeNull());
    await waitFor(() => expect(screen.queryByRole('dialog', { name: 'Please confirm' })).toBeNull());

    const row = within(screen.getByTestId('orders')).getByText('1 Month licence').closest('tr') as HTMLElement;
    await userEvent.click(within(row).getByRole('button', { name: 'Refund' }));
    const confirmRefund = await screen.findByRole('dialog', { name: 'Please confirm' });
    expect(confirmRefund).toHaveTextContent('Refund this purchase in full?');
    await userEvent.click(within(confirmRefund).getByRole('button', { name: 'Yes' }));
    await waitFor(() => expect(api.find('POST /api/billing/orders/o1/refund')).toHaveLength(1));
  });
});
