import { existsSync, statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import type { DesktopConnection, DesktopTransfer } from '@skyferry/contract';
import type { DownloadManager } from './downloads.ts';
import type { ConnectionChoice } from './ipc/channels.ts';
import { originOf, type HandlerMap } from './ipc/router.ts';
import type { LogFile } from './logs.ts';
import type { SettingsStore } from './settings.ts';
import type { UpdateController } from './updates.ts';

/** The part of a BrowserWindow the window controls use. */
export interface WindowLike {
  minimize(): void;
  maximize(): void;
  unmaximize(): void;
  isMaximized(): boolean;
  close(): void;
}

/** What the handlers act on: the shell's parts, injected (Electron's in the app, fakes in tests). */
export interface ShellServices {
  window(): WindowLike | null;
  /** A folder chooser; null when cancelled. */
  chooseDirectory(defaultPath?: string): Promise<string | null>;
  updates: UpdateController;
  logs: LogFile;
  /** Opens a file or folder with the system (Electron's shell.openPath: '' on success, else the error). */
  openPath(path: string): Promise<string>;
  showItemInFolder(path: string): void;
  settings: SettingsStore;
  /** The system's Downloads folder. */
  systemDownloads(): string;
  downloads: DownloadManager;
  /** Starts downloading `url` in the window's session (Electron's webContents.downloadURL). */
  startDownload(url: string): void;
  /** The origin of the server the window shows. */
  appOrigin(): string | null;
  setTransfers(transfers: DesktopTransfer[]): void;
  notify(title: string, body: string): void;
  connection(): DesktopConnection;
  changeConnection(): void;
  setConnection(choice: ConnectionChoice): Promise<DesktopConnection>;
  oauthRedirectUri(): Promise<string | null>;
}

export class HandlerError extends Error {}

function isFolder(path: string): boolean {
  try {
    return isAbsolute(path) && statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The folder downloads go to now: the chosen one while it is there, else the system's. */
export function currentDownloadDir(services: Pick<ShellServices, 'settings' | 'systemDownloads'>): string {
  const chosen = services.settings.get().downloadPath;
  return chosen && isFolder(chosen) ? chosen : services.systemDownloads();
}

/** Every channel's handler. Arguments arrive checked against the channel's schema. */
export function createHandlers(services: ShellServices): HandlerMap {
  const savedFile = (path: string) => services.settings.isSaved(path) && existsSync(path);
  return {
    'window:minimize': () => services.window()?.minimize(),
    'window:toggle-maximize': () => {
      const win = services.window();
      if (!win) return false;
      if (win.isMaximized()) win.unmaximize();
      else win.maximize();
      return win.isMaximized();
    },
    'window:close': () => services.window()?.close(),
    'window:is-maximized': () => services.window()?.isMaximized() ?? false,
    'dialog:choose-directory': (options) => services.chooseDirectory(options?.defaultPath),

    'update:check': () => services.updates.check(),
    'update:download': async () => {
      await services.updates.download();
    },
    'update:install': () => services.updates.install(),
    'update:state': () => services.updates.current,

    'log:open-folder': async () => {
      await services.openPath(services.logs.dir);
    },
    'log:read': () => services.logs.tail(),

    'download:get-path': () => currentDownloadDir(services),
    'download:set-path': (path) => {
      if (path !== '' && !isFolder(path)) throw new HandlerError('The download folder must be an existing folder.');
      services.settings.update({ downloadPath: path });
      return currentDownloadDir(services);
    },
    'download:save': ({ url, name, directory }) => {
      const origin = originOf(url);
      // Only the server's own links (signed download links): the page cannot make the shell fetch elsewhere.
      if (!origin || origin !== services.appOrigin() || !/^https?:$/.test(new URL(url).protocol)) {
        throw new HandlerError('Only files of the Skyferry server can be saved.');
      }
      if (directory !== undefined && !isFolder(directory))
        throw new HandlerError('The folder must be an existing folder.');
      const done = services.downloads.expect(url, name, directory);
      services.startDownload(url);
      return done;
    },
    'download:open': async (path) => savedFile(path) && (await services.openPath(path)) === '',
    'download:show': (path) => {
      if (!savedFile(path)) return false;
      services.showItemInFolder(path);
      return true;
    },

    'tray:set-transfers': (transfers) => services.setTransfers(transfers),
    'notify:task-ended': ({ title, body }) => services.notify(title, body),

    'connection:get': () => services.connection(),
    'connection:change': () => services.changeConnection(),
    'connection:set': (choice) => services.setConnection(choice),
    'oauth:redirect-uri': () => services.oauthRedirectUri(),
  };
}
