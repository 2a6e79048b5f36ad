import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AppLayout } from '../../app/layout/AppLayout.tsx';
import { SPOOFED, authData, cloud, initData, mockApi, renderWithProviders, shownBidiMarks } from '../../test/utils.tsx';
import { authUiStore, resetAuthUi } from '../auth/store.ts';
import { MessageHost } from '../messages/MessageHost.tsx';
import { messagesStore } from '../messages/store.ts';
import { guideStore } from '../guide/store.ts';
import { applyAuth } from '../session/actions.ts';
import { configureSessionClient } from '../session/client-setup.ts';
import { resetSessionStore, sessionStore } from '../session/store.ts';
import { CloudList } from './CloudList.tsx';
import type { SkyferryDesktopBridge } from './desktop.ts';
import { Header } from './Header.tsx';
import { UserPanel } from './UserPanel.tsx';
import { planLine } from './plan.ts';

configureSessionClient();

beforeEach(() => {
  localStorage.clear();
  resetSessionStore();
  sessionStore.setState({ init: initData(), started: true, cloudsLoaded: true });
  messagesStore.setState({ dialogs: [], loading: 0 });
  guideStore.setState({ acknowledged: {}, chain: null, pending: false });
  resetAuthUi();
});
afterEach(() => {
  delete window.skyferryDesktop;
  vi.unstubAllGlobals();
});

const future = () => Math.floor(Date.now() / 1000) + 30 * 86_400;
const paidInfo = () => ({ ...authData().user_info, type: 1, expired: 0, expire: future(), is_paid: true });

describe('user hover panel', () => {
  it('a visitor sees "Log in Here.", Settings, User Guide and Support, and no Log out', () => {
    renderWithProviders(<UserPanel />);
    expect(screen.getByRole('button', { name: 'Log in Here.' })).toBeInTheDocument();
    const entries = [...screen.getByTestId('user-panel').querySelectorAll('[data-entry]')].map((e) =>
      e.getAttribute('data-entry'),
    );
    expect(entries).toEqual(['settings', 'guide', 'support']);
  });

  it('signed in with billing on: e-mail, the base bar, no additional bar when unpaid, Buy Now', () => {
    sessionStore.setState({ init: initData({ billing_mode: 'test' }) });
    applyAuth(
      authData({
        my_data_packet: {
          base: [{ name: 'Free', usage: 10, size: 100, end_time: 0, deduction_time: 0 }],
          additional: [],
        },
      }),
    );
    renderWithProviders(<UserPanel />);
    expect(screen.getByTestId('user-email')).toHaveTextContent('ada@example.com');
    expect(screen.getByTestId('base-usage')).toBeInTheDocument();
    expect(screen.queryByTestId('additional-usage')).not.toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Buy Now' })).toBeInTheDocument();
    expect(screen.queryByTestId('premium-status')).not.toBeInTheDocument();
  });

  it('paid: the additional bar, premium status, and "Next billing date" in YYYY/MM/DD when renewing', () => {
    sessionStore.setState({ init: initData({ billing_mode: 'test' }) });
    applyAuth(
      authData({
        user_info: paidInfo(),
        my_subscribe: [{ data_packet_name: '1 Month', purchase_state: 1, expires_date: 1_900_000_000 }],
      }),
    );
    renderWithProviders(<UserPanel />);
    expect(screen.getByTestId('additional-usage')).toBeInTheDocument();
    expect(screen.getByTestId('premium-status')).toHaveTextContent('Premium active');
    expect(screen.getByTestId('plan')).toHaveTextContent('1 Month');
    expect(screen.getByTestId('plan-date').textContent).toMatch(/^Next billing date: \d{4}\/\d{2}\/\d{2}$/);
  });

  it('"Expired date" when the subscription does not renew', () => {
    const line = planLine(
      { info: null, subscribe: [{ data_packet_name: '1 Year', purchase_state: 0, expires_date: 1_900_000_000 }] },
      'UTC',
    );
    expect(line).toEqual({ name: '1 Year', dateLabel: 'expiredDate', date: '2030/03/17' });
    expect(
      planLine({ info: null, subscribe: [{ data_packet_name: 'x', purchase_state: 1, expires_date: 0 }] }, 'UTC')
        .dateLabel,
    ).toBe('nextBilling');
  });

  it('Feedback, About and Check for Updates only in the desktop client', () => {
    window.skyferryDesktop = desktop('win32');
    resetSessionStore();
    renderWithProviders(<UserPanel />);
    const entries = [...screen.getByTestId('user-panel').querySelectorAll('[data-entry]')].map((e) =>
      e.getAttribute('data-entry'),
    );
    expect(entries).toEqual(['settings', 'guide', 'support', 'feedback', 'about', 'updates']);
  });

  it('Log out asks "Are you sure you want to log out?"; No keeps the session', async () => {
    applyAuth(authData());
    renderWithProviders(
      <>
        <UserPanel />
        <MessageHost />
      </>,
    );
    await userEvent.click(screen.getByText('Log out'));
    expect(await screen.findByText('Are you sure you want to log out?')).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'No' }));
    await waitFor(() => expect(screen.queryByText('Are you sure you want to log out?')).not.toBeInTheDocument());
    expect(sessionStore.getState().user.access_token).toBe('access-1');
  });
});

function desktop(platform: SkyferryDesktopBridge['platform']): SkyferryDesktopBridge {
  return { platform, minimize: vi.fn(), toggleMaximize: vi.fn(), close: vi.fn(), isMaximized: () => false };
}

describe('a visitor', () => {
  it('sees in the header that they are not signed in and that their clouds are temporary', async () => {
    renderWithProviders(<Header />);
    const badge = screen.getByTestId('visitor-badge');
    expect(badge).toHaveTextContent('Not signed in');
    expect(badge).toHaveAccessibleName('Not signed in');
    expect(badge).toHaveAccessibleDescription(
      'Cloud drives you connect now are temporary: they are forgotten 30 days after you last use them. Create an account or log in to keep them.',
    );
    await userEvent.click(badge);
    await waitFor(() => expect(authUiStore.getState().loginOpen).toBe(true));
    expect(authUiStore.getState().loginPage).toBe('signin');
  });

  it('is offered to create an account from the user panel, which opens the sign-up', async () => {
    renderWithProviders(<UserPanel />);
    const notice = screen.getByTestId('visitor-notice');
    expect(notice).toHaveTextContent('temporary');
    await userEvent.click(within(notice).getByRole('button', { name: 'Create account' }));
    await waitFor(() => expect(authUiStore.getState().loginPage).toBe('signup'));
    expect(authUiStore.getState().loginOpen).toBe(true);
  });

  it('a signed-in user sees neither', () => {
    applyAuth(authData());
    renderWithProviders(
      <>
        <Header />
        <UserPanel />
      </>,
    );
    expect(screen.queryByTestId('visitor-badge')).toBeNull();
    expect(screen.queryByTestId('visitor-notice')).toBeNull();
  });
});

describe('header', () => {
  it('on the web: no window controls and no home button; labelled icon buttons', () => {
    renderWithProviders(<Header />);
    expect(screen.queryByTestId('window-controls')).not.toBeInTheDocument();
    expect(screen.queryByTestId('mac-home')).not.toBeInTheDocument();
    for (const name of ['Back', 'Forward', 'Apps', 'Account', 'Transmission list'])
      expect(screen.getByRole(name === 'Apps' ? 'link' : 'button', { name })).toBeInTheDocument();
    expect(screen.getByText('Skyferry')).toBeInTheDocument();
  });

  it('in the desktop client: minimize, maximize/restore and close call the bridge; home only on Mac', async () => {
    const bridge = desktop('win32');
    window.skyferryDesktop = bridge;
    resetSessionStore();
    const { unmount } = renderWithProviders(<Header />);
    const controls = screen.getByTestId('window-controls');
    await userEvent.click(within(controls).getByRole('button', { name: 'Minimize' }));
    await userEvent.click(within(controls).getByRole('button', { name: 'Maximize' }));
    await userEvent.click(within(controls).getByRole('button', { name: 'Close' }));
    expect(bridge.minimize).toHaveBeenCalled();
    expect(bridge.toggleMaximize).toHaveBeenCalled();
    expect(bridge.close).toHaveBeenCalled();
    expect(screen.queryByTestId('mac-home')).not.toBeInTheDocument();
    unmount();
    window.skyferryDesktop = desktop('darwin');
    resetSessionStore();
    renderWithProviders(<Header />);
    expect(screen.getByTestId('mac-home')).toBeInTheDocument();
  });

  it('Back and Forward move through the history', async () => {
    const { router } = renderWithProviders(<Header />, { path: '/transfer' });
    await act(() => router.navigate('/sync'));
    await userEvent.click(screen.getByRole('button', { name: 'Back' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/transfer'));
    await userEvent.click(screen.getByRole('button', { name: 'Forward' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/sync'));
  });

  it('the Premium link and premium icon show with billing on', () => {
    sessionStore.setState({ init: initData({ billing_mode: 'test' }) });
    applyAuth(authData({ user_info: paidInfo() }));
    renderWithProviders(<Header />);
    expect(screen.getByRole('link', { name: /Premium/ })).toHaveAttribute('href', '/buy');
    expect(screen.getByTestId('premium-icon')).toHaveAttribute('data-paid', 'true');
  });
});

describe('sidebar cloud list', () => {
  const clouds = () => [
    cloud('a', { cloud_alias_name: 'Work' }),
    cloud('b', { cloud_name: 'google_photos', photos: true, cloud_account: 'me@gmail.com' }),
    cloud('c', { cloud_name: 'google_drive_shared', shared: true, cloud_account: 'team@example.com' }),
  ];

  it('links each cloud to the explorer, a photos cloud to the photos view, with cloud_index, is_open and _', () => {
    applyAuth(authData());
    sessionStore.setState({ clouds: clouds() });
    renderWithProviders(<CloudList narrow={false} />);
    const rows = screen.getAllByTestId('cloud-row');
    expect(rows).toHaveLength(3);
    const hrefs = rows.map((r) => new URL(r.querySelector('a')!.getAttribute('href')!, 'http://x'));
    expect(hrefs.map((u) => u.pathname)).toEqual(['/manage/explorer', '/manage/photos', '/manage/explorer']);
    expect(hrefs.map((u) => u.searchParams.get('cloud_index'))).toEqual(['0', '1', '2']);
    expect(hrefs.every((u) => u.searchParams.get('is_open') === '1' && Number(u.searchParams.get('_')) > 0)).toBe(true);
  });

  it('highlights the cloud given by cloud_index on the explorer', () => {
    applyAuth(authData());
    sessionStore.setState({ clouds: clouds() });
    renderWithProviders(<CloudList narrow={false} />, { path: '/manage/explorer?cloud_index=1&is_open=1&_=1' });
    const rows = screen.getAllByTestId('cloud-row');
    expect(rows.map((r) => r.hasAttribute('data-active'))).toEqual([false, true, false]);
    expect(rows[1]!.querySelector('a')).toHaveAttribute('aria-current', 'page');
  });

  it('a cloud name with bidi controls shows them as marks, isolated, wide and narrow', () => {
    applyAuth(authData());
    sessionStore.setState({ clouds: [cloud('a', { cloud_alias_name: SPOOFED.cloud })] });
    const wide = renderWithProviders(<CloudList narrow={false} />);
    expect(screen.getByTestId('cloud-row').querySelector('bdi')?.textContent).toBe('Bank[U+202E]txt.exe');
    expect(shownBidiMarks()).toEqual(['[U+202E]']);
    wide.unmount();
    renderWithProviders(<CloudList narrow />);
    expect(screen.getByRole('link', { name: '\u2068Bank[U+202E]txt.exe\u2069' })).toBeInTheDocument();
    shownBidiMarks();
  });

  it('shows "Shared with me" for a shared cloud', async () => {
    applyAuth(authData());
    sessionStore.setState({ clouds: clouds() });
    renderWithProviders(<CloudList narrow={false} />);
    await userEvent.hover(screen.getAllByTestId('cloud-row')[2]!);
    expect(await screen.findByText('Shared with me: team@example.com')).toBeInTheDocument();
  });

  it('reorders with the arrow keys on a handle and saves the order with PUT /api/clouds/sort', async () => {
    const api = mockApi({ 'PUT /api/clouds/sort': () => null });
    applyAuth(authData());
    sessionStore.setState({ clouds: clouds() });
    renderWithProviders(<CloudList narrow={false} />);
    const handle = screen.getByRole('button', { name: 'Reorder Work' });
    handle.focus();
    await userEvent.keyboard('{ArrowDown}');
    await waitFor(() => expect(api.find('PUT /api/clouds/sort')).toHaveLength(1));
    expect(api.find('PUT /api/clouds/sort')[0]?.body).toEqual({ sort_val: JSON.stringify(['b', 'a', 'c']) });
    expect(sessionStore.getState().clouds.map((c) => c.id)).toEqual(['b', 'a', 'c']);
    expect(await screen.findByText('Work moved to position 2 of 3')).toBeInTheDocument();
    await waitFor(() => expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Reorder Work' })));
  });

  it('puts the old order back when saving fails', async () => {
    mockApi({});
    applyAuth(authData());
    sessionStore.setState({ clouds: clouds() });
    renderWithProviders(<CloudList narrow={false} />);
    screen.getByRole('button', { name: 'Reorder Work' }).focus();
    await userEvent.keyboard('{ArrowDown}');
    await waitFor(() => expect(sessionStore.getState().clouds.map((c) => c.id)).toEqual(['a', 'b', 'c']));
  });

  it('a visitor’s temporary clouds are listed', () => {
    sessionStore.setState({ tempClouds: [cloud('t', { cloud_alias_name: 'Temp one', type: 1 })] });
    renderWithProviders(<CloudList narrow={false} />);
    expect(screen.getByText('Temp one')).toBeInTheDocument();
  });
});

describe('layout', () => {
  it('uses the narrow sidebar on /manage/photos and /slim/explore only', () => {
    const children = [
      { path: '/transfer', element: <p>transfer</p> },
      { path: '/slim/explore', element: <p>explore</p>, handle: { narrow: true } },
    ];
    const routes = [{ element: <AppLayout routes={children} />, children }];
    const { router } = renderWithProviders(<p>root</p>, { path: '/transfer', routes });
    expect(screen.getByTestId('sidebar')).not.toHaveAttribute('data-narrow');
    expect(screen.getByRole('link', { name: 'Transfer' })).toHaveAttribute('aria-current', 'page');
    void router.navigate('/slim/explore');
    return waitFor(() => expect(screen.getByTestId('sidebar')).toHaveAttribute('data-narrow', 'true'));
  });
});
