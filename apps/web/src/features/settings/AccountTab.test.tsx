import { Code } from '@skyferry/contract';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Fail, authData, initData, mockApi, renderWithProviders } from '../../test/utils.tsx';
import { applyAuth, tokenRefresher } from '../session/actions.ts';
import { configureSessionClient } from '../session/client-setup.ts';
import { setReloader } from '../session/navigation.ts';
import { resetSessionStore, sessionStore } from '../session/store.ts';
import { AccountTab, deviceName } from './AccountTab.tsx';

configureSessionClient();

/** Fills a field at once (typing key by key is slow on a busy machine). */
async function fill(field: HTMLElement, text: string): Promise<void> {
  await userEvent.clear(field);
  await userEvent.click(field);
  await userEvent.paste(text);
}

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0';
const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1';
const sessions = () => ({
  items: [
    {
      id: 's1',
      current: true,
      user_agent: FIREFOX,
      ip: '192.0.2.10',
      created_at: 1_700_000_000_000,
      last_used_at: 1_700_000_600_000,
    },
    {
      id: 's2',
      current: false,
      user_agent: IPHONE,
      ip: '2001:db8::1',
      created_at: 1_690_000_000_000,
      last_used_at: 1_695_000_000_000,
    },
  ],
});

beforeEach(() => {
  localStorage.clear();
  resetSessionStore();
  sessionStore.setState({ init: initData() });
  applyAuth(authData());
  setReloader(() => undefined);
});
afterEach(() => {
  tokenRefresher.stop();
  vi.unstubAllGlobals();
});

describe('deviceName', () => {
  it('names the browser and the system in a few words', () => {
    expect(deviceName(FIREFOX)).toBe('Firefox · Linux');
    expect(deviceName(IPHONE)).toBe('Safari · iOS');
    expect(deviceName('Mozilla/5.0 (Windows NT 10.0) AppleWebKit/537.36 Chrome/130.0 Safari/537.36 Edg/130.0')).toBe(
      'Edge · Windows',
    );
    expect(deviceName('curl/8.0')).toBe('');
  });
});

describe('Account settings', { timeout: 20_000 }, () => {
  it('changing the password shows every problem at once, the server’s under its field, and ends other devices', async () => {
    let answer: unknown = new Fail(Code.PASSWORD_INCORRECT, 'The password is incorrect.', 403);
    const api = mockApi({
      'GET /api/account/sessions': sessions,
      'POST /api/account/password': () => answer,
    });
    renderWithProviders(<AccountTab />);
    const form = screen.getByTestId('change-password-form');
    const current = within(form).getByLabelText('Current password');
    const next = within(form).getByLabelText('New password');
    const confirm = within(form).getByLabelText('Confirm new password');
    await fill(next, 'short');
    await fill(confirm, 'other');
    await userEvent.click(within(form).getByRole('button', { name: 'Change password' }));
    expect(within(form).getByText('Enter your password.')).toBeInTheDocument();
    expect(within(form).getByText('The password must have at least 8 characters.')).toBeInTheDocument();
    expect(within(form).getByText('The passwords do not match.')).toBeInTheDocument();
    expect(api.find('POST /api/account/password')).toHaveLength(0);

    await fill(current, 'wrong one');
    await fill(next, 'a long new password');
    await fill(confirm, 'a long new password');
    await userEvent.click(within(form).getByRole('button', { name: 'Change password' }));
    expect(await within(form).findByText('The password is incorrect.')).toBeInTheDocument();
    expect(current).toHaveAttribute('aria-invalid', 'true');

    answer = { ended_sessions: 1 };
    await userEvent.click(within(form).getByRole('button', { name: 'Change password' }));
    await waitFor(() => expect(api.find('POST /api/account/password')).toHaveLength(2));
    expect(api.find('POST /api/account/password')[1]?.body).toEqual({
      current_password: 'wrong one',
      new_password: 'a long new password',
    });
    await waitFor(() => expect(current).toHaveValue(''));
  });

  it('asks for a new e-mail with the password and says where the confirmation link went', async () => {
    const api = mockApi({
      'GET /api/account/sessions': sessions,
      'POST /api/account/email': () => ({ sent_to: 'new@example.com' }),
    });
    renderWithProviders(<AccountTab />);
    expect(screen.getByTestId('account-email')).toHaveTextContent('ada@example.com');
    const form = screen.getByTestId('change-email-form');
    await fill(within(form).getByLabelText('New email address'), 'new@example.com');
    await userEvent.click(within(form).getByRole('button', { name: 'Send confirmation link' }));
    expect(within(form).getByText('Enter your password.')).toBeInTheDocument();
    await fill(within(form).getByLabelText('Password'), 'secret password');
    await userEvent.click(within(form).getByRole('button', { name: 'Send confirmation link' }));
    await waitFor(() => expect(api.find('POST /api/account/email')).toHaveLength(1));
    expect(api.find('POST /api/account/email')[0]?.body).toEqual({
      new_email: 'new@example.com',
      password: 'secret password',
    });
    expect(await screen.findByTestId('email-change-sent')).toBeInTheDocument();
  });

  it('lists the signed-in devices, this one marked, and signs out another or every other', async () => {
    let list = sessions();
    const api = mockApi({
      'GET /api/account/sessions': () => list,
      'DELETE /api/account/sessions/s2': () => {
        list = { items: list.items.filter((s) => s.id !== 's2') };
        return null;
      },
      'POST /api/account/sessions/revoke-others': () => ({ ended: 0 }),
    });
    renderWithProviders(<AccountTab />);
    const rows = await screen.findAllByTestId('session-row');
    expect(rows).toHaveLength(2);
    expect(rows[0]).toHaveTextContent('Firefox · Linux');
    expect(rows[0]).toHaveTextContent('This device');
    expect(rows[0]).toHaveTextContent('192.0.2.10');
    expect(within(rows[0] as HTMLElement).queryByRole('button', { name: 'Sign out' })).toBeNull();
    expect(rows[1]).toHaveTextContent('Safari · iOS');
    // The whole User-Agent is there on hover.
    expect(rows[1]?.querySelector('td')).toHaveAttribute('title', IPHONE);
    expect(screen.getByRole('columnheader', { name: 'Last used' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Sign out all other devices' })).toBeInTheDocument();
    await userEvent.click(within(rows[1] as HTMLElement).getByRole('button', { name: 'Sign out' }));
    await waitFor(() => expect(api.find('DELETE /api/account/sessions/s2')).toHaveLength(1));
    await waitFor(() => expect(screen.getAllByTestId('session-row')).toHaveLength(1));
    // Nothing else to sign out: the button goes.
    expect(screen.queryByRole('button', { name: 'Sign out all other devices' })).toBeNull();
  });

  it('deleting asks for the password; the last operator names a successor; then the session ends', async () => {
    applyAuth(authData({ user_info: { ...authData().user_info, role: 'operator' } }));
    let answer: unknown = new Fail(
      Code.OPERATOR_SUCCESSOR_REQUIRED,
      'You are the only operator of this server. Name another account to become the operator before deleting yours.',
      409,
    );
    const api = mockApi({
      'GET /api/account/sessions': sessions,
      'POST /api/account/delete': () => answer,
      'POST /api/account/logout': () => ({ ended: false }),
    });
    renderWithProviders(<AccountTab />);
    await userEvent.click(screen.getByTestId('delete-account'));
    const dialog = await screen.findByRole('dialog', { name: 'Delete your account?' });
    await userEvent.click(within(dialog).getByRole('button', { name: 'Delete for ever' }));
    expect(within(dialog).getByText('Enter your password.')).toBeInTheDocument();
    expect(api.find('POST /api/account/delete')).toHaveLength(0);
    await fill(within(dialog).getByLabelText('Password'), 'secret password');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Delete for ever' }));
    expect(await within(dialog).findByText(/You are the only operator of this server/)).toBeInTheDocument();

    answer = { successor_email: 'bob@example.com' };
    await fill(within(dialog).getByLabelText(/Next operator/), 'bob@example.com');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Delete for ever' }));
    await waitFor(() => expect(api.find('POST /api/account/delete')).toHaveLength(2));
    expect(api.find('POST /api/account/delete')[1]?.body).toEqual({
      password: 'secret password',
      successor_email: 'bob@example.com',
    });
    // Signed out here too: the tokens are gone from the client.
    await waitFor(() => expect(sessionStore.getState().user.access_token).toBe(''));
  });

  it('a user who is not an operator is not asked for a successor', async () => {
    mockApi({ 'GET /api/account/sessions': sessions });
    renderWithProviders(<AccountTab />);
    await userEvent.click(screen.getByTestId('delete-account'));
    const dialog = await screen.findByRole('dialog', { name: 'Delete your account?' });
    expect(within(dialog).queryByLabelText(/Next operator/)).toBeNull();
  });
});
