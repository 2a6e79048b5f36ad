import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type * as ElectronModule from 'electron';
import type { BrowserWindow as BrowserWindowType, WebContents } from 'electron';
import {
  HEADERS,
  clientIdentity,
  desktopRuntime,
  type DesktopConnection,
  type DesktopPlatform,
} from '@skyferry/contract';
import { encodeInfo } from './bridge.ts';
import { DownloadManager } from './downloads.ts';
import { startEmbeddedServer, type EmbeddedServer } from './embedded-server.ts';
import { createHandlers, currentDownloadDir } from './handlers.ts';
import { EVENTS, type ConnectionChoice } from './ipc/channels.ts';
import { IpcRouter, originOf } from './ipc/router.ts';
import { LogFile } from './logs.ts';
import {
  decideNavigation,
  decidePopupNavigation,
  decideWindowOpen,
  normalizeServerUrl,
  serverCallbackUrl,
} from './navigation.ts';
import { OAuthRelay } from './oauth-relay.ts';
import { distFile, serverEntry, webDist, type Layout } from './paths.ts';
import { SecretVault, embeddedServerSecret } from './secrets.ts';
import { SettingsStore } from './settings.ts';
import { ENGLISH_TRAY_LABELS, trayMenu } from './tray.ts';
import { UpdateController, type UpdaterLike } from './updates.ts';

type Electron = typeof ElectronModule;

/** The shell's own pages are served from this scheme (a stable origin the router can check). */
export const START_SCHEME = 'skyferry';
export const START_ORIGIN = `${START_SCHEME}://start`;
const START_FILES: Record<string, string> = {
  '/': 'index.html',
  '/index.html': 'index.html',
  '/start.js': 'start.js',
  '/start.css': 'start.css',
};
const START_TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};
/** The loopback port cloud services redirect to after sign-in (registered with each service). */
export const DEFAULT_OAUTH_PORT = 47219;

export interface ShellOptions {
  electron: Electron;
  /** electron-updater's autoUpdater (created lazily: it reads the app's configuration). */
  updater: () => UpdaterLike & {
    setFeedURL(options: { provider: 'generic'; url: string }): void;
    requestHeaders: unknown;
  };
  env?: NodeJS.ProcessEnv;
}

/**
 * The desktop client's main process: one frameless window showing the web app of either its
 * embedded server ("On this computer") or an operator's server, with the bridge's handlers, the
 * tray, notifications, downloads, updates and the cloud sign-in relay. No business logic: every
 * decision about files, clouds and tasks is the server's.
 */
export function runShell(options: ShellOptions): void {
  const { electron } = options;
  const {
    app,
    BrowserWindow,
    Menu,
    Notification,
    Tray,
    dialog,
    ipcMain,
    nativeImage,
    protocol,
    safeStorage,
    session,
    shell,
  } = electron;
  const env = options.env ?? process.env;

  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return;
  }
  protocol.registerSchemesAsPrivileged([{ scheme: START_SCHEME, privileges: { standard: true, secure: true } }]);

  const layout: Layout = { packaged: app.isPackaged, appPath: app.getAppPath(), resourcesPath: process.resourcesPath };
  const platform: DesktopPlatform =
    process.platform === 'win32' || process.platform === 'darwin' ? process.platform : 'linux';
  const userData = app.getPath('userData');
  const logs = new LogFile(join(userData, 'logs'));
  const settings = new SettingsStore(join(userData, 'settings.json'));
  const vault = new SecretVault(join(userData, 'secrets'), safeStorage);

  let win: BrowserWindowType | null = null;
  let server: EmbeddedServer | null = null;
  let serverOrigin: string | null = null;
  let oauthPopup: WebContents | null = null;
  let transfersRunning = 0;
  let quitting = false;
  let tray: InstanceType<typeof Tray> | null = null;

  const log = (line: string) => logs.write('shell', line);
  const send = (event: string, payload: unknown) => {
    if (win && !win.isDestroyed()) win.webContents.send(event, payload);
  };
  const status = (phase: string, message?: string) => send(EVENTS.connectionStatus, { phase, message });

  const updates = new UpdateController({
    updater: createUpdater(),
    currentVersion: app.getVersion(),
    onState: (state) => send(EVENTS.updateState, state),
    log,
  });

  function createUpdater(): UpdaterLike | null {
    // The generic feed: SKYFERRY_UPDATE_URL, else the one the build configured (app-update.yml).
    const url = env.SKYFERRY_UPDATE_URL;
    const built = app.isPackaged && existsSync(join(process.resourcesPath, 'app-update.yml'));
    if (!url && !built) return null;
    const updater = options.updater();
    if (url) updater.setFeedURL({ provider: 'generic', url });
    const identity = clientIdentity(desktopRuntime(platform));
    updater.requestHeaders = {
      [HEADERS.platform]: String(identity.platform),
      [HEADERS.pid]: String(identity.pid),
      [HEADERS.version]: app.getVersion(),
    };
    return updater;
  }

  const downloads = new DownloadManager({
    downloadDir: () => currentDownloadDir({ settings, systemDownloads: () => app.getPath('downloads') }),
    emit: (d) => send(EVENTS.download, d),
    remember: (path) => settings.rememberSaved(path),
    onFinished: (d) => log(`download ${d.state}: ${d.name}`),
  });

  const relay = new OAuthRelay({
    port: /^\d{1,5}$/.test(env.SKYFERRY_OAUTH_PORT ?? '') ? Number(env.SKYFERRY_OAUTH_PORT) : DEFAULT_OAUTH_PORT,
    deliver: (query) => {
      if (!oauthPopup || oauthPopup.isDestroyed() || !serverOrigin) return false;
      // The pop-up holds the sign-in's browser binding and its opener: the server's callback page
      // finishes there and posts the result to the web app.
      void oauthPopup.loadURL(serverCallbackUrl(serverOrigin, query));
      win?.focus();
      return true;
    },
  });

  function connection(): DesktopConnection {
    const s = settings.get();
    return { mode: s.mode ?? 'local', serverUrl: serverOrigin ?? (s.mode === 'remote' ? s.remoteUrl : '') };
  }

  async function showServer(url: string): Promise<void> {
    serverOrigin = originOf(url);
    await win?.loadURL(url);
  }

  async function startLocal(): Promise<DesktopConnection> {
    if (!server) {
      status('starting');
      const dataDir = join(userData, 'server');
      const secret = embeddedServerSecret(vault, dataDir, () => randomBytes(32).toString('base64url'));
      const start = (port: number) =>
        startEmbeddedServer({
          execPath: process.execPath,
          runAsNode: true,
          entry: serverEntry(layout),
          webDist: webDist(layout),
          dataDir,
          port,
          localRoots: homedir(),
          ...(secret ? { secret } : {}),
          onLog: (line) => logs.write('server', line),
          onUnexpectedExit: (code, signal) => {
            log(`embedded server exited (${code ?? signal})`);
            server = null;
            if (!quitting) void showStart('The Skyferry server on this computer stopped. Start it again.');
          },
        });
      const port = settings.get().serverPort;
      try {
        server = await start(port);
      } catch (err) {
        // The port kept from the last start is taken: another one (the web app signs in again).
        if (port === 0) throw err;
        log(`embedded server could not use port ${port}: ${err instanceof Error ? err.message : String(err)}`);
        server = await start(0);
      }
      settings.update({ serverPort: Number(new URL(server.url).port) });
    }
    settings.update({ mode: 'local' });
    await showServer(server.url);
    return connection();
  }

  async function connectRemote(input: string): Promise<DesktopConnection> {
    const url = normalizeServerUrl(input);
    if (!url) throw new Error('Enter the address of a Skyferry server, such as https://skyferry.example.com');
    status('connecting');
    const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(10_000) }).catch(() => null);
    if (!res?.ok) throw new Error(`No Skyferry server answers at ${url}.`);
    settings.update({ mode: 'remote', remoteUrl: url });
    if (server) {
      const running = server;
      server = null;
      await running.stop();
    }
    await showServer(url);
    return connection();
  }

  async function setConnection(choice: ConnectionChoice): Promise<DesktopConnection> {
    try {
      return choice.mode === 'local' ? await startLocal() : await connectRemote(choice.url);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      log(`connection failed: ${message}`);
      status('failed', message);
      throw err;
    }
  }

  async function showStart(message?: string): Promise<void> {
    serverOrigin = null;
    const url = new URL(`${START_ORIGIN}/index.html`);
    if (message) url.searchParams.set('message', message);
    await win?.loadURL(url.toString());
  }

  function setTransfers(list: Parameters<typeof trayMenu>[0]): void {
    transfersRunning = list.length;
    if (!tray) return;
    const menu = trayMenu(list, ENGLISH_TRAY_LABELS, {
      show: () => {
        win?.show();
        win?.focus();
      },
      changeServer: () => {
        win?.show();
        void showStart();
      },
      quit: () => app.quit(),
    });
    tray.setToolTip(menu.tooltip);
    tray.setContextMenu(Menu.buildFromTemplate(menu.items));
  }

  function guardContents(contents: WebContents): void {
    contents.setWindowOpenHandler((details) => {
      const decision = decideWindowOpen(details);
      if (decision.action === 'external') void shell.openExternal(decision.url);
      if (decision.action !== 'oauth-popup') return { action: 'deny' };
      return {
        action: 'allow',
        overrideBrowserWindowOptions: {
          show: false,
          webPreferences: { sandbox: true, contextIsolation: true, nodeIntegration: false },
        },
      };
    });
    contents.on('did-create-window', (child) => {
      oauthPopup = child.webContents;
      const popup = child.webContents;
      popup.on('will-navigate', (event) => {
        const decision = decidePopupNavigation(event.url, serverOrigin);
        if (decision === 'allow') return;
        event.preventDefault();
        if (decision === 'external') void shell.openExternal(event.url);
      });
      child.on('closed', () => {
        if (oauthPopup === popup) oauthPopup = null;
      });
    });
    contents.on('will-navigate', (event) => {
      const decision = decideNavigation(event.url, serverOrigin, START_ORIGIN);
      if (decision === 'allow') return;
      event.preventDefault();
      if (decision === 'external') void shell.openExternal(event.url);
    });
  }

  function createWindow(): BrowserWindowType {
    const saved = settings.get().window;
    const window = new BrowserWindow({
      width: saved.width ?? 1280,
      height: saved.height ?? 820,
      minWidth: 960,
      minHeight: 600,
      frame: false,
      show: false,
      backgroundColor: '#ffffff',
      title: 'Skyferry',
      webPreferences: {
        preload: distFile(layout, 'preload.cjs'),
        contextIsolation: true,
        sandbox: true,
        nodeIntegration: false,
        webSecurity: true,
        spellcheck: false,
        additionalArguments: [encodeInfo({ platform, version: app.getVersion(), maximized: saved.maximized === true })],
      },
    });
    if (saved.maximized) window.maximize();
    window.once('ready-to-show', () => window.show());
    window.on('maximize', () => send(EVENTS.maximized, true));
    window.on('unmaximize', () => send(EVENTS.maximized, false));
    window.on('close', (event) => {
      const [width, height] = window.getSize();
      settings.update({ window: { width, height, maximized: window.isMaximized() } });
      // Transfers keep running on the server; while the web app reports some, the app stays in the tray.
      if (!quitting && transfersRunning > 0 && tray) {
        event.preventDefault();
        window.hide();
        if (Notification.isSupported()) {
          new Notification({
            title: 'Skyferry',
            body: 'Skyferry keeps running in the tray while transfers run.',
          }).show();
        }
      }
    });
    window.on('closed', () => {
      win = null;
      if (!quitting) app.quit();
    });
    guardContents(window.webContents);
    return window;
  }

  app.on('second-instance', () => {
    if (!win) return;
    if (win.isMinimized()) win.restore();
    win.show();
    win.focus();
  });

  app.on('before-quit', (event) => {
    quitting = true;
    if (!server) return;
    // Stop the embedded server cleanly (its database and queue) before the app goes.
    event.preventDefault();
    const running = server;
    server = null;
    void running.stop().finally(() => app.quit());
  });
  app.on('will-quit', () => {
    quitting = true;
    void relay.close();
  });

  void app.whenReady().then(async () => {
    log(`Skyferry ${app.getVersion()} starting on ${platform}`);
    protocol.handle(START_SCHEME, (request) => {
      const url = new URL(request.url);
      const file = url.host === 'start' ? START_FILES[url.pathname] : undefined;
      if (!file) return new Response('Not found', { status: 404 });
      return new Response(readFileSync(distFile(layout, join('start', file))), {
        headers: {
          'content-type': START_TYPES[file.split('.').pop() ?? ''] ?? 'application/octet-stream',
          'content-security-policy': "default-src 'self'; connect-src 'none'; object-src 'none'; base-uri 'none'",
        },
      });
    });
    session.defaultSession.setPermissionRequestHandler((_contents, permission, callback) =>
      callback(
        permission === 'notifications' || permission === 'clipboard-sanitized-write' || permission === 'fullscreen',
      ),
    );
    session.defaultSession.on('will-download', (_event, item) => downloads.handle(item));

    const router = new IpcRouter({
      appOrigin: () => serverOrigin,
      startOrigin: START_ORIGIN,
      onRefused: (channel, reason) => log(`refused IPC ${channel}: ${reason}`),
    });
    router.register(
      createHandlers({
        window: () => win,
        chooseDirectory: async (defaultPath) => {
          const options = {
            properties: ['openDirectory', 'createDirectory'] as Array<'openDirectory' | 'createDirectory'>,
          };
          const result = win
            ? await dialog.showOpenDialog(win, { ...options, ...(defaultPath ? { defaultPath } : {}) })
            : await dialog.showOpenDialog({ ...options, ...(defaultPath ? { defaultPath } : {}) });
          return result.canceled ? null : (result.filePaths[0] ?? null);
        },
        updates,
        logs,
        openPath: (path) => shell.openPath(path),
        showItemInFolder: (path) => shell.showItemInFolder(path),
        settings,
        systemDownloads: () => app.getPath('downloads'),
        downloads,
        startDownload: (url) => win?.webContents.downloadURL(url),
        appOrigin: () => serverOrigin,
        setTransfers,
        notify: (title, body) => {
          if (Notification.isSupported()) new Notification({ title, body }).show();
        },
        connection,
        changeConnection: () => void showStart(),
        setConnection,
        oauthRedirectUri: () => relay.start().catch(() => null),
      }),
    );
    router.attach(ipcMain);

    const icon = nativeImage.createFromPath(distFile(layout, 'icon.png'));
    tray = new Tray(icon);
    setTransfers([]);
    tray.on('click', () => {
      win?.show();
      win?.focus();
    });
    Menu.setApplicationMenu(null);

    win = createWindow();
    const mode = settings.get().mode;
    await showStart();
    if (mode === 'local') await setConnection({ mode: 'local' }).catch(() => undefined);
    else if (mode === 'remote')
      await setConnection({ mode: 'remote', url: settings.get().remoteUrl }).catch(() => undefined);

    // A silent check some time after start: a mandatory upgrade opens the modal (the web app listens).
    setTimeout(() => void updates.check(), 15_000).unref();
  });
}
