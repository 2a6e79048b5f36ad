import { PLATFORM, PRODUCT_ID, type RuntimeEnv } from './constants.ts';

/**
 * The desktop client's bridge: what the Electron preload exposes to the web client as
 * `window.skyferryDesktop` (apps/desktop/src/bridge.ts builds it, apps/web reads it). Everything
 * the web app may call is here; optional members are absent in older shells, and the web app
 * hides what they drive when they are.
 */

/** Node's process.platform of the desktop machine. */
export type DesktopPlatform = 'win32' | 'darwin' | 'linux';

/**
 * The Upgrade modal's steps (spec section 4, update check): loading, latest, info (a new version:
 * size, release date, notes), downloading, downloaded, retry. `idle` before any check.
 */
export type DesktopUpdateState =
  | { step: 'idle' }
  | { step: 'loading' }
  | { step: 'latest'; version: string }
  | {
      step: 'info';
      version: string;
      /** Bytes of the installer, null when the feed does not say. */
      size: number | null;
      /** ISO date, null when the feed does not say. */
      releaseDate: string | null;
      notes: string;
      mandatory: boolean;
    }
  | { step: 'downloading'; version: string; percent: number; mandatory: boolean }
  | { step: 'downloaded'; version: string; mandatory: boolean }
  | { step: 'retry'; version: string; mandatory: boolean };

/** A file the desktop client saved to this computer. */
export interface DesktopDownload {
  id: string;
  /** The file's name as saved. */
  name: string;
  /** Full path on this computer ('' until the save path is known). */
  path: string;
  state: 'progressing' | 'completed' | 'failed' | 'cancelled';
  received: number;
  /** 0 when the server did not say. */
  total: number;
}

/** Where the desktop client's web app comes from: its own embedded server, or an operator's. */
export interface DesktopConnection {
  mode: 'local' | 'remote';
  /** The server the window shows (the embedded one's loopback address in local mode). */
  serverUrl: string;
}

/** A running transfer, as the tray lists it. */
export interface DesktopTransfer {
  id: string;
  name: string;
  /** 0 to 100, null while the size is not known. */
  percent: number | null;
}

export interface SkyferryDesktopBridge {
  platform: DesktopPlatform;
  /** The desktop client's version. */
  version?: string;
  minimize(): void;
  /** Maximizes, or restores when maximized. */
  toggleMaximize(): void;
  close(): void;
  isMaximized?(): boolean;
  /** Calls back when the window is maximized or restored; returns an unsubscribe function. */
  onMaximizedChange?(listener: (maximized: boolean) => void): () => void;
  /** Opens a folder chooser; resolves with the chosen path, or null when cancelled. */
  chooseDirectory?(options?: { defaultPath?: string }): Promise<string | null>;

  /** Starts the update check (the Upgrade modal shows its steps); resolves with the step it reached. */
  checkForUpdates?(): Promise<DesktopUpdateState> | void;
  /** "Update Now" and "Retry": downloads the new version; once downloaded it is installed at once. */
  downloadUpdate?(): Promise<void>;
  /** Installs a downloaded update and restarts the app. */
  installUpdate?(): void;
  /** The update step now. */
  getUpdateState?(): Promise<DesktopUpdateState>;
  /** Calls back on every step; returns an unsubscribe function. */
  onUpdateState?(listener: (state: DesktopUpdateState) => void): () => void;

  openLogFolder?(): void;
  /** The end of the client's log, for a feedback ticket: its file name and text (at most 256 KB). */
  readLog?(): Promise<{ name: string; text: string }>;

  /** The folder downloads go to (the system's Downloads folder until one is chosen). */
  getDownloadPath?(): Promise<string>;
  /** Sets the download folder ('' for the system's); resolves with the folder now used. */
  setDownloadPath?(path: string): Promise<string>;
  /**
   * Saves what a signed link answers into `directory` (the download folder when absent: export to
   * local passes its own folder), without a save dialog; resolves when the file is complete.
   */
  saveUrl?(options: { url: string; name: string; directory?: string }): Promise<DesktopDownload>;
  /** Calls back as a saved file progresses; returns an unsubscribe function. */
  onDownload?(listener: (download: DesktopDownload) => void): () => void;
  /** Opens a file this client saved with its default application. */
  openDownloadedFile?(path: string): Promise<boolean>;
  /** Shows a file this client saved in the system's file manager. */
  showInFolder?(path: string): Promise<boolean>;

  /** The running transfers, for the tray. */
  setRunningTransfers?(transfers: DesktopTransfer[]): void;
  /** A native notification that a task ended. */
  notifyTaskEnded?(notice: { title: string; body: string }): void;

  getConnection?(): Promise<DesktopConnection>;
  /** Shows the start page where the user picks "On this computer" or "Connect to a server". */
  changeConnection?(): void;
  /**
   * The loopback address the client receives OAuth redirects on: sign-in for cloud services runs in
   * the system browser, which comes back there. Null when the client cannot listen.
   */
  oauthRedirectUri?(): Promise<string | null>;
}

/** The path of the desktop client's loopback OAuth redirect (RFC 8252 section 7.3). */
export const DESKTOP_OAUTH_REDIRECT_PATH = '/oauth/callback';

/**
 * Whether an address is a desktop client's loopback OAuth redirect: plain http on a loopback IP
 * literal (127.0.0.1 or [::1], never a name that could resolve elsewhere) with a port, at
 * DESKTOP_OAUTH_REDIRECT_PATH, and nothing else.
 */
export function isLoopbackRedirectUri(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return (
    url.protocol === 'http:' &&
    (url.hostname === '127.0.0.1' || url.hostname === '[::1]') &&
    url.port !== '' &&
    url.pathname === DESKTOP_OAUTH_REDIRECT_PATH &&
    url.search === '' &&
    url.hash === '' &&
    url.username === '' &&
    url.password === '' &&
    url.href === value
  );
}

/** The runtime environment of spec section 3 for a desktop platform (Linux builds count as Windows). */
export function desktopRuntime(platform: DesktopPlatform): RuntimeEnv {
  return platform === 'darwin' ? 'app-mac' : 'app-win';
}

/** Platform code and product id the client sends in its headers (spec section 9). */
export function clientIdentity(runtime: RuntimeEnv): { platform: number; pid: number } {
  if (runtime === 'app-mac') return { platform: PLATFORM.mac, pid: PRODUCT_ID.mac };
  if (runtime === 'app-win') return { platform: PLATFORM.windows, pid: PRODUCT_ID.windows };
  return { platform: PLATFORM.web, pid: PRODUCT_ID.web };
}
