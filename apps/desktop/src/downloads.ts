import { existsSync } from 'node:fs';
import { extname, join } from 'node:path';
import type { DesktopDownload } from '@skyferry/contract';

/** The part of Electron's DownloadItem the manager uses. */
export interface DownloadItemLike {
  getURL(): string;
  getFilename(): string;
  getTotalBytes(): number;
  getReceivedBytes(): number;
  setSavePath(path: string): void;
  on(event: 'updated', listener: (event: unknown, state: 'progressing' | 'interrupted') => void): unknown;
  once(event: 'done', listener: (event: unknown, state: 'completed' | 'cancelled' | 'interrupted') => void): unknown;
}

const RESERVED = /^(con|prn|aux|nul|com\d|lpt\d)(\..*)?$/i;

/** A file name safe on every system: no folders, no characters Windows refuses, not a device name. */
export function safeFileName(name: string): string {
  const base = name.split(/[/\\]/).pop() ?? '';
  let clean = [...base]
    .map((ch) => (ch.charCodeAt(0) < 32 || ch.charCodeAt(0) === 127 || '<>:"|?*'.includes(ch) ? '_' : ch))
    .join('')
    .replace(/[. ]+$/, '')
    .trim();
  if (clean === '' || clean === '.' || clean === '..') clean = 'download';
  if (RESERVED.test(clean)) clean = `_${clean}`;
  if (clean.length > 200) {
    const ext = extname(clean).slice(0, 20);
    clean = clean.slice(0, 200 - ext.length) + ext;
  }
  return clean;
}

/** `name` in `dir`, or "name (1).ext", "name (2).ext"... when taken: a download never overwrites. */
export function uniquePath(dir: string, name: string, taken: (path: string) => boolean): string {
  const ext = extname(name);
  const stem = ext ? name.slice(0, -ext.length) : name;
  for (let n = 0; ; n += 1) {
    const candidate = join(dir, n === 0 ? name : `${stem} (${n})${ext}`);
    if (!taken(candidate)) return candidate;
  }
}

export interface DownloadManagerOptions {
  /** The folder downloads go to now. */
  downloadDir(): string;
  /** Tells the page how a download goes. */
  emit(download: DesktopDownload): void;
  /** Remembers a completed file (open and show in folder accept only those). */
  remember(path: string): void;
  /** Told when a download ends (a notification). */
  onFinished?(download: DesktopDownload): void;
  exists?(path: string): boolean;
  startTimeoutMs?: number;
}

interface Expected {
  name: string;
  directory?: string;
  resolve(download: DesktopDownload): void;
  reject(err: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

/** How long an expected download may take to begin before its wait fails. */
export const DOWNLOAD_START_TIMEOUT_MS = 60_000;

/**
 * Saves downloads without a save dialog: into the folder the user chose (or the folder an export
 * names), under a name that takes nothing that is there already, and reports their progress.
 */
export class DownloadManager {
  private readonly options: DownloadManagerOptions;
  private readonly expected = new Map<string, Expected[]>();
  private readonly inFlight = new Set<string>();
  private counter = 0;

  constructor(options: DownloadManagerOptions) {
    this.options = options;
  }

  /** Waits for the download of `url` the caller is about to start; resolves when it completes. */
  expect(url: string, name: string, directory?: string): Promise<DesktopDownload> {
    return new Promise((resolve, reject) => {
      const list = this.expected.get(url) ?? [];
      const entry: Expected = {
        name,
        ...(directory ? { directory } : {}),
        resolve,
        reject,
        // A download that never begins (the session refused it) must not leave the page waiting.
        timer: setTimeout(() => {
          const waiting = this.expected.get(url);
          const i = waiting?.indexOf(entry) ?? -1;
          if (waiting && i >= 0) waiting.splice(i, 1);
          if (waiting?.length === 0) this.expected.delete(url);
          reject(new Error('The download did not start.'));
        }, this.options.startTimeoutMs ?? DOWNLOAD_START_TIMEOUT_MS),
      };
      list.push(entry);
      this.expected.set(url, list);
    });
  }

  /** Session 'will-download': chooses where the item goes and follows it. */
  handle(item: DownloadItemLike): void {
    const url = item.getURL();
    const waiting = this.expected.get(url);
    const expected = waiting?.shift();
    if (waiting && waiting.length === 0) this.expected.delete(url);
    if (expected) clearTimeout(expected.timer);
    const exists = this.options.exists ?? existsSync;
    const dir = expected?.directory ?? this.options.downloadDir();
    const path = uniquePath(
      dir,
      safeFileName(expected?.name ?? item.getFilename()),
      (p) => this.inFlight.has(p) || exists(p),
    );
    this.inFlight.add(path);
    item.setSavePath(path);
    this.counter += 1;
    const id = `d${Date.now().toString(36)}${this.counter}`;
    const snapshot = (state: DesktopDownload['state']): DesktopDownload => ({
      id,
      name: path.split(/[/\\]/).pop() ?? '',
      path,
      state,
      received: item.getReceivedBytes(),
      total: item.getTotalBytes(),
    });
    this.options.emit(snapshot('progressing'));
    item.on('updated', (_e, state) => {
      if (state === 'progressing') this.options.emit(snapshot('progressing'));
    });
    item.once('done', (_e, state) => {
      this.inFlight.delete(path);
      const done = snapshot(state === 'completed' ? 'completed' : state === 'cancelled' ? 'cancelled' : 'failed');
      if (done.state === 'completed') this.options.remember(path);
      this.options.emit(done);
      this.options.onFinished?.(done);
      if (!expected) return;
      if (done.state === 'completed') expected.resolve(done);
      else
        expected.reject(new Error(done.state === 'cancelled' ? 'The download was canceled.' : 'The download failed.'));
    });
  }
}
