import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { initData, mockApi, renderWithProviders } from '../../test/utils.tsx';
import { resetSessionStore, sessionStore } from '../session/store.ts';
import { OperatorPlans } from './OperatorPlans.tsx';

describe("the operator's plans", () => {
  beforeEach(() => {
    resetSessionStore();
    sessionStore.setState({ init: initData({ billing_mode: 'test' }) });
  });

  it('lists each account with its plan and traffic, gives a plan until a date and takes one back', async () => {
    const api = mockApi({
      'GET /api/operator/billing/usage': () => ({
        total: 2,
        items: [
          { uid: 'u1', email: 'ada@example.com', plan: null, expire: 0, allowance: 0, used: 0, packets: 0 },
          {
            uid: 'u2',
            email: 'bob@example.com',
            plan: 'year',
            expire: 1_900_000_000,
            allowance: 1024 ** 3,
            used: 512 * 1024 ** 2,
            packets: 0,
          },
        ],
      }),
      'PUT /api/operator/users/u1/plan': () => ({}),
      'DELETE /api/operator/users/u2/plan': () => ({}),
    });
    renderWithProviders(<OperatorPlans />);
    const table = await screen.findByTestId('operator-plans');
    const ada = within(table).getByText('ada@example.com').closest('tr') as HTMLElement;
    expect(within(ada).getByText('Free')).toBeInTheDocument();
    const bob = within(table).getByText('bob@example.com').closest('tr') as HTMLElement;
    expect(within(bob).getByText('512.00 MB / 1.00 GB')).toBeInTheDocument();

    await userEvent.type(within(ada).getByLabelText('Until'), '2030-06-30');
    await userEvent.click(within(ada).getByRole('button', { name: 'Give' }));
    await waitFor(() => expect(api.find('PUT /api/operator/users/u1/plan')).toHaveLength(1));
    expect(api.find('PUT /api/operator/users/u1/plan')[0]?.body).toEqual({
      plan: 'month',
      until: Date.UTC(2030, 5, 30, 23, 59, 59) / 1000,
    });
    await userEvent.click(within(bob).getByRole('button', { name: 'Take back' }));
    await waitFor(() => expect(api.find('DELETE /api/operator/users/u2/plan')).toHaveLength(1));
  });
});
