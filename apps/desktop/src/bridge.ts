import type {
  DesktopConnection,
  DesktopDownload,
  DesktopPlatform,
  DesktopUpdateState,
  SkyferryDesktopBridge,
} from '@skyferry/contract';
import type { ConnectionChoice } from './ipc/channels.ts';
import { CHANNELS, EVENTS } from './ipc/names.ts';

/**
 * The preload's bridge: `window.skyferryDesktop` as the web client reads it. It holds no logic but
 * the window's maximized flag (the web app asks for it synchronously); every call goes to the main
 * process over IPC, which checks it. Built from an injected IPC so the same code runs in the real
 * preload (over ipcRenderer) and in the browser journey (over a fake IPC backed by the main
 * process's real handlers).
 */

export interface BridgeIpc {
  invoke(channel: string, ...args: unknown[]): Promise<unknown>;
  /** Subscribes to a message from the main process; returns an unsubscribe function. */
  on(event: string, listener: (payload: unknown) => void): () => void;
}

/** What the main process tells the preload before the page loads (through the window's arguments). */
export interface BridgeInfo {
  platform: DesktopPlatform;
  version: string;
  maximized: boolean;
}

/** The start page's extra call: choose the server the window shows. */
export interface StartPageBridge {
  setConnection(choice: ConnectionChoice): Promise<DesktopConnection>;
  onConnectionStatus(listener: (status: { phase: string; message?: string }) => void): () => void;
}

export const INFO_ARG = '--skyferry-info=';

/** Reads BridgeInfo from the window's process arguments (null when absent or malformed). */
export function infoFromArgv(argv: readonly string[]): BridgeInfo | null {
  const arg = argv.find((a) => a.startsWith(INFO_ARG));
  if (!arg) return null;
  try {
    const info = JSON.parse(decodeURIComponent(arg.slice(INFO_ARG.length))) as Partial<BridgeInfo>;
    const platform = info.platform;
    if (platform !== 'win32' && platform !== 'darwin' && platform !== 'linux') return null;
    return { platform, version: String(info.version ?? ''), maximized: info.maximized === true };
  } catch {
    return null;
  }
}

export function encodeInfo(info: BridgeInfo): string {
  return `${INFO_ARG}${encodeURIComponent(JSON.stringify(info))}`;
}

export function createBridge(ipc: BridgeIpc, info: BridgeInfo): SkyferryDesktopBridge & StartPageBridge {
  let maximized = info.maximized;
  ipc.on(EVENTS.maximized, (value) => {
    maximized = value === true;
  });
  const call = (channel: string, ...args: unknown[]) => ipc.invoke(channel, ...args);
  const fire = (channel: string, ...args: unknown[]) => {
    // Window controls and the like answer nothing the page waits for; a refusal is logged by the main process.
    call(channel, ...args).catch(() => undefined);
  };
  const subscribe =
    <T>(event: string) =>
    (listener: (value: T) => void) =>
      ipc.on(event, (payload) => listener(payload as T));

  return {
    platform: info.platform,
    version: info.version,
    minimize: () => fire(CHANNELS.windowMinimize),
    toggleMaximize: () => {
      // The page reads the new state right after the click; the event confirms it.
      maximized = !maximized;
      fire(CHANNELS.windowToggleMaximize);
    },
    close: () => fire(CHANNELS.windowClose),
    isMaximized: () => maximized,
    onMaximizedChange: subscribe<boolean>(EVENTS.maximized),
    chooseDirectory: (options) =>
      call(CHANNELS.chooseDirectory, ...(options ? [options] : [])) as Promise<string | null>,

    checkForUpdates: () => call(CHANNELS.updateCheck) as Promise<DesktopUpdateState>,
    downloadUpdate: async () => {
      await call(CHANNELS.updateDownload);
    },
    installUpdate: () => fire(CHANNELS.updateInstall),
    getUpdateState: () => call(CHANNELS.updateState) as Promise<DesktopUpdateState>,
    onUpdateState: subscribe<DesktopUpdateState>(EVENTS.updateState),

    openLogFolder: () => fire(CHANNELS.logOpenFolder),
    readLog: () => call(CHANNELS.logRead) as Promise<{ name: string; text: string }>,

    getDownloadPath: () => call(CHANNELS.downloadGetPath) as Promise<string>,
    setDownloadPath: (path) => call(CHANNELS.downloadSetPath, path) as Promise<string>,
    saveUrl: (options) => call(CHANNELS.downloadSave, options) as Promise<DesktopDownload>,
    onDownload: subscribe<DesktopDownload>(EVENTS.download),
    openDownloadedFile: (path) => call(CHANNELS.downloadOpen, path) as Promise<boolean>,
    showInFolder: (path) => call(CHANNELS.downloadShow, path) as Promise<boolean>,

    setRunningTransfers: (transfers) => fire(CHANNELS.traySetTransfers, transfers),
    notifyTaskEnded: (notice) => fire(CHANNELS.notifyTaskEnded, notice),

    getConnection: () => call(CHANNELS.connectionGet) as Promise<DesktopConnection>,
    changeConnection: () => fire(CHANNELS.connectionChange),
    oauthRedirectUri: () => call(CHANNELS.oauthRedirectUri) as Promise<string | null>,

    setConnection: (choice) => call(CHANNELS.connectionSet, choice) as Promise<DesktopConnection>,
    onConnectionStatus: subscribe<{ phase: string; message?: string }>(EVENTS.connectionStatus),
  };
}
