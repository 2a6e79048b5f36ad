import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { applyAuth } from '../session/actions.ts';
import { resetSessionStore, sessionStore } from '../session/store.ts';
import { authData, initData, mockApi, renderWithProviders } from '../../test/utils.tsx';
import { SurveyPage } from './SurveyPage.tsx';

describe('the questionnaire page', () => {
  beforeEach(() => {
    resetSessionStore();
    sessionStore.setState({ init: initData({ billing_mode: 'test' }) });
    applyAuth(authData());
  });

  it('sends the answers and says the 30 GB were added', async () => {
    const api = mockApi({
      'GET /api/billing/survey': () => ({ answered: false, reward: 30 * 1024 ** 3 }),
      'POST /api/billing/survey': () => ({ answered: true, reward: 0 }),
      'GET /api/users/me': () => ({
        user_info: authData().user_info,
        my_data_packet: { base: [], additional: [] },
        my_subscribe: [],
      }),
    });
    renderWithProviders(<SurveyPage />);
    expect(await screen.findByText('Answer three short questions and get 30GB of free data.')).toBeInTheDocument();
    expect(screen.getByTestId('survey-submit')).toBeDisabled();
    await userEvent.click(screen.getByRole('radio', { name: 'A friend' }));
    await userEvent.click(screen.getByRole('radio', { name: 'Syncing clouds' }));
    await userEvent.type(screen.getByRole('textbox', { name: 'Anything else? (optional)' }), 'Nice');
    await userEvent.click(screen.getByTestId('survey-submit'));
    expect(await screen.findByTestId('survey-thanks')).toHaveTextContent(
      'Thank you! 30GB of data has been added to your account.',
    );
    await waitFor(() => expect(api.find('POST /api/billing/survey')).toHaveLength(1));
    expect(api.find('POST /api/billing/survey')[0]?.body).toEqual({
      found_by: 'friend',
      main_use: 'sync',
      recommend: 8,
      comment: 'Nice',
    });
  });

  it('says so when the account answered before', async () => {
    mockApi({ 'GET /api/billing/survey': () => ({ answered: true, reward: 0 }) });
    renderWithProviders(<SurveyPage />);
    expect(await screen.findByText('You have answered the questionnaire already. Thank you!')).toBeInTheDocument();
    expect(screen.queryByTestId('survey-submit')).toBeNull();
  });
});
