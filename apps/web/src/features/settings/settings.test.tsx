import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { formatDate } from '@skyferry/contract';
import { Fail, authData, cloud, initData, mockApi, renderWithProviders } from '../../test/utils.tsx';
import { STORAGE_KEYS } from '../../lib/storage.ts';
import { applyAuth } from '../session/actions.ts';
import { configureSessionClient } from '../session/client-setup.ts';
import { resetSessionStore, sessionStore } from '../session/store.ts';
import { shellStore } from '../shell/store.ts';
import { preferencesStore, DEFAULT_EXPORT_SETTINGS, DEFAULT_TRANSFER_DEFAULTS } from './preferences.ts';
import { NotificationTab } from './NotificationTab.tsx';
import { SettingsPanel } from './SettingsPanel.tsx';

configureSessionClient();

beforeEach(() => {
  localStorage.clear();
  resetSessionStore();
  sessionStore.setState({ init: initData() });
  shellStore.setState({ settingsTab: 'general' });
  preferencesStore.setState({ exportSettings: DEFAULT_EXPORT_SETTINGS, transferDefaults: DEFAULT_TRANSFER_DEFAULTS });
});
afterEach(() => {
  vi.unstubAllGlobals();
});

describe('settings tabs', () => {
  it('a visitor has General, Language, Export Setting and Transfer defaults, but no Notification', () => {
    renderWithProviders(<SettingsPanel />);
    const tabs = screen.getAllByRole('tab').map((t) => t.textContent);
    expect(tabs).toEqual(['General', 'Language', 'Export Setting', 'Transfer defaults']);
  });

  it('a signed-in user also has Account, Notification and Support (their messages to the operator)', () => {
    applyAuth(authData());
    renderWithProviders(<SettingsPanel />);
    expect(screen.getAllByRole('tab').map((t) => t.textContent)).toEqual([
      'General',
      'Account',
      'Language',
      'Notification',
      'Export Setting',
      'Transfer defaults',
      'Support',
    ]);
  });

  it('the operator also has Users: each account with its local-folder switch, saved on the server', async () => {
    const users = [
      { uid: 'u1', email: 'ada@example.com', role: 'operator', created_at: 1, local_folder: null, local_roots: [] },
      { uid: 'u2', email: 'bob@example.com', role: 'user', created_at: 2, local_folder: null, local_roots: [] },
    ];
    const api = mockApi({
      'GET /api/operator/users': () => ({ items: users, total: 2, roots: ['/srv/skyferry'] }),
      'PUT /api/operator/users/u2/local-folder': (call) => ({
        ...users[1],
        local_folder: (call.body as { granted: boolean }).granted ? 'u2' : null,
        local_roots: (call.body as { granted: boolean }).granted ? ['/srv/skyferry/u2'] : [],
      }),
    });
    applyAuth(authData({ user_info: { ...authData().user_info, role: 'operator' } }));
    shellStore.setState({ settingsTab: 'operator' });
    renderWithProviders(<SettingsPanel />);
    expect(screen.getAllByRole('tab').map((t) => t.textContent)).toContain('Users');
    expect(await screen.findByTestId('operator-roots')).toHaveTextContent('/srv/skyferry');
    const rows = await screen.findAllByTestId('operator-user');
    expect(rows[0]).toHaveTextContent('Every allowed folder');
    const toggle = within(rows[1] as HTMLElement).getByRole('switch', { name: 'May use local folders' });
    expect(toggle).not.toBeChecked();
    await userEvent.click(toggle);
    await waitFor(() => expect(api.find('PUT /api/operator/users/u2/local-folder')).toHaveLength(1));
    expect(api.find('PUT /api/operator/users/u2/local-folder')[0]?.body).toEqual({ granted: true });
    expect(await within(rows[1] as HTMLElement).findByText('/srv/skyferry/u2')).toBeInTheDocument();
    expect(toggle).toBeChecked();
  });

  it('a user who is not the operator has no Users tab, even when asked for it', () => {
    applyAuth(authData());
    shellStore.setState({ settingsTab: 'operator' });
    renderWithProviders(<SettingsPanel />);
    expect(screen.getAllByRole('tab').map((t) => t.textContent)).not.toContain('Users');
    expect(screen.getByRole('tab', { name: 'General', selected: true })).toBeInTheDocument();
  });

  it('Language lists the ten languages and switching stores the choice under "Language"', async () => {
    shellStore.setState({ settingsTab: 'language' });
    renderWithProviders(<SettingsPanel />);
    const radios = screen.getAllByRole('radio');
    expect(radios).toHaveLength(10);
    await userEvent.click(screen.getByRole('radio', { name: 'Deutsch' }));
    await waitFor(() => expect(localStorage.getItem('Language')).toBe('de'));
    expect(await screen.findByRole('tab', { name: 'Sprache' })).toBeInTheDocument();
    await userEvent.click(screen.getByRole('radio', { name: 'العربية' }));
    await waitFor(() => expect(document.documentElement.dir).toBe('rtl'));
    await userEvent.click(screen.getByRole('radio', { name: 'English' }));
    await waitFor(() => expect(document.documentElement.dir).toBe('ltr'));
  });

  it('General with billing on shows the packets with end time, the comparison table and Upgrade for a free user', () => {
    sessionStore.setState({ init: initData({ billing_mode: 'test' }) });
    applyAuth(
      authData({
        my_data_packet: {
          base: [
            {
              name: '1 Month',
              usage: 1024 ** 3,
              size: 150 * 1024 ** 3,
              end_time: 1_900_000_000,
              deduction_time: 1_897_000_000,
            },
          ],
          additional: [],
        },
      }),
    );
    renderWithProviders(<SettingsPanel />);
    expect(screen.getByTestId('settings-email')).toHaveTextContent('ada@example.com');
    const row = screen.getByTestId('packet-row');
    expect(row).toHaveTextContent('1.00 GB / 150.00 GB');
    expect(row).toHaveTextContent(/ends \d{4}\/\d{2}\/\d{2}/);
    // The packet's deduction date (ENT-USR-10).
    expect(row).toHaveTextContent(`counted from ${formatDate(1_897_000_000_000)}`);
    expect(within(screen.getByTestId('plan-table')).getByText('Cloud data sync')).toBeInTheDocument();
    expect(screen.getByTestId('renew-upgrade')).toHaveTextContent('Upgrade');
  });

  it('General offers Renew to a paid user', () => {
    sessionStore.setState({ init: initData({ billing_mode: 'test' }) });
    const info = { ...authData().user_info, type: 1, expired: 0, expire: Math.floor(Date.now() / 1000) + 86_400 };
    applyAuth(authData({ user_info: info }));
    renderWithProviders(<SettingsPanel />);
    expect(screen.getByTestId('renew-upgrade')).toHaveTextContent('Renew');
  });

  it('Export Setting stores closeExportPanel, saveToLocal and defaultCloudId', async () => {
    sessionStore.setState({ tempClouds: [cloud('c1', { cloud_alias_name: 'Team NAS' })] });
    shellStore.setState({ settingsTab: 'export' });
    renderWithProviders(<SettingsPanel />);
    await userEvent.click(screen.getByRole('checkbox', { name: 'Export to local' }));
    await userEvent.click(screen.getByRole('radio', { name: /Team NAS/ }));
    await userEvent.click(screen.getByRole('checkbox', { name: "Save this setting and don't remind again" }));
    await userEvent.click(screen.getByRole('button', { name: 'Save' }));
    expect(JSON.parse(localStorage.getItem(STORAGE_KEYS.exportSettings) ?? '{}')).toEqual({
      closeExportPanel: true,
      saveToLocal: true,
      defaultCloudId: 'c1',
      localPath: '',
    });
  });

  it('Export Setting says when no cloud drive can be exported', () => {
    shellStore.setState({ settingsTab: 'export' });
    renderWithProviders(<SettingsPanel />);
    expect(screen.getByText('No cloud drive can be exported')).toBeInTheDocument();
  });

  it('Transfer defaults keep the same-name policy and the file filter', async () => {
    shellStore.setState({ settingsTab: 'defaults' });
    renderWithProviders(<SettingsPanel />);
    await userEvent.click(screen.getByRole('radio', { name: 'All except these' }));
    await userEvent.click(screen.getByRole('checkbox', { name: 'Videos' }));
    const stored = JSON.parse(localStorage.getItem(STORAGE_KEYS.transferDefaults) ?? '{}');
    expect(stored.fileFilter.mode).toBe('exclude');
    expect(stored.fileFilter.categories).not.toContain('video');
    expect(stored.fileFilter.categories).toContain('pdf');
  });
});

describe('in the desktop client', () => {
  afterEach(() => {
    delete window.skyferryDesktop;
    resetSessionStore();
  });

  it('Export Setting and the download location choose folders through the desktop bridge', async () => {
    const chooseDirectory = vi.fn(async () => '/home/ada/Exports');
    window.skyferryDesktop = {
      platform: 'win32',
      minimize: vi.fn(),
      toggleMaximize: vi.fn(),
      close: vi.fn(),
      chooseDirectory,
    };
    resetSessionStore();
    shellStore.setState({ settingsTab: 'export' });
    const { unmount } = renderWithProviders(<SettingsPanel />);
    await userEvent.click(screen.getByRole('button', { name: 'Choose folder' }));
    expect(await screen.findByText('/home/ada/Exports')).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Save' }));
    expect(JSON.parse(localStorage.getItem(STORAGE_KEYS.exportSettings) ?? '{}').localPath).toBe('/home/ada/Exports');
    unmount();
    chooseDirectory.mockResolvedValue('/home/ada/Downloads/Skyferry');
    shellStore.setState({ settingsTab: 'defaults' });
    renderWithProviders(<SettingsPanel />);
    await userEvent.click(screen.getByRole('button', { name: 'Change' }));
    expect(await screen.findByTestId('download-path')).toHaveTextContent('/home/ada/Downloads/Skyferry');
    expect(JSON.parse(localStorage.getItem(STORAGE_KEYS.transferDefaults) ?? '{}').downloadPath).toBe(
      '/home/ada/Downloads/Skyferry',
    );
    // The settings state carries the file save path (ENT-SET-05), now and after a reload.
    expect(sessionStore.getState().settings.file_save_path).toBe('/home/ada/Downloads/Skyferry');
    resetSessionStore();
    expect(sessionStore.getState().settings.file_save_path).toBe('/home/ada/Downloads/Skyferry');
  });

  it('the web client has no folder chooser', () => {
    shellStore.setState({ settingsTab: 'export' });
    renderWithProviders(<SettingsPanel />);
    expect(screen.queryByRole('button', { name: 'Choose folder' })).not.toBeInTheDocument();
    expect(screen.getByText("Files are saved to your browser's download folder.")).toBeInTheDocument();
  });
});

describe('Notification', () => {
  beforeEach(() => applyAuth(authData()));

  it('Save is enabled only when the e-mail is not empty', async () => {
    renderWithProviders(<NotificationTab />);
    const email = screen.getByRole('textbox', { name: /Email/ });
    const save = screen.getByRole('button', { name: 'Save' });
    expect(email).toHaveValue('ada@example.com');
    expect(save).toBeEnabled();
    await userEvent.clear(email);
    expect(save).toBeDisabled();
    await userEvent.type(email, '   ');
    expect(save).toBeDisabled();
    await userEvent.type(email, 'x@y.z');
    expect(save).toBeEnabled();
  });

  it('shows the server message as the e-mail error and clears it when the text changes', async () => {
    const api = mockApi({ 'POST /api/users/notify-email': () => new Fail(312212, 'Email format error.') });
    renderWithProviders(<NotificationTab />);
    const email = screen.getByRole('textbox', { name: /Email/ });
    await userEvent.clear(email);
    await userEvent.type(email, 'not-an-address');
    await userEvent.click(screen.getByRole('checkbox', { name: 'Email me when a transfer ends' }));
    await userEvent.click(screen.getByRole('button', { name: 'Save' }));
    expect(await screen.findByText('Email format error.')).toBeInTheDocument();
    expect(email).toHaveAttribute('aria-invalid', 'true');
    expect(api.find('POST /api/users/notify-email')[0]?.body).toEqual({ notify_email: 'not-an-address', remind_me: 1 });
    await userEvent.type(email, 'x');
    expect(screen.queryByText('Email format error.')).not.toBeInTheDocument();
    expect(email).not.toHaveAttribute('aria-invalid', 'true');
  });

  it('says why completion e-mails are off when the server cannot send mail (no SMTP_URL)', () => {
    sessionStore.setState({ init: initData({ mail_delivery: false }) });
    const view = renderWithProviders(<NotificationTab />);
    expect(screen.getByTestId('notify-no-mail')).toHaveTextContent(
      'This server cannot send email yet: no mail server (SMTP_URL) is set up.',
    );
    view.unmount();
    sessionStore.setState({ init: initData({ mail_delivery: true }) });
    renderWithProviders(<NotificationTab />);
    expect(screen.queryByTestId('notify-no-mail')).toBeNull();
  });

  it('shows the server message after a save too', async () => {
    mockApi({
      'POST /api/users/notify-email': () => null,
      'GET /api/users/me': () => ({ ...authData(), my_subscribe: [] }),
    });
    renderWithProviders(<NotificationTab />);
    await userEvent.click(screen.getByRole('button', { name: 'Save' }));
    expect(await screen.findByTestId('notify-message')).toHaveTextContent('success');
  });
});
