import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DownloadManager } from './downloads.ts';
import { createHandlers, type ShellServices, type WindowLike } from './handlers.ts';
import { LogFile } from './logs.ts';
import { SettingsStore } from './settings.ts';
import { tempDirs } from './test-support.ts';
import { UpdateController } from './updates.ts';

const SERVER = 'http://127.0.0.1:4100';
const temp = tempDirs('sf-handlers-');

function services() {
  const root = temp();
  const settings = new SettingsStore(join(root, 'settings.json'));
  const opened: string[] = [];
  const shown: string[] = [];
  const started: string[] = [];
  let maximized = false;
  const win: WindowLike = {
    minimize: () => undefined,
    maximize: () => (maximized = true),
    unmaximize: () => (maximized = false),
    isMaximized: () => maximized,
    close: () => undefined,
  };
  const s: ShellServices = {
    window: () => win,
    chooseDirectory: async () => null,
    updates: new UpdateController({ updater: null, currentVersion: '1.0.0', onState: () => undefined }),
    logs: new LogFile(join(root, 'logs')),
    openPath: async (p) => {
      opened.push(p);
      return '';
    },
    showItemInFolder: (p) => shown.push(p),
    settings,
    systemDownloads: () => join(root, 'Downloads'),
    downloads: new DownloadManager({ downloadDir: () => root, emit: () => undefined, remember: () => undefined }),
    startDownload: (url) => started.push(url),
    appOrigin: () => SERVER,
    setTransfers: () => undefined,
    notify: () => undefined,
    connection: () => ({ mode: 'local', serverUrl: SERVER }),
    changeConnection: () => undefined,
    setConnection: async () => ({ mode: 'local', serverUrl: SERVER }),
    oauthRedirectUri: async () => null,
  };
  return { root, s, h: createHandlers(s), opened, shown, started, settings };
}

describe('main-process handlers', () => {
  it('maximizes and restores the window', () => {
    const { h } = services();
    expect(h['window:toggle-maximize']()).toBe(true);
    expect(h['window:is-maximized']()).toBe(true);
    expect(h['window:toggle-maximize']()).toBe(false);
  });

  it('saves only links of the server the window shows', () => {
    const { h, started } = services();
    expect(() => h['download:save']({ url: 'https://evil.example/x', name: 'x' })).toThrow(
      'Only files of the Skyferry server',
    );
    expect(() => h['download:save']({ url: 'file:///etc/passwd', name: 'x' })).toThrow('Only files');
    expect(() => h['download:save']({ url: `${SERVER}/dl`, name: 'x', directory: '/no/such/folder' })).toThrow(
      'existing folder',
    );
    const waiting = h['download:save']({
      url: `${SERVER}/api/cloud-manager/files?sig=1`,
      name: 'a.txt',
    }) as Promise<unknown>;
    // No session downloads it here: the wait ends when the start times out.
    waiting.catch(() => undefined);
    expect(started).toEqual([`${SERVER}/api/cloud-manager/files?sig=1`]);
  });

  it('uses a chosen download folder only while it is a folder', () => {
    const { h, root } = services();
    expect(h['download:get-path']()).toBe(join(root, 'Downloads'));
    const chosen = temp();
    expect(h['download:set-path'](chosen)).toBe(chosen);
    expect(() => h['download:set-path']('relative/path')).toThrow('existing folder');
    rmSync(chosen, { recursive: true });
    expect(h['download:get-path']()).toBe(join(root, 'Downloads'));
    expect(h['download:set-path']('')).toBe(join(root, 'Downloads'));
  });

  it('opens and shows only files this client saved', async () => {
    const { h, opened, shown, settings, root } = services();
    const file = join(root, 'report.pdf');
    writeFileSync(file, 'pdf');
    expect(await h['download:open'](file)).toBe(false);
    expect(h['download:show'](file)).toBe(false);
    expect(await h['download:open']('/usr/bin/env')).toBe(false);
    settings.rememberSaved(file);
    expect(await h['download:open'](file)).toBe(true);
    expect(h['download:show'](file)).toBe(true);
    expect(opened).toEqual([file]);
    expect(shown).toEqual([file]);
  });
});
