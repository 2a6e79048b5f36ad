import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { initData, renderWithProviders } from '../../test/utils.tsx';
import { STORAGE_KEYS } from '../../lib/storage.ts';
import { resetSessionStore, sessionStore } from '../session/store.ts';
import { shellStore } from '../shell/store.ts';
import { BannerBox, QuestionnairePrompt, ServiceNoticeBox } from './Overlays.tsx';

beforeEach(() => {
  localStorage.clear();
  resetSessionStore();
  sessionStore.setState({ init: initData() });
  shellStore.setState({ supportOpen: false });
});

describe('service notice', () => {
  it('is off by default', () => {
    renderWithProviders(<ServiceNoticeBox />);
    expect(screen.queryByTestId('service-notice')).not.toBeInTheDocument();
  });

  it('shows the operator’s text, date and contact link, and closes until the notice changes', async () => {
    const notice = {
      text: 'The service moves to a new home.',
      date: '2025-09-30',
      contact_url: 'https://example.com/contact',
    };
    sessionStore.setState({ init: initData({ service_notice: notice }) });
    const { unmount } = renderWithProviders(<ServiceNoticeBox />);
    expect(screen.getByText('Service notice (2025-09-30)')).toBeInTheDocument();
    expect(screen.getByText('The service moves to a new home.')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Contact us' })).toHaveAttribute('href', 'https://example.com/contact');
    await userEvent.click(screen.getByRole('button', { name: 'Close the notice' }));
    expect(screen.queryByTestId('service-notice')).not.toBeInTheDocument();
    unmount();
    renderWithProviders(<ServiceNoticeBox />);
    expect(screen.queryByTestId('service-notice')).not.toBeInTheDocument();
    sessionStore.setState({ init: initData({ service_notice: { ...notice, text: 'A new notice.' } }) });
    expect(await screen.findByText('A new notice.')).toBeInTheDocument();
  });
});

describe('banner box', () => {
  it('has a contact-support link that opens the Feedback dialog, and hides for the day once closed', async () => {
    renderWithProviders(<BannerBox />);
    await userEvent.click(screen.getByRole('button', { name: 'Contact support' }));
    expect(shellStore.getState().feedbackOpen).toBe(true);
    await userEvent.click(screen.getByRole('button', { name: 'Hide for today' }));
    expect(screen.queryByTestId('banner-box')).not.toBeInTheDocument();
    expect(localStorage.getItem(STORAGE_KEYS.bannerClosedOn)).toMatch(/^"\d{4}-\d{2}-\d{2}"$/);
  });
});

describe('questionnaire prompt', () => {
  it('is hidden with billing off (there is no data reward)', () => {
    renderWithProviders(<QuestionnairePrompt />);
    expect(screen.queryByTestId('questionnaire')).not.toBeInTheDocument();
  });

  it('offers 30GB of free data with billing on and is not shown again once clicked', async () => {
    sessionStore.setState({ init: initData({ billing_mode: 'test' }) });
    const { unmount, router } = renderWithProviders(<QuestionnairePrompt />, { path: '/transfer' });
    const button = screen.getByRole('button', { name: 'Answer our questionnaire and get 30GB of free data' });
    await userEvent.click(button);
    // It opens the questionnaire page (whose completion grants the data).
    expect(router.state.location.pathname).toBe('/survey');
    expect(screen.queryByTestId('questionnaire')).not.toBeInTheDocument();
    unmount();
    renderWithProviders(<QuestionnairePrompt />);
    expect(screen.queryByTestId('questionnaire')).not.toBeInTheDocument();
  });
});
