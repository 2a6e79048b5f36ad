import { Readable } from 'node:stream';
import { canceled, ProviderError } from '../../api/errors.ts';
import type { ProviderContext } from '../../api/registry.ts';
import type {
  Entry,
  Features,
  HashType,
  ListOptions,
  Page,
  Provider,
  ReadOptions,
  SrcInfo,
  WriteOptions,
} from '../../api/types.ts';
import { cleanPath, joinPath, pathSegments } from '../../path.ts';
import {
  bodyStream,
  genericHttpError,
  KeyedMutex,
  retryAfterOf,
  urlOf,
  type ApiClient,
  type ErrorInfo,
} from '../oauth-common/http.ts';
import { numberSetting, setupOAuth } from '../oauth-common/setup.ts';
import { spoolToTemp } from '../oauth-common/spool.ts';
import { ByteTaker, type ByteSource } from '../oauth-common/take.ts';

/**
 * Google Photos through the Library API. Since March 31, 2025 the API lists, searches and reads
 * only media items and albums this app created: a cloud of this kind shows what Skyferry uploaded,
 * never the rest of the user's library (Google's own Picker API is the way to choose other photos).
 * Layout: "/" holds the app's albums as folders and every media item the app uploaded as files;
 * "/<album>" holds that album's items. Writing "/<name>" uploads to the library, writing
 * "/<album>/<name>" uploads into the album (created when missing); mkdir "/<album>" creates an
 * album. Pictures and videos only. The API cannot delete, rename or move media, reports no sizes
 * (they are read from the media URL) and no hashes, and a second upload of a name adds another
 * item rather than replacing it (listings then tag each with the end of its id; the plain name
 * names the newest).
 * References: https://developers.google.com/photos/library/guides/upload-media,
 * https://developers.google.com/photos/library/guides/resumable-uploads,
 * https://developers.google.com/photos/library/guides/access-media-items,
 * https://developers.google.com/photos/support/updates (March 2025 changes).
 */

const MiB = 1024 * 1024;

/** File types the Library API accepts (upload-media guide). */
const PHOTO_EXT = [
  'avif',
  'bmp',
  'gif',
  'heic',
  'heif',
  'ico',
  'jpg',
  'jpeg',
  'png',
  'tif',
  'tiff',
  'webp',
  'cr2',
  'nef',
  'arw',
  'dng',
  'raw',
];
const VIDEO_EXT = [
  '3gp',
  '3g2',
  'asf',
  'avi',
  'divx',
  'm2t',
  'm2ts',
  'm4v',
  'mkv',
  'mmv',
  'mod',
  'mov',
  'mp4',
  'mpg',
  'mts',
  'tod',
  'wmv',
];
const MIME_OF: Record<string, string> = {
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
  heif: 'image/heif',
  avif: 'image/avif',
  bmp: 'image/bmp',
  tif: 'image/tiff',
  tiff: 'image/tiff',
  mp4: 'video/mp4',
  mov: 'video/quicktime',
  m4v: 'video/x-m4v',
  avi: 'video/x-msvideo',
  mkv: 'video/x-matroska',
  wmv: 'video/x-ms-wmv',
  '3gp': 'video/3gpp',
  mpg: 'video/mpeg',
};

export function photosMediaKind(name: string, mimeType?: string): 'photo' | 'video' | undefined {
  const ext = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1).toLowerCase() : '';
  if (PHOTO_EXT.includes(ext)) return 'photo';
  if (VIDEO_EXT.includes(ext)) return 'video';
  if (!ext && mimeType?.startsWith('image/')) return 'photo';
  if (!ext && mimeType?.startsWith('video/')) return 'video';
  return undefined;
}

interface MediaItem {
  id: string;
  filename: string;
  mimeType?: string;
  baseUrl: string;
  mediaMetadata?: { creationTime?: string; photo?: unknown; video?: unknown };
}

interface Album {
  id: string;
  title: string;
  isWriteable?: boolean;
  mediaItemsCount?: string;
}

interface GoogleError {
  error?: { code?: number; message?: string; status?: string };
}

export function photosError(e: ErrorInfo): ProviderError {
  const err = (e.json as GoogleError | undefined)?.error;
  const status = err?.status ?? '';
  const message = `Google Photos: ${err?.message ?? (e.text.slice(0, 200) || `HTTP ${e.status}`)}`;
  const retryAfterMs = retryAfterOf(e.headers);
  const opts = { serviceCode: status || String(e.status), ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  if (e.status === 429 || status === 'RESOURCE_EXHAUSTED') return new ProviderError('rate_limited', message, opts);
  if (e.status === 401 || status === 'UNAUTHENTICATED') return new ProviderError('auth_expired', message, opts);
  if (status === 'PERMISSION_DENIED') return new ProviderError('permission', message, opts);
  if (status === 'NOT_FOUND') return new ProviderError('not_found', message, opts);
  return genericHttpError(e, message, status || undefined);
}

function notSupported(what: string): ProviderError {
  return new ProviderError('not_supported', `Google Photos' API cannot ${what}`);
}

export interface GooglePhotosOptions {
  credentials: Record<string, unknown>;
  ctx: ProviderContext;
}

export class GooglePhotosProvider implements Provider {
  readonly kind = 'google_photos';
  readonly accountKey: string;
  readonly features: Features = {
    copy: false,
    move: false,
    trash: false,
    about: false,
    chunkWriter: false,
    listRecursive: false,
    setModTime: false,
    caseInsensitive: false,
    bucketBased: false,
    needsSize: true,
  };
  readonly hashes: ReadonlySet<HashType> = new Set<HashType>();
  readonly chunkSize: number;
  private readonly api: ApiClient;
  private readonly base: string;
  private readonly uploadBase: string;
  private readonly locks = new KeyedMutex();
  /** Byte sizes learnt from the media URLs, by item id. */
  private readonly sizes = new Map<string, number>();

  constructor(opts: GooglePhotosOptions) {
    const s = setupOAuth(opts.credentials, opts.ctx, {
      kind: 'google_photos',
      service: 'google',
      accountPrefix: 'google_photos',
      defaultApiUrl: 'https://photoslibrary.googleapis.com',
      mapError: photosError,
    });
    this.api = s.api;
    this.accountKey = s.accountKey;
    this.base = s.apiUrl;
    this.uploadBase = s.uploadUrl;
    // Resumable chunks are multiples of the 256 KiB granularity the service announces.
    this.chunkSize = Math.max(
      256 * 1024,
      Math.floor(numberSetting(opts.credentials, 'chunk_size', 8 * MiB) / (256 * 1024)) * 256 * 1024,
    );
  }

  private u(path: string, query: Record<string, string | number | undefined> = {}): string {
    return urlOf(this.base, `/v1${path}`, query);
  }

  /** "/" -> root; "/x" -> album or item at root; "/a/x" -> item in album a. */
  private parse(path: string): { album?: string; name?: string } {
    const segs = pathSegments(cleanPath(path));
    if (segs.length === 0) return {};
    if (segs.length === 1) return { name: segs[0]! };
    if (segs.length === 2) return { album: segs[0]!, name: segs[1]! };
    throw new ProviderError('not_supported', 'Google Photos albums cannot be nested: use "/<album>/<file>"');
  }

  // ---------- listing ----------

  private async allAlbums(signal?: AbortSignal): Promise<Album[]> {
    const out: Album[] = [];
    let pageToken: string | undefined;
    do {
      const page = await this.api.json<{ albums?: Album[]; nextPageToken?: string }>({
        method: 'GET',
        url: this.u('/albums', { pageSize: 50, pageToken }),
        ...(signal ? { signal } : {}),
      });
      out.push(...(page.albums ?? []));
      pageToken = page.nextPageToken;
    } while (pageToken);
    return out;
  }

  private async albumNamed(title: string, signal?: AbortSignal): Promise<Album | undefined> {
    return (await this.allAlbums(signal)).find((a) => a.title === title);
  }

  private async mediaPage(
    albumId: string | undefined,
    pageToken: string | undefined,
    pageSize: number,
    signal?: AbortSignal,
  ): Promise<{ mediaItems?: MediaItem[]; nextPageToken?: string }> {
    if (albumId) {
      return this.api.json({
        method: 'POST',
        url: this.u('/mediaItems:search'),
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ albumId, pageSize, ...(pageToken ? { pageToken } : {}) }),
        ...(signal ? { signal } : {}),
      });
    }
    return this.api.json({
      method: 'GET',
      url: this.u('/mediaItems', { pageSize, pageToken }),
      ...(signal ? { signal } : {}),
    });
  }

  private mediaUrl(it: MediaItem): string {
    // =d is the original photo (metadata such as location may be removed), =dv the original video.
    return `${it.baseUrl}=${it.mediaMetadata?.video !== undefined ? 'dv' : 'd'}`;
  }

  /** The size of an item's bytes, from a HEAD of its media URL (the API reports none). */
  private async sizeOf(it: MediaItem, signal?: AbortSignal): Promise<number> {
    const known = this.sizes.get(it.id);
    if (known !== undefined) return known;
    const res = await this.api.request({
      method: 'HEAD',
      url: this.mediaUrl(it),
      auth: false,
      ...(signal ? { signal } : {}),
    });
    await res.body?.cancel().catch(() => undefined);
    const n = Number(res.headers.get('content-length') ?? -1);
    if (n >= 0) this.sizes.set(it.id, n);
    return n;
  }

  private async toEntries(dir: string, items: MediaItem[], signal?: AbortSignal): Promise<Entry[]> {
    // Names repeat in Photos: later ones get the id's start so each path names one item.
    const seen = new Map<string, number>();
    for (const it of items) seen.set(it.filename, (seen.get(it.filename) ?? 0) + 1);
    const entries: Entry[] = new Array(items.length);
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(8, items.length) }, async () => {
        while (next < items.length) {
          const i = next++;
          const it = items[i]!;
          const name = (seen.get(it.filename) ?? 0) > 1 ? disambiguate(it.filename, it.id) : it.filename;
          const e: Entry = {
            path: joinPath(dir, name),
            name,
            kind: 'file',
            size: await this.sizeOf(it, signal),
            id: it.id,
          };
          if (it.mimeType) e.mimeType = it.mimeType;
          if (it.mediaMetadata?.creationTime) e.modTime = new Date(it.mediaMetadata.creationTime);
          entries[i] = e;
        }
      }),
    );
    return entries;
  }

  async list(dir: string, opts: ListOptions = {}): Promise<Page> {
    const p = cleanPath(dir);
    const { album, name } = this.parse(p);
    const pageSize = Math.min(Math.max(opts.pageSize ?? 100, 1), 100);
    if (name === undefined) {
      // The root: albums first (on the first page), then the library's items.
      const entries: Entry[] = [];
      if (!opts.pageToken) {
        for (const a of await this.allAlbums(opts.signal))
          entries.push({ path: joinPath('/', a.title), name: a.title, kind: 'dir', size: 0, id: a.id });
      }
      const page = await this.mediaPage(undefined, opts.pageToken, pageSize, opts.signal);
      entries.push(...(await this.toEntries('/', page.mediaItems ?? [], opts.signal)));
      return { entries, ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}) };
    }
    if (album !== undefined) throw new ProviderError('not_dir', `not a folder: ${p}`);
    const a = await this.albumNamed(name, opts.signal);
    if (!a) {
      const item = await this.findItem(undefined, name, opts.signal).catch(() => undefined);
      if (item) throw new ProviderError('not_dir', `not a folder: ${p}`);
      throw new ProviderError('not_found', `not found: ${p}`);
    }
    const page = await this.mediaPage(a.id, opts.pageToken, pageSize, opts.signal);
    return {
      entries: await this.toEntries(p, page.mediaItems ?? [], opts.signal),
      ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}),
    };
  }

  private async findItem(
    albumId: string | undefined,
    name: string,
    signal?: AbortSignal,
  ): Promise<MediaItem | undefined> {
    const all: MediaItem[] = [];
    let pageToken: string | undefined;
    do {
      const page = await this.mediaPage(albumId, pageToken, 100, signal);
      all.push(...(page.mediaItems ?? []));
      pageToken = page.nextPageToken;
    } while (pageToken);
    const counts = new Map<string, number>();
    for (const it of all) counts.set(it.filename, (counts.get(it.filename) ?? 0) + 1);
    const exact = all.find(
      (it) => ((counts.get(it.filename) ?? 0) > 1 ? disambiguate(it.filename, it.id) : it.filename) === name,
    );
    if (exact) return exact;
    // A name several items share (listed with an id tag each) also names the newest of them, so
    // the entry put answers for a second upload of a name reads back what was just written.
    let newest: MediaItem | undefined;
    for (const it of all) {
      if (it.filename !== name) continue;
      if (!newest || createdAt(it) >= createdAt(newest)) newest = it;
    }
    return newest;
  }

  async stat(path: string, opts: { signal?: AbortSignal } = {}): Promise<Entry> {
    const p = cleanPath(path);
    const { album, name } = this.parse(p);
    if (name === undefined) return { path: '/', name: '', kind: 'dir', size: 0 };
    let albumId: string | undefined;
    if (album === undefined) {
      const a = await this.albumNamed(name, opts.signal);
      if (a) return { path: p, name, kind: 'dir', size: 0, id: a.id };
    } else {
      const a = await this.albumNamed(album, opts.signal);
      if (!a) throw new ProviderError('not_found', `not found: ${p}`);
      albumId = a.id;
    }
    const it = await this.findItem(albumId, name, opts.signal);
    if (!it) throw new ProviderError('not_found', `not found: ${p}`);
    return (await this.toEntries(album !== undefined ? `/${album}` : '/', [it], opts.signal))[0]!;
  }

  async openRead(path: string, opts: ReadOptions = {}): Promise<Readable> {
    const e = await this.stat(path, opts.signal ? { signal: opts.signal } : {});
    if (e.kind === 'dir') throw new ProviderError('is_dir', `is a folder: ${cleanPath(path)}`);
    const it = await this.api.json<MediaItem>({
      method: 'GET',
      url: this.u(`/mediaItems/${encodeURIComponent(e.id!)}`),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    const headers: Record<string, string> = {};
    if (opts.range) {
      if (opts.range.start >= e.size) return Readable.from([]);
      headers.range = `bytes=${opts.range.start}-${opts.range.end !== undefined ? Math.min(opts.range.end, e.size - 1) : ''}`;
    }
    const res = await this.api.request({
      method: 'GET',
      url: this.mediaUrl(it),
      headers,
      auth: false,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    return bodyStream(res, opts.signal);
  }

  // ---------- writing ----------

  /** Creates an album (the API has no way to remove one). */
  async mkdir(path: string): Promise<void> {
    const { album, name } = this.parse(path);
    if (name === undefined) return;
    if (album !== undefined) throw new ProviderError('not_supported', 'Google Photos albums cannot be nested');
    await this.ensureAlbum(name);
  }

  private async ensureAlbum(title: string, signal?: AbortSignal): Promise<Album> {
    return this.locks.run(`album:${title}`, async () => {
      const found = await this.albumNamed(title, signal);
      if (found) return found;
      return this.api.json<Album>({
        method: 'POST',
        url: this.u('/albums'),
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ album: { title } }),
        ...(signal ? { signal } : {}),
      });
    });
  }

  async put(path: string, body: Readable, src: SrcInfo, opts: WriteOptions = {}): Promise<Entry> {
    const p = cleanPath(path);
    const { album, name } = this.parse(p);
    if (name === undefined) throw new ProviderError('is_dir', 'cannot write the root');
    const kind = photosMediaKind(name, src.mimeType);
    if (!kind) {
      body.destroy();
      throw new ProviderError('not_supported', `Google Photos takes pictures and videos only: ${name}`);
    }
    const signal = opts.signal;
    const reader = new ByteTaker(body);
    let spooled: Awaited<ReturnType<typeof spoolToTemp>> | undefined;
    try {
      if (album === undefined && (await this.albumNamed(name, signal)))
        throw new ProviderError('is_dir', `an album has this name: ${p}`);
      const mimeType =
        src.mimeType ??
        MIME_OF[name.slice(name.lastIndexOf('.') + 1).toLowerCase()] ??
        (kind === 'photo' ? 'image/jpeg' : 'video/mp4');
      const first = (await reader.read(this.chunkSize, signal)) ?? Buffer.alloc(0);
      let token: string;
      const more = first.length === this.chunkSize ? await reader.read(this.chunkSize, signal) : null;
      if (!more) {
        if (src.size >= 0 && first.length !== src.size) throw shortBody(first.length, src.size);
        token = await this.rawUpload(first, mimeType, signal);
        opts.onProgress?.(first.length);
      } else {
        let source: ByteSource = reader;
        let size = src.size;
        const pending: Buffer[] = [first, more];
        if (size < 0) {
          // A resumable upload announces the size: keep the bytes on disk first.
          spooled = await spoolToTemp(pending.splice(0), reader, this.chunkSize, signal);
          size = spooled.size;
          source = new ByteTaker(spooled.open());
        }
        token = await this.resumableUpload(pending, source, size, mimeType, opts, signal);
      }
      const albumId = album !== undefined ? (await this.ensureAlbum(album, signal)).id : undefined;
      const item = await this.create(token, name, albumId, signal);
      const dir = album !== undefined ? `/${album}` : '/';
      return (await this.toEntries(dir, [item], signal))[0]!;
    } catch (err) {
      await reader.cancel().catch(() => undefined);
      body.destroy();
      if (signal?.aborted) throw canceled();
      throw err;
    } finally {
      await spooled?.cleanup();
    }
  }

  private async rawUpload(data: Buffer, mimeType: string, signal?: AbortSignal): Promise<string> {
    const res = await this.api.request({
      method: 'POST',
      url: urlOf(this.uploadBase, '/v1/uploads'),
      headers: {
        'content-type': 'application/octet-stream',
        'x-goog-upload-content-type': mimeType,
        'x-goog-upload-protocol': 'raw',
      },
      body: data,
      ...(signal ? { signal } : {}),
    });
    return (await res.text()).trim();
  }

  /** Resumable upload (start, upload in granularity multiples, finalize); answers the upload token. */
  private async resumableUpload(
    first: Buffer[],
    source: ByteSource,
    size: number,
    mimeType: string,
    opts: WriteOptions,
    signal?: AbortSignal,
  ): Promise<string> {
    const start = await this.api.request({
      method: 'POST',
      url: urlOf(this.uploadBase, '/v1/uploads'),
      headers: {
        'x-goog-upload-command': 'start',
        'x-goog-upload-content-type': mimeType,
        'x-goog-upload-protocol': 'resumable',
        'x-goog-upload-raw-size': String(size),
      },
      ...(signal ? { signal } : {}),
    });
    await start.body?.cancel().catch(() => undefined);
    const url = start.headers.get('x-goog-upload-url');
    if (!url) throw new ProviderError('server', 'Google Photos did not answer an upload URL');
    const granularity = Number(start.headers.get('x-goog-upload-chunk-granularity') ?? 256 * 1024) || 256 * 1024;
    const chunk = Math.max(granularity, Math.floor(this.chunkSize / granularity) * granularity);
    let offset = 0;
    let pending: Buffer = first.length ? Buffer.concat(first) : Buffer.alloc(0);
    for (;;) {
      while (pending.length < chunk) {
        const more = await source.read(chunk - pending.length, signal);
        if (!more) break;
        pending = pending.length ? Buffer.concat([pending, more]) : more;
      }
      const piece = pending.subarray(0, chunk);
      pending = pending.subarray(piece.length);
      const final = offset + piece.length >= size;
      if (piece.length < chunk && !final) throw shortBody(offset + piece.length, size);
      if (final && (offset + piece.length !== size || pending.length > 0))
        throw shortBody(offset + piece.length + pending.length, size);
      const res = await this.api.request({
        method: 'POST',
        url,
        auth: false,
        headers: {
          'x-goog-upload-command': final ? 'upload, finalize' : 'upload',
          'x-goog-upload-offset': String(offset),
        },
        body: piece,
        ...(signal ? { signal } : {}),
      });
      offset += piece.length;
      opts.onProgress?.(offset);
      if (final) return (await res.text()).trim();
      await res.body?.cancel().catch(() => undefined);
    }
  }

  private async create(
    token: string,
    filename: string,
    albumId: string | undefined,
    signal?: AbortSignal,
  ): Promise<MediaItem> {
    const r = await this.api.json<{
      newMediaItemResults?: Array<{ status?: { code?: number; message?: string }; mediaItem?: MediaItem }>;
    }>({
      method: 'POST',
      url: this.u('/mediaItems:batchCreate'),
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        ...(albumId ? { albumId } : {}),
        newMediaItems: [{ description: '', simpleMediaItem: { uploadToken: token, fileName: filename } }],
      }),
      ...(signal ? { signal } : {}),
    });
    const result = r.newMediaItemResults?.[0];
    if (!result?.mediaItem || (result.status?.code !== undefined && result.status.code !== 0)) {
      throw new ProviderError(
        'not_supported',
        `Google Photos refused ${filename}: ${result?.status?.message ?? 'no media item created'}`,
        { serviceCode: String(result?.status?.code ?? '') },
      );
    }
    return result.mediaItem;
  }

  // ---------- albums (the file calls find these by shape: listAlbums, createAlbum, addToAlbum) ----------

  /** The albums this app created. */
  async listAlbums(opts: { signal?: AbortSignal } = {}): Promise<Array<{ id: string; title: string; count?: number }>> {
    return (await this.allAlbums(opts.signal)).map((a) => ({
      id: a.id,
      title: a.title,
      ...(a.mediaItemsCount !== undefined ? { count: Number(a.mediaItemsCount) } : {}),
    }));
  }

  /** Creates an album (an album of that title already made by this app is reused). */
  async createAlbum(title: string): Promise<{ id: string; title: string }> {
    const a = await this.ensureAlbum(title);
    return { id: a.id, title: a.title };
  }

  /** Adds media this app uploaded (named by their paths) to an album it created; answers how many. */
  async addToAlbum(albumId: string, paths: string[]): Promise<number> {
    const ids: string[] = [];
    for (const path of paths) {
      const e = await this.stat(path);
      if (e.kind !== 'file' || !e.id) throw new ProviderError('not_found', `not a media item: ${path}`);
      ids.push(e.id);
    }
    for (let i = 0; i < ids.length; i += 50) {
      await this.api.request({
        method: 'POST',
        url: this.u(`/albums/${encodeURIComponent(albumId)}:batchAddMediaItems`),
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ mediaItemIds: ids.slice(i, i + 50) }),
      });
    }
    return ids.length;
  }

  /** One page of an album's items, as their paths ("/<album>/<name>"). */
  async listAlbumItems(
    albumId: string,
    opts: { pageToken?: string; signal?: AbortSignal } = {},
  ): Promise<{ paths: string[]; nextPageToken?: string }> {
    const album = (await this.allAlbums(opts.signal)).find((a) => a.id === albumId);
    if (!album) throw new ProviderError('not_found', 'album not found');
    const page = await this.mediaPage(albumId, opts.pageToken, 100, opts.signal);
    const entries = await this.toEntries(`/${album.title}`, page.mediaItems ?? [], opts.signal);
    return { paths: entries.map((e) => e.path), ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}) };
  }

  async remove(_path: string): Promise<void> {
    throw notSupported('delete media items');
  }

  async rmdir(path: string): Promise<void> {
    if (cleanPath(path) === '/') throw new ProviderError('permission', 'cannot remove the root');
    throw notSupported('delete albums');
  }

  async rename(_path: string, _newName: string): Promise<Entry> {
    throw notSupported('rename media items');
  }

  async close(): Promise<void> {
    // fetch keeps no per-provider connections to release.
  }
}

function createdAt(it: MediaItem): number {
  const t = Date.parse(it.mediaMetadata?.creationTime ?? '');
  return Number.isNaN(t) ? 0 : t;
}

function disambiguate(filename: string, id: string): string {
  const dot = filename.lastIndexOf('.');
  const tag = ` {${id.slice(-8)}}`;
  return dot > 0 ? filename.slice(0, dot) + tag + filename.slice(dot) : filename + tag;
}

function shortBody(got: number, announced: number): ProviderError {
  return new ProviderError('corrupted', `the source gave ${got} bytes where ${announced} were announced`);
}

export async function openGooglePhotos(
  credentials: Record<string, unknown>,
  ctx: ProviderContext,
): Promise<GooglePhotosProvider> {
  return new GooglePhotosProvider({ credentials, ctx });
}
