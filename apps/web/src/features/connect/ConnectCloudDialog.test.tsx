import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Code, OAUTH_MESSAGE_TYPE, systemCloudKind } from '@skyferry/contract';
import { setLanguage } from '../../i18n/index.ts';
import { MessageHost } from '../messages/MessageHost.tsx';
import { Fail, authData, cloud, initData, mockApi, renderWithProviders } from '../../test/utils.tsx';
import { applyAuth, tokenRefresher } from '../session/actions.ts';
import { advanceTip, currentTip, hideTips, resetGuide } from '../guide/store.ts';
import { resetSessionStore, sessionStore } from '../session/store.ts';
import { ConnectCloudDialog } from './ConnectCloudDialog.tsx';

const kind = systemCloudKind;

beforeEach(() => {
  localStorage.clear();
  resetGuide();
  hideTips();
  resetSessionStore();
  sessionStore.setState({
    systemClouds: [
      kind('google_drive', false, 'Not set up on this server.'),
      kind('dropbox'),
      kind('s3_compatible'),
      kind('webdav'),
    ],
    cloudsLoaded: true,
  });
});
afterEach(() => {
  tokenRefresher.stop();
  vi.unstubAllGlobals();
});

const open = (k: string | null = null) =>
  renderWithProviders(<ConnectCloudDialog opened onClose={() => undefined} kind={k} />);

describe('connect cloud drive', () => {
  it('the local folder names the folders this account may connect and when the home folder is allowed', async () => {
    const api = mockApi({ 'POST /api/clouds': () => new Fail(Code.LOCAL_FOLDER_FORBIDDEN, 'Ask the operator.', 403) });
    sessionStore.setState({
      systemClouds: [{ ...kind('local'), roots: ['/srv/skyferry/u1'] }, kind('webdav')],
    });
    // The operator also reads how the folders are chosen (a setting of the server).
    applyAuth(authData({ user_info: { ...authData().user_info, role: 'operator' } }));
    open('local');
    const roots = await screen.findByTestId('local-roots');
    expect(roots).toHaveTextContent('/srv/skyferry/u1');
    expect(roots).toHaveTextContent('single-user install listening on 127.0.0.1');
    const path = screen.getByRole('textbox', { name: /Folder path/ });
    expect(path).toHaveAttribute('placeholder', '/srv/skyferry/u1');
    await userEvent.type(path, '/srv/skyferry/other');
    await userEvent.click(screen.getByTestId('connect-submit'));
    expect(await screen.findByTestId('connect-error')).toHaveTextContent('Ask the operator.');
    expect(api.find('POST /api/clouds')).toHaveLength(1);
  });

  it("a free account at its cloud limit (billing on) gets the Upgrade modal with the server's message", async () => {
    mockApi({
      'POST /api/clouds': () =>
        new Fail(
          Code.CLOUD_LIMIT_REACHED,
          'A free account can connect up to 5 cloud drives. Upgrade to connect more.',
          403,
        ),
    });
    sessionStore.setState({ systemClouds: [kind('webdav')], init: initData({ billing_mode: 'test' }) });
    applyAuth(authData());
    renderWithProviders(
      <>
        <ConnectCloudDialog opened onClose={() => undefined} kind="webdav" />
        <MessageHost />
      </>,
    );
    await userEvent.type(screen.getByRole('textbox', { name: 'Server URL' }), 'https://dav.example.com/');
    await userEvent.type(screen.getByRole('textbox', { name: 'Username' }), 'me');
    await userEvent.type(document.querySelector('input[name="password"]') as HTMLInputElement, 'secret');
    await userEvent.click(screen.getByTestId('connect-submit'));
    expect(await screen.findByTestId('connect-error')).toHaveTextContent('Upgrade to connect more.');
    expect(await screen.findByRole('dialog', { name: 'Upgrade to Premium' })).toBeInTheDocument();
  });

  it('a visitor sees the local folder greyed with the reason, and no folders', async () => {
    mockApi({});
    sessionStore.setState({
      systemClouds: [kind('local', false, 'Folders on the server are not available to visitors.'), kind('webdav')],
    });
    open();
    const local = await screen.findByTestId('kind-local');
    expect(local).toBeDisabled();
    expect(local).toHaveTextContent('not available to visitors');
    expect(screen.queryByTestId('local-roots')).toBeNull();
  });

  it('lists the kinds that can be connected first, the unavailable ones last, greyed, with the reason', async () => {
    mockApi({});
    open();
    const google = await screen.findByTestId('kind-google_drive');
    expect(google).toBeDisabled();
    expect(google).toHaveTextContent('Not set up on this server.');
    expect(screen.getByTestId('kind-webdav')).toBeEnabled();
    const order = [...document.querySelectorAll('[data-testid^="kind-"]')].map((el) => el.getAttribute('data-testid'));
    expect(order).toEqual(['kind-dropbox', 'kind-s3_compatible', 'kind-webdav', 'kind-google_drive']);
    expect(screen.getByTestId('kind-s3_compatible')).toHaveTextContent('S3-compatible storage');
  });

  it('names the kinds in the interface language, not in English', async () => {
    mockApi({});
    sessionStore.setState({ systemClouds: [kind('s3_compatible'), kind('local'), kind('google_drive_shared')] });
    await setLanguage('ja');
    try {
      open();
      expect(await screen.findByTestId('kind-local')).toHaveTextContent('ローカルフォルダー');
      expect(screen.getByTestId('kind-s3_compatible')).toHaveTextContent('S3 互換ストレージ');
      expect(screen.getByTestId('kind-google_drive_shared')).toHaveTextContent('Google ドライブ（共有アイテム）');
    } finally {
      await setLanguage('en');
    }
  });

  it(
    'object storage: Bucket Name, Access Key ID, Secret Access Key with the spec messages, then the server error',
    { timeout: 30_000 },
    async () => {
      const api = mockApi({
        'POST /api/clouds': () =>
          new Fail(Code.CLOUD_CREDENTIALS_INVALID, 'Your Bucket Name, ID or key is incorrect, please try again', 422),
      });
      open();
      await userEvent.click(await screen.findByTestId('kind-s3_compatible'));
      expect(screen.getByRole('textbox', { name: /Bucket Name/ })).toBeInTheDocument();
      expect(screen.getByRole('textbox', { name: /Access Key ID/ })).toBeInTheDocument();
      expect(screen.getByLabelText(/Secret Access Key/)).toBeInTheDocument();
      expect(screen.getByRole('textbox', { name: /Endpoint/ })).toBeInTheDocument();
      expect(screen.getByRole('textbox', { name: /Region/ })).toBeInTheDocument();
      await userEvent.click(screen.getByTestId('connect-submit'));
      expect(await screen.findByText('Bucket Name cannot be empty.')).toBeInTheDocument();
      await userEvent.type(screen.getByRole('textbox', { name: /Bucket Name/ }), 'photos');
      expect(screen.queryByText('Bucket Name cannot be empty.')).toBeNull();
      await userEvent.click(screen.getByTestId('connect-submit'));
      expect(await screen.findByText('Access Key ID cannot be empty.')).toBeInTheDocument();
      await userEvent.type(screen.getByRole('textbox', { name: /Access Key ID/ }), 'AKIA');
      await userEvent.click(screen.getByTestId('connect-submit'));
      expect(await screen.findByText('Secret Access Key cannot be empty.')).toBeInTheDocument();
      await userEvent.type(screen.getByLabelText(/Secret Access Key/), 's3cret');
      await userEvent.type(screen.getByRole('textbox', { name: /Endpoint/ }), 'https://s3.example.com');
      await userEvent.click(screen.getByTestId('connect-submit'));
      expect(await screen.findByTestId('connect-error')).toHaveTextContent(
        'Your Bucket Name, ID or key is incorrect, please try again',
      );
      expect(api.find('POST /api/clouds')[0]?.body).toEqual({
        cloud_name: 's3_compatible',
        credentials: {
          bucket: 'photos',
          access_key_id: 'AKIA',
          secret_access_key: 's3cret',
          endpoint: 'https://s3.example.com',
        },
      });
    },
  );

  it('Google Photos: says before sign-in that only what Skyferry uploads will be listed; other kinds do not', async () => {
    mockApi({});
    sessionStore.setState({ systemClouds: [kind('google_photos'), kind('dropbox')] });
    const view = open('google_photos');
    const notice = await screen.findByTestId('google-photos-notice');
    expect(notice).toHaveTextContent('Since March 31, 2025, Google Photos shows apps only the photos and videos');
    expect(notice).toHaveTextContent('never the rest of your library');
    expect(screen.getByRole('button', { name: 'Sign in to Google Photos' })).toBeInTheDocument();
    view.unmount();
    open('dropbox');
    expect(await screen.findByRole('button', { name: 'Sign in to Dropbox' })).toBeInTheDocument();
    expect(screen.queryByTestId('google-photos-notice')).not.toBeInTheDocument();
  });

  it('OAuth kinds call the OAuth start and show its error', async () => {
    vi.stubGlobal(
      'open',
      vi.fn(() => null),
    );
    const api = mockApi({
      'POST /api/clouds/oauth/start': () =>
        new Fail(404, 'There is no such API call: POST /api/clouds/oauth/start', 404),
    });
    open('dropbox');
    await userEvent.click(await screen.findByRole('button', { name: 'Sign in to Dropbox' }));
    expect(await screen.findByTestId('connect-error')).toHaveTextContent('There is no such API call');
    expect(api.find('POST /api/clouds/oauth/start')[0]?.body).toMatchObject({ cloud_name: 'dropbox' });
  });

  it('shows the result the OAuth callback page posts (the contract message shape)', async () => {
    const popup = { close: vi.fn(), location: { href: '' } };
    vi.stubGlobal(
      'open',
      vi.fn(() => popup),
    );
    mockApi({
      'POST /api/clouds/oauth/start': () => ({
        authorize_url: 'http://127.0.0.1:1/authorize',
        state: 's1',
        expires_at: 0,
      }),
    });
    open('dropbox');
    await userEvent.click(await screen.findByRole('button', { name: 'Sign in to Dropbox' }));
    await waitFor(() => expect(popup.location.href).toBe('http://127.0.0.1:1/authorize'));
    // A message of another shape (or from another origin) is ignored.
    window.dispatchEvent(
      new MessageEvent('message', { data: { type: 'other', ok: false, msg: 'x' }, origin: window.location.origin }),
    );
    window.dispatchEvent(
      new MessageEvent('message', {
        data: {
          type: OAUTH_MESSAGE_TYPE,
          state: 's1',
          ok: false,
          code: 409001,
          msg: 'This cloud drive has been bound',
        },
        origin: 'http://evil.example',
      }),
    );
    expect(screen.queryByTestId('connect-error')).toBeNull();
    window.dispatchEvent(
      new MessageEvent('message', {
        data: {
          type: OAUTH_MESSAGE_TYPE,
          state: 's1',
          ok: false,
          code: 409001,
          msg: 'This cloud drive has been bound',
        },
        origin: window.location.origin,
      }),
    );
    expect(await screen.findByTestId('connect-error')).toHaveTextContent('This cloud drive has been bound');
    expect(popup.close).toHaveBeenCalled();
  });

  it('shows the add-drive-selectone guide step on the kind list, once', async () => {
    mockApi({});
    const view = open();
    await screen.findByTestId('kind-webdav');
    await waitFor(() => expect(currentTip()?.id).toBe('add-drive-selectone'));
    expect(currentTip()?.target).toBe('[data-guide="add-drive-selectone"]');
    advanceTip('button');
    view.unmount();
    open();
    await screen.findByTestId('kind-webdav');
    expect(currentTip()).toBeNull();
  });

  it(
    'WebDAV: chooses the server type and the unsafe switch, whose hint warns; both are sent',
    { timeout: 30_000 },
    async () => {
      const api = mockApi({ 'POST /api/clouds': () => cloud('w1', { cloud_name: 'webdav' }) });
      open('webdav');
      const serverType = await screen.findByRole('combobox', { name: 'Server type' });
      // Detection is the default, and the brand names read as they are.
      expect(serverType).toHaveValue('auto');
      expect([...(serverType as HTMLSelectElement).options].map((o) => o.textContent)).toEqual([
        'Detect automatically',
        'Nextcloud',
        'ownCloud',
        'Other WebDAV server',
      ]);
      const unsafe = screen.getByRole('checkbox', { name: /Accept any TLS certificate \(unsafe\)/ });
      expect(screen.getByText(/anyone on the way could read the password and the files/)).toBeInTheDocument();
      await userEvent.type(screen.getByRole('textbox', { name: /Server URL/ }), 'https://dav.example/files/');
      await userEvent.selectOptions(serverType, 'nextcloud');
      await userEvent.click(unsafe);
      await userEvent.click(screen.getByTestId('connect-submit'));
      await waitFor(() => expect(api.find('POST /api/clouds')).toHaveLength(1));
      expect(api.find('POST /api/clouds')[0]?.body).toEqual({
        cloud_name: 'webdav',
        credentials: { url: 'https://dav.example/files/', vendor: 'nextcloud', insecure_skip_verify: true },
      });
    },
  );

  it('FTP: the certificate pin is checked for shape before anything is sent; the remote folder goes along', async () => {
    sessionStore.setState({ systemClouds: [kind('ftp'), kind('sftp')] });
    const api = mockApi({ 'POST /api/clouds': () => cloud('f1', { cloud_name: 'ftp' }) });
    open('ftp');
    await userEvent.type(await screen.findByRole('textbox', { name: /^Host/ }), 'ftp.example');
    await userEvent.type(screen.getByRole('textbox', { name: /^Username/ }), 'ann');
    await userEvent.type(screen.getByLabelText(/^Password/), 'pw');
    await userEvent.click(screen.getByRole('checkbox', { name: 'Use TLS (FTPS)' }));
    const pin = screen.getByRole('textbox', { name: /Certificate fingerprint \(SHA-256\)/ });
    expect(screen.getByText(/openssl x509 -noout -fingerprint -sha256/)).toBeInTheDocument();
    await userEvent.type(pin, 'AB:CD');
    await userEvent.click(screen.getByTestId('connect-submit'));
    expect(await screen.findByText('Certificate fingerprint (SHA-256) is not valid.')).toBeInTheDocument();
    expect(api.find('POST /api/clouds')).toHaveLength(0);
    await userEvent.clear(pin);
    // A fingerprint is pasted, not typed (64 keystrokes re-render the dialog 64 times in jsdom).
    await userEvent.click(pin);
    await userEvent.paste('ab'.repeat(32));
    await userEvent.type(screen.getByRole('textbox', { name: /Remote folder/ }), '/pub');
    await userEvent.click(screen.getByTestId('connect-submit'));
    await waitFor(() => expect(api.find('POST /api/clouds')).toHaveLength(1));
    expect(api.find('POST /api/clouds')[0]?.body).toEqual({
      cloud_name: 'ftp',
      credentials: {
        host: 'ftp.example',
        username: 'ann',
        password: 'pw',
        secure: true,
        tls_fingerprint: 'ab'.repeat(32),
        root: '/pub',
      },
    });
  });

  it('says when the maximum of 20 is reached, and warns from 18', async () => {
    mockApi({});
    sessionStore.setState({ tempClouds: Array.from({ length: 18 }, (_, i) => cloud(`c${i}`, { cloud_id: `x${i}` })) });
    const view = open();
    expect(await screen.findByTestId('connect-limit')).toHaveTextContent('18 of 20 cloud drives are connected');
    view.unmount();
    sessionStore.setState({ tempClouds: Array.from({ length: 20 }, (_, i) => cloud(`c${i}`, { cloud_id: `x${i}` })) });
    open();
    await waitFor(() =>
      expect(screen.getByTestId('connect-limit')).toHaveTextContent(
        "You've reached the maximum number of cloud drives, please arrange them in Management.",
      ),
    );
    expect(screen.getByTestId('kind-webdav')).toBeDisabled();
  });
});
