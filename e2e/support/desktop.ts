import { EventEmitter } from 'node:events';
import { createWriteStream, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { BrowserContext, Page } from 'playwright-core';
import type { DesktopPlatform, DesktopTransfer } from '@skyferry/contract';
import { DownloadManager, type DownloadItemLike } from '../../apps/desktop/src/downloads.ts';
import { createHandlers, type WindowLike } from '../../apps/desktop/src/handlers.ts';
import { EVENTS } from '../../apps/desktop/src/ipc/names.ts';
import { IpcRouter, originOf } from '../../apps/desktop/src/ipc/router.ts';
import { LogFile } from '../../apps/desktop/src/logs.ts';
import { SettingsStore } from '../../apps/desktop/src/settings.ts';
import { pageBridgeScript } from '../../apps/desktop/src/testing/build-page-bridge.ts';
import { realUpdater, startUpdateFeed, type Feed } from '../../apps/desktop/src/testing/update-feed.ts';
import { UpdateController } from '../../apps/desktop/src/updates.ts';

/**
 * The desktop shell's main process for a browser journey: the real IPC router and handlers, the
 * real update controller over electron-updater and a loopback feed, the real download manager and
 * settings; Electron's own parts (window, dialogs, the system shell, the session's download) are
 * recording stand-ins. The page gets the preload's real bridge over a fake IPC that calls into
 * this process, with the calling frame's address checked as ipcMain's senderFrame would be.
 */
export interface DesktopHarness {
  feed: Feed;
  updates: UpdateController;
  settings: SettingsStore;
  logs: LogFile;
  window: { minimized: number; maximized: boolean; closed: number };
  /** What the folder chooser answers next. */
  nextDirectory: string | null;
  opened: string[];
  shown: string[];
  installs: number;
  transfers: DesktopTransfer[][];
  notices: Array<{ title: string; body: string }>;
  refused: string[];
  downloadsDir: string;
  dir: string;
  close(): Promise<void>;
}

/** The session's download of a URL, as Electron would hand it to will-download: fetched, then written. */
class FetchedDownload extends EventEmitter implements DownloadItemLike {
  private savePath = '';
  private received = 0;
  private readonly url: string;
  private readonly response: Response;

  constructor(url: string, response: Response) {
    super();
    this.url = url;
    this.response = response;
  }
  getURL = () => this.url;
  getFilename = () =>
    /filename="?([^";]+)"?/.exec(this.response.headers.get('content-disposition') ?? '')?.[1] ?? 'download';
  getTotalBytes = () => Number(this.response.headers.get('content-length') ?? 0);
  getReceivedBytes = () => this.received;
  setSavePath = (path: string) => {
    this.savePath = path;
  };
  async run(): Promise<void> {
    try {
      if (!this.response.ok || !this.response.body) throw new Error(`HTTP ${this.response.status}`);
      const body = Readable.fromWeb(this.response.body as WebReadableStream);
      body.on('data', (chunk: Buffer) => {
        this.received += chunk.length;
        this.emit('updated', {}, 'progressing');
      });
      await pipeline(body, createWriteStream(this.savePath));
      this.emit('done', {}, 'completed');
    } catch {
      this.emit('done', {}, 'interrupted');
    }
  }
}

export async function desktopShell(
  context: BrowserContext,
  options: { serverUrl: string; platform: DesktopPlatform; version: string },
): Promise<DesktopHarness> {
  const dir = mkdtempSync(join(tmpdir(), 'sf-desktop-e2e-'));
  const downloadsDir = join(dir, 'Downloads');
  mkdirSync(downloadsDir);
  const feed = await startUpdateFeed();
  const pages = new Set<Page>();
  const emit = (event: string, payload: unknown) => {
    for (const page of pages) {
      void page
        .evaluate(
          ([e, p]) =>
            (globalThis as unknown as { __skyferryEmit?: (e: string, p: unknown) => void }).__skyferryEmit?.(e, p),
          [event, payload] as const,
        )
        .catch(() => undefined);
    }
  };
  const settings = new SettingsStore(join(dir, 'settings.json'));
  const logs = new LogFile(join(dir, 'logs'));
  const serverOrigin = originOf(options.serverUrl);
  const h: DesktopHarness = {
    feed,
    updates: undefined as unknown as UpdateController,
    settings,
    logs,
    window: { minimized: 0, maximized: false, closed: 0 },
    nextDirectory: null,
    opened: [],
    shown: [],
    installs: 0,
    transfers: [],
    notices: [],
    refused: [],
    downloadsDir,
    dir,
    async close() {
      await feed.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  h.updates = new UpdateController({
    updater: realUpdater(feed.url, options.version, dir, () => (h.installs += 1)),
    currentVersion: options.version,
    onState: (state) => emit(EVENTS.updateState, state),
  });
  const win: WindowLike = {
    minimize: () => (h.window.minimized += 1),
    maximize: () => {
      h.window.maximized = true;
      emit(EVENTS.maximized, true);
    },
    unmaximize: () => {
      h.window.maximized = false;
      emit(EVENTS.maximized, false);
    },
    isMaximized: () => h.window.maximized,
    close: () => (h.window.closed += 1),
  };
  const downloads = new DownloadManager({
    downloadDir: () => settings.get().downloadPath || downloadsDir,
    emit: (d) => emit(EVENTS.download, d),
    remember: (path) => settings.rememberSaved(path),
  });
  const router = new IpcRouter({
    appOrigin: () => serverOrigin,
    startOrigin: 'skyferry://start',
    onRefused: (channel, reason) => h.refused.push(`${channel} ${reason}`),
  });
  router.register(
    createHandlers({
      window: () => win,
      chooseDirectory: async () => h.nextDirectory,
      updates: h.updates,
      logs,
      openPath: async (path) => {
        h.opened.push(path);
        return '';
      },
      showItemInFolder: (path) => h.shown.push(path),
      settings,
      systemDownloads: () => downloadsDir,
      downloads,
      startDownload: (url) => {
        void fetch(url).then((res) => {
          const item = new FetchedDownload(url, res);
          downloads.handle(item);
          return item.run();
        });
      },
      appOrigin: () => serverOrigin,
      setTransfers: (list) => h.transfers.push(list),
      notify: (title, body) => h.notices.push({ title, body }),
      connection: () => ({ mode: 'local', serverUrl: options.serverUrl }),
      changeConnection: () => undefined,
      setConnection: async () => {
        throw new Error('not in this journey');
      },
      oauthRedirectUri: async () => null,
    }),
  );
  await context.exposeBinding('__skyferryInvoke', (source, channel: string, args: unknown[]) =>
    router.dispatch(channel, { url: source.frame.url(), parent: source.frame.parentFrame() }, args),
  );
  await context.addInitScript(
    (info) => {
      (globalThis as unknown as { __skyferryInfo: unknown }).__skyferryInfo = info;
    },
    { platform: options.platform, version: options.version, maximized: false },
  );
  await context.addInitScript({ content: await pageBridgeScript() });
  context.on('page', (page) => {
    pages.add(page);
    page.on('close', () => pages.delete(page));
  });
  return h;
}
