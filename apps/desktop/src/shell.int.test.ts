import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type * as ElectronModule from 'electron';
import { afterEach, describe, expect, it } from 'vitest';
import { CHANNEL_ARGS, CHANNELS, EVENTS } from './ipc/channels.ts';
import { startEmbeddedServer } from './embedded-server.ts';
import { serverEntry } from './paths.ts';
import { START_ORIGIN, runShell } from './shell.ts';
import { tempDirs } from './test-support.ts';

// The shell's wiring (src/shell.ts) run against a stand-in for Electron's API: the parts Electron
// would do (windows, IPC transport, tray) record what they are asked; everything else is real,
// the embedded server included. The Electron binary itself is not available here.

type Listener = (...args: unknown[]) => unknown;

class FakeContents extends EventEmitter {
  sent: Array<[string, unknown]> = [];
  loaded: string[] = [];
  openHandler: ((d: { url: string; frameName: string }) => { action: string }) | null = null;
  destroyed = false;
  send(event: string, payload: unknown) {
    this.sent.push([event, payload]);
  }
  setWindowOpenHandler(h: FakeContents['openHandler']) {
    this.openHandler = h;
  }
  async loadURL(url: string) {
    this.loaded.push(url);
  }
  downloadURL() {}
  isDestroyed() {
    return this.destroyed;
  }
}

class FakeWindow extends EventEmitter {
  static all: FakeWindow[] = [];
  webContents = new FakeContents();
  maximized = false;
  hidden = false;
  options: Record<string, unknown>;
  constructor(options: Record<string, unknown>) {
    super();
    this.options = options;
    FakeWindow.all.push(this);
  }
  loadURL(url: string) {
    return this.webContents.loadURL(url);
  }
  maximize() {
    this.maximized = true;
    this.emit('maximize');
  }
  isMaximized() {
    return this.maximized;
  }
  isDestroyed() {
    return false;
  }
  isMinimized() {
    return false;
  }
  getSize() {
    return [1200, 800];
  }
  show() {}
  hide() {
    this.hidden = true;
  }
  focus() {}
  restore() {}
}

function fakeElectron(userData: string) {
  const app = Object.assign(new EventEmitter(), {
    isPackaged: false,
    quitCalls: 0,
    ready: undefined as unknown as () => void,
    requestSingleInstanceLock: () => true,
    getAppPath: () => resolve(import.meta.dirname, '..'),
    getPath: (name: string) => (name === 'userData' ? userData : join(userData, name)),
    getVersion: () => '1.4.2',
    quit() {
      app.quitCalls += 1;
      const event = { defaultPrevented: false, preventDefault: () => (event.defaultPrevented = true) };
      app.emit('before-quit', event);
      if (!event.defaultPrevented) app.emit('will-quit');
    },
    whenReady: () => new Promise<void>((r) => (app.ready = r)),
  });
  const handlers = new Map<string, Listener>();
  const trays: Array<{ tooltip: string; menu: unknown[] }> = [];
  const notices: Array<{ title: string; body: string }> = [];
  const external: string[] = [];
  let schemeHandler: ((req: { url: string }) => Response) | null = null;
  const electron = {
    app,
    BrowserWindow: FakeWindow,
    ipcMain: {
      handle: (channel: string, l: Listener) => handlers.set(channel, l),
      removeHandler: (channel: string) => handlers.delete(channel),
    },
    Menu: { buildFromTemplate: (items: unknown[]) => items, setApplicationMenu: () => undefined },
    Tray: class {
      record = { tooltip: '', menu: [] as unknown[] };
      constructor() {
        trays.push(this.record);
      }
      setToolTip(t: string) {
        this.record.tooltip = t;
      }
      setContextMenu(m: unknown[]) {
        this.record.menu = m;
      }
      on() {}
    },
    Notification: class {
      static isSupported = () => true;
      private readonly n: { title: string; body: string };
      constructor(n: { title: string; body: string }) {
        this.n = n;
      }
      show() {
        notices.push(this.n);
      }
    },
    nativeImage: { createFromPath: () => ({}) },
    dialog: { showOpenDialog: async () => ({ canceled: true, filePaths: [] }) },
    shell: {
      openExternal: async (url: string) => void external.push(url),
      openPath: async () => '',
      showItemInFolder: () => undefined,
    },
    protocol: {
      registerSchemesAsPrivileged: () => undefined,
      handle: (_scheme: string, h: typeof schemeHandler) => (schemeHandler = h),
    },
    safeStorage: {
      isEncryptionAvailable: () => true,
      encryptString: (s: string) => Buffer.from(s).reverse(),
      decryptString: (b: Buffer) => Buffer.from(b).reverse().toString(),
      getSelectedStorageBackend: () => 'gnome_libsecret',
    },
    session: { defaultSession: { setPermissionRequestHandler: () => undefined, on: () => undefined } },
  };
  const call = (channel: string, url: string, ...args: unknown[]) =>
    handlers.get(channel)!({ senderFrame: { url, parent: null } }, ...args);
  return {
    electron: electron as unknown as typeof ElectronModule,
    app,
    handlers,
    trays,
    notices,
    external,
    call,
    scheme: () => schemeHandler,
  };
}

const temp = tempDirs('sf-shell-');
afterEach(() => {
  FakeWindow.all = [];
});

async function until<T>(get: () => T | undefined, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = get();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('the shell wired to Electron (a stand-in)', () => {
  it('opens a locked-down frameless window on the start page, and starts the server on this computer when chosen', async () => {
    const userData = temp();
    const f = fakeElectron(userData);
    runShell({ electron: f.electron, updater: () => undefined as never, env: { SKYFERRY_OAUTH_PORT: '0' } });
    f.app.ready();
    const win = await until(() => FakeWindow.all[0]);
    await until(() => win.webContents.loaded[0]);
    expect(win.webContents.loaded[0]).toBe(`${START_ORIGIN}/index.html`);
    expect(win.options).toMatchObject({ frame: false });
    expect(win.options.webPreferences).toMatchObject({
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      preload: join(resolve(import.meta.dirname, '..'), 'dist', 'preload.cjs'),
    });
    expect([...f.handlers.keys()].sort()).toEqual(Object.keys(CHANNEL_ARGS).sort());
    expect(f.trays[0]?.tooltip).toBe('Skyferry: no transfers running');

    // The start page is served from the built shell.
    if (existsSync(join(resolve(import.meta.dirname, '..'), 'dist', 'start', 'index.html'))) {
      const page = f.scheme()!({ url: `${START_ORIGIN}/index.html` });
      expect(page.status).toBe(200);
      expect(f.scheme()!({ url: `${START_ORIGIN}/../../etc/passwd` }).status).toBe(404);
    }

    // The web app cannot choose the server; the start page can.
    await expect(f.call(CHANNELS.connectionSet, 'http://127.0.0.1:9/', { mode: 'local' })).rejects.toThrow(
      'not allowed',
    );
    const connection = (await f.call(CHANNELS.connectionSet, `${START_ORIGIN}/index.html`, { mode: 'local' })) as {
      serverUrl: string;
    };
    expect(connection.serverUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(win.webContents.loaded.at(-1)).toBe(connection.serverUrl);
    expect((await fetch(`${connection.serverUrl}/healthz`)).ok).toBe(true);
    expect(existsSync(join(userData, 'secrets', 'server.secret'))).toBe(true);

    // Now the web app of that server may use the bridge, and the window controls reach the window.
    await f.call(CHANNELS.windowToggleMaximize, `${connection.serverUrl}/manage`);
    expect(win.maximized).toBe(true);
    expect(win.webContents.sent).toContainEqual([EVENTS.maximized, true]);
    await f.call(CHANNELS.traySetTransfers, `${connection.serverUrl}/`, [{ id: 'a', name: 'Photos', percent: 50 }]);
    expect(f.trays[0]?.tooltip).toBe('Skyferry: 1 transfer running');
    await f.call(CHANNELS.notifyTaskEnded, `${connection.serverUrl}/`, { title: 'Photos', body: 'Completed' });
    expect(f.notices).toContainEqual({ title: 'Photos', body: 'Completed' });

    // Links leave for the system browser; only the sign-in pop-up opens in the app.
    const open = win.webContents.openHandler!;
    expect(open({ url: 'https://example.com/help', frameName: '' })).toEqual({ action: 'deny' });
    expect(f.external).toContain('https://example.com/help');
    expect(open({ url: 'about:blank', frameName: 'skyferry-oauth' }).action).toBe('allow');
    const nav = {
      url: 'file:///etc/passwd',
      defaultPrevented: false,
      preventDefault: () => (nav.defaultPrevented = true),
    };
    win.webContents.emit('will-navigate', nav);
    expect(nav.defaultPrevented).toBe(true);

    // Cloud sign-in: the service's page goes to the system browser, which comes back to the
    // loopback address; the sign-in window then loads the server's callback with that query.
    const redirect = (await f.call(CHANNELS.oauthRedirectUri, `${connection.serverUrl}/`)) as string;
    expect(redirect).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/oauth\/callback$/);
    expect((await fetch(`${redirect}?code=c1&state=s1`)).status).toBe(409);
    const popup = new FakeWindow({});
    win.webContents.emit('did-create-window', popup, {});
    const signIn = {
      url: 'https://accounts.example.com/authorize?client_id=x',
      defaultPrevented: false,
      preventDefault: () => (signIn.defaultPrevented = true),
    };
    popup.webContents.emit('will-navigate', signIn);
    expect(signIn.defaultPrevented).toBe(true);
    expect(f.external).toContain('https://accounts.example.com/authorize?client_id=x');
    const back = await fetch(`${redirect}?code=c1&state=s1&extra=1`);
    expect(back.status).toBe(200);
    expect(popup.webContents.loaded).toEqual([`${connection.serverUrl}/api/clouds/oauth/callback?code=c1&state=s1`]);

    // Closing while a transfer runs keeps the app in the tray.
    const close = { defaultPrevented: false, preventDefault: () => (close.defaultPrevented = true) };
    win.emit('close', close);
    expect(close.defaultPrevented).toBe(true);
    expect(win.hidden).toBe(true);

    // Quitting stops the embedded server before the app goes.
    f.app.quit();
    await until(() => (f.app.quitCalls >= 2 ? true : undefined), 30_000);
    await expect(fetch(`${connection.serverUrl}/healthz`)).rejects.toThrow();
  });

  it("connects to an operator's server, remembers it, and shows it at the next start", async () => {
    const remote = await startEmbeddedServer({
      execPath: process.execPath,
      entry: serverEntry({ packaged: false, appPath: resolve(import.meta.dirname, '..'), resourcesPath: '' }),
      dataDir: temp(),
      port: 0,
      localRoots: '',
      runAsNode: false,
    });
    try {
      const userData = temp();
      const first = fakeElectron(userData);
      runShell({ electron: first.electron, updater: () => undefined as never, env: {} });
      first.app.ready();
      const win = await until(() => FakeWindow.all[0]);
      await until(() => win.webContents.loaded[0]);
      const start = `${START_ORIGIN}/index.html`;
      await expect(
        first.call(CHANNELS.connectionSet, start, { mode: 'remote', url: 'http://127.0.0.1:9' }),
      ).rejects.toThrow('No Skyferry server answers at http://127.0.0.1:9.');
      expect(win.webContents.sent).toContainEqual([
        EVENTS.connectionStatus,
        { phase: 'failed', message: 'No Skyferry server answers at http://127.0.0.1:9.' },
      ]);
      await first.call(CHANNELS.connectionSet, start, { mode: 'remote', url: `${remote.url}/manage` });
      expect(win.webContents.loaded.at(-1)).toBe(remote.url);
      expect(await first.call(CHANNELS.connectionGet, `${remote.url}/`)).toEqual({
        mode: 'remote',
        serverUrl: remote.url,
      });

      FakeWindow.all = [];
      const second = fakeElectron(userData);
      runShell({ electron: second.electron, updater: () => undefined as never, env: {} });
      second.app.ready();
      const again = await until(() => FakeWindow.all[0]);
      await until(() => (again.webContents.loaded.includes(remote.url) ? true : undefined));
    } finally {
      await remote.stop();
    }
  });
});
