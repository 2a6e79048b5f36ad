import { act, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { STORAGE_KEYS } from '../../lib/storage.ts';
import { cloud, initData, mockApi, renderWithProviders, type RecordedCall } from '../../test/utils.tsx';
import { configureSessionClient } from '../session/client-setup.ts';
import { patchSettings, resetSessionStore, sessionStore } from '../session/store.ts';
import {
  DEFAULT_EXPORT_SETTINGS,
  DEFAULT_TRANSFER_DEFAULTS,
  getExportSettings,
  preferencesStore,
  saveExportSettings,
} from '../settings/preferences.ts';
import { ExportDialog } from './ExportDialog.tsx';
import { openExportDialog, type ExportResult } from './index.ts';
import { exportStore } from './store.ts';

configureSessionClient();

const FILE = { filename: 'cat.png', size: 4, base64_data: 'data:image/png;base64,AAECAw==' };

function exportServer() {
  return mockApi({
    'POST /api/cloud-manager/mkdir': () => '/Skyferry',
    'POST /api/third-api/start-upload': () => ({ task_id: 'task-1' }),
    'GET /api/third-api/poll-progress/task-1': () => ({
      task_id: 'task-1',
      status: 1,
      percent: 100,
      file_name: 'cat.png',
      path: '/Skyferry/cat.png',
      cloud_id: 'c2',
      size: 4,
      transferred: 4,
      error: null,
    }),
  });
}

beforeEach(() => {
  localStorage.clear();
  resetSessionStore();
  sessionStore.setState({ init: initData() });
  preferencesStore.setState({ exportSettings: DEFAULT_EXPORT_SETTINGS, transferDefaults: DEFAULT_TRANSFER_DEFAULTS });
  exportStore.setState({ request: null, results: null });
});
afterEach(() => {
  vi.unstubAllGlobals();
});

describe('Export to dialog', () => {
  it('says "No cloud drive can be exported" when there is none, and Export stays greyed until a target is chosen', async () => {
    renderWithProviders(<ExportDialog opened />);
    let result: Promise<ExportResult> | undefined;
    act(() => {
      result = openExportDialog(FILE);
    });
    expect(await screen.findByText('No cloud drive can be exported')).toBeInTheDocument();
    const submit = screen.getByRole('button', { name: 'Export' });
    expect(submit).toBeDisabled();
    await userEvent.click(screen.getByRole('checkbox', { name: 'Export to local' }));
    expect(submit).toBeEnabled();
    // The web client shows no download path (the browser's download folder is used).
    expect(screen.queryByTestId('export-download-path')).toBeNull();
    await userEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    await expect(result).resolves.toEqual({ outcome: 'cancelled' });
  });

  it('offers the clouds by account; exporting writes into the product folder, polled until done', async () => {
    const api = exportServer();
    sessionStore.setState({
      tempClouds: [
        cloud('c1', { cloud_alias_name: 'Team NAS' }),
        cloud('c2', { cloud_alias_name: 'Archive', cloud_name: 'amazon_s3' }),
      ],
    });
    renderWithProviders(<ExportDialog opened />);
    let result: Promise<ExportResult> | undefined;
    act(() => {
      result = openExportDialog(FILE);
    });
    expect(await screen.findByText('WebDAV')).toBeInTheDocument();
    expect(screen.getByText('Amazon S3')).toBeInTheDocument();
    expect(screen.getAllByRole('radio')).toHaveLength(2);
    expect(screen.getByRole('button', { name: 'Export' })).toBeDisabled();
    await userEvent.click(screen.getByRole('radio', { name: /Archive/ }));
    await userEvent.click(screen.getByRole('button', { name: 'Export' }));
    const outcome = await result;
    expect(outcome).toMatchObject({ outcome: 'exported', target: { local: false, cloudId: 'c2' } });
    expect(outcome && 'results' in outcome ? outcome.results : []).toEqual([
      { filename: 'cat.png', cloud: 1, percent: 100 },
    ]);
    expect(api.find('POST /api/cloud-manager/mkdir')[0]?.body).toEqual({
      cloud_type: 'amazon_s3',
      token_id: 'c2',
      folder_name: 'Skyferry',
      not_allow_conflict: true,
    });
    const start = api.find('POST /api/third-api/start-upload')[0] as RecordedCall;
    expect(start.body).toMatchObject({
      token_id: 'c2',
      parent: '/Skyferry',
      file_name: 'cat.png',
      base64_data: 'AAECAw==',
    });
    expect(await screen.findByText(/Completed/)).toBeInTheDocument();
    // Nothing was saved: without the tick the next export asks again.
    expect(localStorage.getItem(STORAGE_KEYS.exportSettings)).toBeNull();
  });

  it('"Save this setting and don\'t remind again": the next export goes to the same cloud without the dialog', async () => {
    const api = exportServer();
    sessionStore.setState({ tempClouds: [cloud('c2', { cloud_alias_name: 'Archive' })] });
    renderWithProviders(<ExportDialog opened />);
    let first: Promise<ExportResult> | undefined;
    act(() => {
      first = openExportDialog(FILE);
    });
    await userEvent.click(await screen.findByRole('radio', { name: /Archive/ }));
    await userEvent.click(screen.getByRole('checkbox', { name: "Save this setting and don't remind again" }));
    await userEvent.click(screen.getByRole('button', { name: 'Export' }));
    await first;
    expect(getExportSettings()).toMatchObject({ closeExportPanel: true, saveToLocal: false, defaultCloudId: 'c2' });
    await userEvent.click(screen.getByTestId('export-close'));
    await waitFor(() => expect(exportStore.getState().request).toBeNull());

    const second = await openExportDialog({ ...FILE, filename: 'dog.png' });
    expect(second).toMatchObject({ outcome: 'exported', target: { cloudId: 'c2' } });
    expect(exportStore.getState().request).toBeNull();
    expect(
      api.find('POST /api/third-api/start-upload').map((c) => (c.body as { file_name: string }).file_name),
    ).toEqual(['cat.png', 'dog.png']);
  });

  it('a saved default cloud that is gone is cleared and the dialog opens', async () => {
    saveExportSettings({ ...DEFAULT_EXPORT_SETTINGS, closeExportPanel: true, defaultCloudId: 'gone' });
    sessionStore.setState({ tempClouds: [cloud('c1')] });
    renderWithProviders(<ExportDialog opened />);
    act(() => void openExportDialog(FILE));
    expect(await screen.findByTestId('export-submit')).toBeDisabled();
    expect(getExportSettings().defaultCloudId).toBe('');
  });

  it('to local: the desktop client saves into the export folder (no dialog of its own); a browser downloads', async () => {
    const saveUrl = vi.fn(async (o: { url: string; name: string; directory?: string }) => ({
      id: 'd1',
      name: o.name,
      path: `${o.directory}/${o.name}`,
      state: 'completed' as const,
      received: 4,
      total: 4,
    }));
    vi.stubGlobal('skyferryDesktop', { platform: 'win32', saveUrl });
    saveExportSettings({
      ...DEFAULT_EXPORT_SETTINGS,
      closeExportPanel: true,
      saveToLocal: true,
      localPath: 'C:\\Exports',
    });
    const done = await openExportDialog({ filename: 'cat.png', download_url: 'https://app.example/cat.png' });
    expect(done).toMatchObject({ outcome: 'exported', results: [{ filename: 'cat.png', local: 1 }] });
    expect(saveUrl).toHaveBeenCalledWith({
      url: 'https://app.example/cat.png',
      name: 'cat.png',
      directory: 'C:\\Exports',
    });
    vi.unstubAllGlobals();
    // In a browser: an <a download> for the bytes, as a data URL.
    const clicked: Array<{ href: string; download: string }> = [];
    const click = vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      clicked.push({ href: this.href, download: this.download });
    });
    await openExportDialog(FILE);
    expect(clicked).toEqual([{ href: 'data:image/png;base64,AAECAw==', download: 'cat.png' }]);
    click.mockRestore();
  });

  it('the desktop client shows the download path', async () => {
    patchSettings({ runtime: 'app-win' });
    saveExportSettings({ ...DEFAULT_EXPORT_SETTINGS, localPath: 'C:\\Exports' });
    renderWithProviders(<ExportDialog opened />);
    act(() => void openExportDialog(FILE));
    expect(await screen.findByTestId('export-download-path')).toHaveTextContent('C:\\Exports');
  });
});
