import type { RuntimeEnv } from '@skyferry/contract';

/**
 * What the desktop client (Electron preload) exposes as `window.skyferryDesktop`. The web app
 * only reads it: when it is absent, the app runs as the web client and desktop-only features
 * (window controls, path choosers, feedback, about, update check, log folder) stay hidden.
 */
export interface SkyferryDesktopBridge {
  /** Node's process.platform of the desktop machine. */
  platform: 'win32' | 'darwin' | 'linux';
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
  /** Starts the update check (the desktop issue shows the upgrade modal). */
  checkForUpdates?(): void;
  openLogFolder?(): void;
}

declare global {
  interface Window {
    skyferryDesktop?: SkyferryDesktopBridge;
  }
}

export function desktopBridge(): SkyferryDesktopBridge | undefined {
  return typeof window === 'undefined' ? undefined : window.skyferryDesktop;
}

/** The runtime environment of spec section 3's settings state: web, app-win or app-mac. */
export function runtimeEnv(bridge: SkyferryDesktopBridge | undefined = desktopBridge()): RuntimeEnv {
  if (!bridge) return 'web';
  return bridge.platform === 'darwin' ? 'app-mac' : 'app-win';
}

export function isDesktop(): boolean {
  return runtimeEnv() !== 'web';
}
