import { INTERVALS } from '@skyferry/contract';
import { screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { authData, cloud, initData, mockApi, renderWithProviders } from '../../test/utils.tsx';
import { tokenRefresher } from '../session/actions.ts';
import { configureSessionClient } from '../session/client-setup.ts';
import { setNavigator, setReloader } from '../session/navigation.ts';
import { resetSessionStore, sessionStore } from '../session/store.ts';
import { MessageHost } from '../messages/MessageHost.tsx';
import { AuthHost } from './AuthHost.tsx';
import { handleAccountMessage, openLogin, scheduleCookieCheck, setNavigateAway } from './login.ts';
import { authUiStore, resetAuthUi } from './store.ts';

configureSessionClient();
const away: string[] = [];

beforeEach(() => {
  localStorage.clear();
  resetSessionStore();
  sessionStorage.clear();
  resetAuthUi();
  sessionStore.setState({ init: initData() });
  away.length = 0;
  setNavigateAway((url) => away.push(url));
  setNavigator(() => undefined);
  setReloader(() => undefined);
});
afterEach(() => {
  tokenRefresher.stop();
  vi.restoreAllMocks();
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

function message(data: unknown, origin = window.location.origin): MessageEvent {
  return new MessageEvent('message', { data, origin });
}

describe('third-party cookie check', () => {
  it('starts 8 s after start-up', async () => {
    vi.useFakeTimers();
    const stop = scheduleCookieCheck();
    await vi.advanceTimersByTimeAsync(INTERVALS.cookieCheckStart - 1);
    expect(authUiStore.getState().cookieCheck).toBe('unknown');
    await vi.advanceTimersByTimeAsync(1);
    expect(authUiStore.getState().cookieCheck).toBe('enabled');
    stop();
  });

  it('the login panel opens only once the check has answered', async () => {
    await openLogin();
    expect(authUiStore.getState().cookieCheck).toBe('enabled');
    expect(authUiStore.getState().loginOpen).toBe(true);
    expect(away).toEqual([]);
  });

  it('with cookies blocked and a no-cookie sign-in address, the page goes there instead', async () => {
    vi.spyOn(navigator, 'cookieEnabled', 'get').mockReturnValue(false);
    await openLogin();
    expect(authUiStore.getState().cookieCheck).toBe('blocked');
    expect(authUiStore.getState().loginOpen).toBe(false);
    expect(away).toHaveLength(1);
    expect(away[0]).toContain('/account/signin?cookies=0');
  });
});

describe('messages from the account pages', () => {
  it('ignores login_success from another origin', () => {
    const handled = handleAccountMessage(message({ type: 'login_success', data: authData() }, 'https://evil.example'));
    expect(handled).toBe(false);
    expect(sessionStore.getState().user.access_token).toBe('');
  });

  it('login_success with this tab’s sign-in nonce logs in, closes the panel and offers to bind the temporary clouds', async () => {
    const api = mockApi({
      'GET /api/v2/clouds/me': () => ({ clouds: [], temp_clouds: [cloud('t1', { type: 1, cloud_alias_name: 'Nas' })] }),
      'GET /api/system/clouds': () => [],
      'POST /api/clouds/bind': () => ({ bound: ['t1'], discarded: [] }),
    });
    renderWithProviders(<AuthHost />);
    authUiStore.setState({ loginOpen: true });
    const frame = (await screen.findByTitle('Log in')) as HTMLIFrameElement;
    const nonce = new URL(frame.src).searchParams.get('nonce') ?? '';
    expect(nonce).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(handleAccountMessage(message({ type: 'login_success', data: authData(), nonce }))).toBe(true);
    expect(authUiStore.getState().loginOpen).toBe(false);
    await waitFor(() => expect(sessionStore.getState().user.access_token).toBe('access-1'));
    expect(await screen.findByText('Keep your cloud drives?')).toBeInTheDocument();
    expect(screen.getByText('Nas')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Discard' })).toBeInTheDocument();
    screen.getByRole('button', { name: 'Associate' }).click();
    await waitFor(() => expect(api.find('POST /api/clouds/bind')).toHaveLength(1));
    expect(api.find('POST /api/clouds/bind')[0]?.body).toEqual({ relation_id: 't1', sign_in_nonce: nonce });
    // The nonce is used up: the same message again is not taken.
    expect(handleAccountMessage(message({ type: 'login_success', data: authData(), nonce }))).toBe(false);
  });

  it('login_success without this tab’s nonce is ignored with a notice; the session stays and nothing is offered', async () => {
    const api = mockApi({
      'GET /api/v2/clouds/me': () => ({ clouds: [], temp_clouds: [cloud('t1', { type: 1 })] }),
      'GET /api/system/clouds': () => [],
    });
    const { login } = await import('../session/actions.ts');
    await login(authData({ access_token: 'mine' }));
    renderWithProviders(<MessageHost />);
    authUiStore.setState({ loginOpen: true });
    const forged = authData({ access_token: 'attacker', user_info: { ...authData().user_info, email: 'eve@x.org' } });
    expect(handleAccountMessage(message({ type: 'login_success', data: forged }))).toBe(false);
    expect(handleAccountMessage(message({ type: 'login_success', data: forged, nonce: 'x'.repeat(43) }))).toBe(false);
    expect(sessionStore.getState().user.access_token).toBe('mine');
    expect(authUiStore.getState().bindPrompt).toBeNull();
    expect((await screen.findAllByText(/was not started in this browser was ignored/))[0]).toHaveTextContent(
      'You are still signed in as ada@example.com.',
    );
    expect(api.find('POST /api/clouds/bind')).toHaveLength(0);
  });

  it('logout_success ends the session, on the server too', async () => {
    const api = mockApi({
      'GET /api/v2/clouds/me': () => ({ clouds: [], temp_clouds: [] }),
      'GET /api/system/clouds': () => [],
      'POST /api/account/logout': () => ({ ended: true }),
    });
    const { login } = await import('../session/actions.ts');
    await login(authData());
    expect(handleAccountMessage(message({ type: 'logout_success' }))).toBe(true);
    await waitFor(() => expect(sessionStore.getState().user.access_token).toBe(''));
    expect(sessionStore.getState().user.auto_login_token).toBe('');
    const call = api.find('POST /api/account/logout')[0];
    expect(call?.headers.authorization).toBe('Bearer access-1');
    expect(call?.body).toEqual({ refresh_token: 'refresh-1', auto_login_token: 'auto-1' });
  });

  it('the sign-in frame loads the sign-in page with the client origin and language', async () => {
    renderWithProviders(<AuthHost />);
    authUiStore.setState({ loginOpen: true });
    const frame = (await screen.findByTitle('Log in')) as HTMLIFrameElement;
    const src = new URL(frame.src);
    expect(src.pathname).toBe('/account/signin');
    expect(src.searchParams.get('origin')).toBe(window.location.origin);
    expect(src.searchParams.get('lang')).toBe('en');
    expect(src.searchParams.get('nonce')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('the panel is titled after the page it shows: sign-up opens as sign-up, and follows the frame', async () => {
    renderWithProviders(<AuthHost />);
    await openLogin({ signUp: true });
    expect(await screen.findByRole('dialog', { name: 'Create account' })).toBeInTheDocument();
    const frame = (await screen.findByTitle('Create account')) as HTMLIFrameElement;
    expect(new URL(frame.src).pathname).toBe('/account/signup');
    // The frame moves to the sign-in page and says so: the title follows, the frame stays.
    expect(handleAccountMessage(message({ type: 'account_page', page: 'signin' }))).toBe(true);
    expect(await screen.findByRole('dialog', { name: 'Log in' })).toBeInTheDocument();
    expect(new URL((screen.getByTestId('sign-in-frame') as HTMLIFrameElement).src).pathname).toBe('/account/signup');
    handleAccountMessage(message({ type: 'account_page', page: 'forgot' }));
    expect(await screen.findByRole('dialog', { name: 'Reset password' })).toBeInTheDocument();
    // A page name the panel does not know, or from another origin, changes nothing.
    handleAccountMessage(message({ type: 'account_page', page: 'evil' }));
    handleAccountMessage(message({ type: 'account_page', page: 'signup' }, 'https://evil.example'));
    expect(screen.getByRole('dialog', { name: 'Reset password' })).toBeInTheDocument();
  });
});
