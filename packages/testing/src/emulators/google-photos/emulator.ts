import type { ServerResponse } from 'node:http';
import { randomId, sendBytes, sendEmpty, sendJson, sendText, type EmuRequest } from '../common/http.ts';
import { retryAfterHeader, ServiceEmulator, type AuthContext, type ServiceOptions } from '../common/service.ts';

/**
 * A Google Photos Library API emulator, in memory, built from Google's published documentation:
 * - Upload media (raw upload returning an upload token; mediaItems.batchCreate with up to 50
 *   items; accepted photo and video types): https://developers.google.com/photos/library/guides/upload-media
 * - Resumable uploads (X-Goog-Upload-Protocol: resumable, commands start / upload / finalize /
 *   query, X-Goog-Upload-URL, X-Goog-Upload-Chunk-Granularity):
 *   https://developers.google.com/photos/library/guides/resumable-uploads
 * - mediaItems list/get/search and albums list/create/get/batchAddMediaItems:
 *   https://developers.google.com/photos/library/reference/rest/v1/mediaItems and
 *   https://developers.google.com/photos/library/reference/rest/v1/albums
 * - Access media bytes through baseUrl with `=d` (photos) and `=dv` (videos):
 *   https://developers.google.com/photos/library/guides/access-media-items
 * - The March 31, 2025 changes: photoslibrary, photoslibrary.readonly and photoslibrary.sharing
 *   scopes removed; the Library API lists, searches and gets only media items and albums the app
 *   created; uploads need photoslibrary.appendonly; reading app-created data needs
 *   photoslibrary.readonly.appcreateddata or photoslibrary.edit.appcreateddata:
 *   https://developers.google.com/photos/support/updates and
 *   https://developers.google.com/photos/overview/authorization
 * - Errors use Google's standard shape {error: {code, message, status}}:
 *   https://cloud.google.com/apis/design/errors
 *
 * Departures, on purpose: the type of an item is judged from its file name and the declared
 * content type (the real service inspects the bytes); `=d` returns the bytes as uploaded (the real
 * service may strip location metadata from photos); base URLs do not expire.
 */

const SCOPE = 'https://www.googleapis.com/auth/photoslibrary';
export const PHOTOS_SCOPES = {
  appendonly: `${SCOPE}.appendonly`,
  readAppCreated: `${SCOPE}.readonly.appcreateddata`,
  editAppCreated: `${SCOPE}.edit.appcreateddata`,
} as const;

const PHOTO_EXT = [
  'avif',
  'bmp',
  'gif',
  'heic',
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
const GRANULARITY = 256 * 1024;

export interface PhotoItem {
  id: string;
  owner: string;
  filename: string;
  description: string;
  mimeType: string;
  video: boolean;
  content: Buffer;
  created: number;
  /** Created through this app (the only items the Library API still returns). */
  appCreated: boolean;
}

export interface Album {
  id: string;
  owner: string;
  title: string;
  items: string[];
  appCreated: boolean;
}

interface Upload {
  token: string;
  owner: string;
  content: Buffer;
  mimeType: string;
  expires: number;
}

interface ResumableUpload {
  id: string;
  owner: string;
  mimeType: string;
  size: number;
  received: Buffer[];
  receivedBytes: number;
}

export class GooglePhotosEmulator extends ServiceEmulator {
  readonly mediaItems = new Map<string, PhotoItem>();
  readonly albums = new Map<string, Album>();
  private readonly uploads = new Map<string, Upload>();
  private readonly resumables = new Map<string, ResumableUpload>();
  /** Resumable chunks received. */
  chunkPosts = 0;

  constructor(options: ServiceOptions) {
    super(options);
    this.route('POST', '/v1/uploads', (req, res, a) => this.upload(req, res, a));
    this.route('POST', '/v1/uploads/resumable/:id', (req, res) => this.resumable(req, res), { public: true });
    this.route('POST', '/v1/mediaItems:batchCreate', (req, res, a) => this.batchCreate(req, res, a));
    this.route('GET', '/v1/mediaItems', (req, res, a) => this.listMedia(req, res, a));
    this.route('POST', '/v1/mediaItems:search', (req, res, a) => this.search(req, res, a));
    this.route('GET', '/v1/mediaItems/:id', (req, res, a) => this.getMedia(req, res, a));
    this.route('GET', '/v1/albums', (req, res, a) => this.listAlbums(req, res, a));
    this.route('POST', '/v1/albums', (req, res, a) => this.createAlbum(req, res, a));
    this.route('GET', '/v1/albums/:id', (req, res, a) => this.getAlbum(req, res, a));
    this.route('POST', '/v1/albums/:idaction', (req, res, a) => this.albumAction(req, res, a));
    this.route('GET', '/lh/:spec', (req, res) => this.bytes(req, res), { public: true });
  }

  // ---------- errors ----------

  private err(
    res: ServerResponse,
    code: number,
    status: string,
    message: string,
    headers: Record<string, string> = {},
  ): void {
    sendJson(res, code, { error: { code, message, status } }, headers);
  }

  protected sendRateLimited(_req: EmuRequest, res: ServerResponse, seconds: number): void {
    this.err(
      res,
      429,
      'RESOURCE_EXHAUSTED',
      "Quota exceeded for quota metric 'All requests' and limit 'All requests per minute per user'.",
      {
        'retry-after': retryAfterHeader(seconds),
      },
    );
  }

  protected sendUnauthorized(_req: EmuRequest, res: ServerResponse): void {
    this.err(
      res,
      401,
      'UNAUTHENTICATED',
      'Request had invalid authentication credentials. Expected OAuth 2 access token.',
      {
        'www-authenticate': 'Bearer realm="https://accounts.google.com/", error="invalid_token"',
      },
    );
  }

  protected sendServerError(_req: EmuRequest, res: ServerResponse, status: number): void {
    this.err(res, status, 'UNAVAILABLE', 'The service is currently unavailable.');
  }

  protected sendNoRoute(_req: EmuRequest, res: ServerResponse): void {
    this.err(res, 404, 'NOT_FOUND', 'Requested entity was not found.');
  }

  /** The token must carry one of the scopes the method accepts (after the March 2025 changes). */
  private allowed(res: ServerResponse, a: AuthContext, ...scopes: string[]): boolean {
    const granted = a.scope.split(/\s+/);
    if (scopes.some((s) => granted.includes(s))) return true;
    this.err(res, 403, 'PERMISSION_DENIED', 'Request had insufficient authentication scopes.');
    return false;
  }

  private readScopes(): string[] {
    return [PHOTOS_SCOPES.readAppCreated, PHOTOS_SCOPES.editAppCreated];
  }

  // ---------- representation ----------

  item(i: PhotoItem): Record<string, unknown> {
    const creationTime = new Date(i.created).toISOString();
    return {
      id: i.id,
      description: i.description,
      productUrl: `https://photos.google.com/lr/photo/${i.id}`,
      baseUrl: `${this.url}/lh/${i.id}`,
      mimeType: i.mimeType,
      mediaMetadata: i.video
        ? { creationTime, width: '1920', height: '1080', video: { fps: 30, status: 'READY' } }
        : { creationTime, width: '4032', height: '3024', photo: {} },
      filename: i.filename,
    };
  }

  private albumRes(al: Album): Record<string, unknown> {
    const cover = al.items[0];
    return {
      id: al.id,
      title: al.title,
      productUrl: `https://photos.google.com/lr/album/${al.id}`,
      isWriteable: al.appCreated,
      mediaItemsCount: String(al.items.length),
      ...(cover ? { coverPhotoBaseUrl: `${this.url}/lh/${cover}`, coverPhotoMediaItemId: cover } : {}),
    };
  }

  private static kindOf(filename: string, mimeType: string): 'photo' | 'video' | undefined {
    const ext = filename.includes('.') ? filename.slice(filename.lastIndexOf('.') + 1).toLowerCase() : '';
    if (PHOTO_EXT.includes(ext) || (mimeType.startsWith('image/') && !ext)) return 'photo';
    if (VIDEO_EXT.includes(ext) || (mimeType.startsWith('video/') && !ext)) return 'video';
    return undefined;
  }

  private page<T>(
    list: T[],
    req: EmuRequest,
    body: Record<string, unknown> | undefined,
    def: number,
    max: number,
  ): { items: T[]; next?: string } {
    const size = Math.min(Math.max(Number(body?.pageSize ?? req.query('pageSize') ?? def) || def, 1), max);
    const token = String(body?.pageToken ?? req.query('pageToken') ?? '');
    const start = token ? Number(Buffer.from(token, 'base64url').toString()) : 0;
    const items = list.slice(start, start + size);
    return start + size < list.length
      ? { items, next: Buffer.from(String(start + size)).toString('base64url') }
      : { items };
  }

  // ---------- uploads ----------

  private async upload(req: EmuRequest, res: ServerResponse, a: AuthContext): Promise<void> {
    if (!this.allowed(res, a, PHOTOS_SCOPES.appendonly)) return;
    const protocol = (req.header('x-goog-upload-protocol') ?? '').toLowerCase();
    const body = await req.body();
    const mimeType = req.header('x-goog-upload-content-type') ?? 'application/octet-stream';
    if (protocol === 'raw') {
      const token = `CAIS${randomId(60)}`;
      this.uploads.set(token, { token, owner: a.user, content: body, mimeType, expires: Date.now() + 86_400_000 });
      return sendText(res, 200, token);
    }
    if (protocol === 'resumable' && (req.header('x-goog-upload-command') ?? '').toLowerCase() === 'start') {
      const size = Number(req.header('x-goog-upload-raw-size'));
      if (!Number.isFinite(size) || size < 0)
        return this.err(res, 400, 'INVALID_ARGUMENT', 'X-Goog-Upload-Raw-Size is required.');
      const id = randomId(40);
      this.resumables.set(id, { id, owner: a.user, mimeType, size, received: [], receivedBytes: 0 });
      return sendEmpty(res, 200, {
        'x-goog-upload-url': `${this.url}/v1/uploads/resumable/${id}`,
        'x-goog-upload-chunk-granularity': String(GRANULARITY),
        'x-goog-upload-status': 'active',
      });
    }
    this.err(res, 400, 'INVALID_ARGUMENT', 'X-Goog-Upload-Protocol must be raw or resumable.');
  }

  private async resumable(req: EmuRequest, res: ServerResponse): Promise<void> {
    const body = await req.body();
    const up = this.resumables.get(req.params.id ?? '');
    if (!up) return this.err(res, 404, 'NOT_FOUND', 'Upload session not found.');
    const command = (req.header('x-goog-upload-command') ?? '')
      .toLowerCase()
      .split(',')
      .map((c) => c.trim());
    if (command.includes('query')) {
      return sendEmpty(res, 200, {
        'x-goog-upload-status': 'active',
        'x-goog-upload-size-received': String(up.receivedBytes),
      });
    }
    const finalize = command.includes('finalize');
    if (command.includes('upload')) {
      const offset = Number(req.header('x-goog-upload-offset'));
      if (offset !== up.receivedBytes) {
        return sendEmpty(res, 400, {
          'x-goog-upload-status': 'active',
          'x-goog-upload-size-received': String(up.receivedBytes),
        });
      }
      if (!finalize && body.length % GRANULARITY !== 0)
        return this.err(res, 400, 'INVALID_ARGUMENT', 'Chunks must be a multiple of the chunk granularity.');
      this.chunkPosts++;
      up.received.push(body);
      up.receivedBytes += body.length;
    }
    if (!finalize) return sendEmpty(res, 200, { 'x-goog-upload-status': 'active' });
    if (up.receivedBytes !== up.size)
      return this.err(res, 400, 'INVALID_ARGUMENT', 'Received size does not match X-Goog-Upload-Raw-Size.');
    this.resumables.delete(up.id);
    const token = `CAIS${randomId(60)}`;
    this.uploads.set(token, {
      token,
      owner: up.owner,
      content: Buffer.concat(up.received, up.size),
      mimeType: up.mimeType,
      expires: Date.now() + 86_400_000,
    });
    sendText(res, 200, token, { 'x-goog-upload-status': 'final' });
  }

  private async batchCreate(req: EmuRequest, res: ServerResponse, a: AuthContext): Promise<void> {
    if (!this.allowed(res, a, PHOTOS_SCOPES.appendonly)) return;
    const body = await req.json<{
      albumId?: string;
      newMediaItems?: Array<{ description?: string; simpleMediaItem?: { uploadToken?: string; fileName?: string } }>;
    }>();
    const news = body.newMediaItems ?? [];
    if (news.length === 0 || news.length > 50)
      return this.err(res, 400, 'INVALID_ARGUMENT', 'Request must contain between 1 and 50 new media items.');
    let album: Album | undefined;
    if (body.albumId) {
      album = this.albums.get(body.albumId);
      if (!album || album.owner !== a.user) return this.err(res, 400, 'INVALID_ARGUMENT', 'Invalid album ID.');
      if (!album.appCreated)
        return this.err(
          res,
          403,
          'PERMISSION_DENIED',
          'The caller does not have permission to add items to this album (not created by this app).',
        );
    }
    const results = news.map((n) => {
      const token = n.simpleMediaItem?.uploadToken ?? '';
      const up = this.uploads.get(token);
      if (!up || up.owner !== a.user || Date.now() > up.expires) {
        return { uploadToken: token, status: { code: 3, message: 'Failed: Invalid upload token.' } };
      }
      const filename = n.simpleMediaItem?.fileName ?? 'upload';
      const kind = GooglePhotosEmulator.kindOf(filename, up.mimeType);
      if (!kind) {
        return {
          uploadToken: token,
          status: { code: 3, message: 'Failed: There was an error while trying to create this media item.' },
        };
      }
      if (kind === 'photo' && up.content.length > 200 * 1024 * 1024) {
        return { uploadToken: token, status: { code: 3, message: 'Failed: Photos are limited to 200 MB.' } };
      }
      this.uploads.delete(token);
      const item: PhotoItem = {
        id: `A${randomId(60)}`,
        owner: a.user,
        filename,
        description: n.description ?? '',
        mimeType:
          up.mimeType !== 'application/octet-stream' ? up.mimeType : kind === 'photo' ? 'image/jpeg' : 'video/mp4',
        video: kind === 'video',
        content: up.content,
        created: Date.now(),
        appCreated: true,
      };
      this.mediaItems.set(item.id, item);
      album?.items.push(item.id);
      return { uploadToken: token, status: { message: 'Success' }, mediaItem: this.item(item) };
    });
    sendJson(res, 200, { newMediaItemResults: results });
  }

  // ---------- reading ----------

  private visible(a: AuthContext): PhotoItem[] {
    return [...this.mediaItems.values()]
      .filter((i) => i.owner === a.user && i.appCreated)
      .sort((x, y) => y.created - x.created);
  }

  private listMedia(req: EmuRequest, res: ServerResponse, a: AuthContext): void {
    if (!this.allowed(res, a, ...this.readScopes())) return;
    const { items, next } = this.page(this.visible(a), req, undefined, 25, 100);
    sendJson(res, 200, { mediaItems: items.map((i) => this.item(i)), ...(next ? { nextPageToken: next } : {}) });
  }

  private async search(req: EmuRequest, res: ServerResponse, a: AuthContext): Promise<void> {
    if (!this.allowed(res, a, ...this.readScopes())) return;
    const body = await req.json<Record<string, unknown>>();
    let list = this.visible(a);
    if (body.albumId) {
      const album = this.albums.get(String(body.albumId));
      if (!album || album.owner !== a.user || !album.appCreated)
        return this.err(res, 400, 'INVALID_ARGUMENT', 'Invalid album ID.');
      list = album.items.map((id) => this.mediaItems.get(id)).filter((i): i is PhotoItem => !!i && i.appCreated);
    }
    const { items, next } = this.page(list, req, body, 25, 100);
    sendJson(res, 200, { mediaItems: items.map((i) => this.item(i)), ...(next ? { nextPageToken: next } : {}) });
  }

  private getMedia(req: EmuRequest, res: ServerResponse, a: AuthContext): void {
    if (!this.allowed(res, a, ...this.readScopes())) return;
    const i = this.mediaItems.get(req.params.id ?? '');
    if (!i || i.owner !== a.user) return this.err(res, 404, 'NOT_FOUND', 'Requested entity was not found.');
    if (!i.appCreated)
      return this.err(
        res,
        403,
        'PERMISSION_DENIED',
        'The caller does not have permission (media item not created by this app).',
      );
    sendJson(res, 200, this.item(i));
  }

  private listAlbums(req: EmuRequest, res: ServerResponse, a: AuthContext): void {
    if (!this.allowed(res, a, ...this.readScopes())) return;
    const list = [...this.albums.values()].filter((al) => al.owner === a.user && al.appCreated);
    const { items, next } = this.page(list, req, undefined, 20, 50);
    sendJson(res, 200, { albums: items.map((al) => this.albumRes(al)), ...(next ? { nextPageToken: next } : {}) });
  }

  private getAlbum(req: EmuRequest, res: ServerResponse, a: AuthContext): void {
    if (!this.allowed(res, a, ...this.readScopes())) return;
    const al = this.albums.get(req.params.id ?? '');
    if (!al || al.owner !== a.user) return this.err(res, 404, 'NOT_FOUND', 'Requested entity was not found.');
    if (!al.appCreated)
      return this.err(
        res,
        403,
        'PERMISSION_DENIED',
        'The caller does not have permission (album not created by this app).',
      );
    sendJson(res, 200, this.albumRes(al));
  }

  private async createAlbum(req: EmuRequest, res: ServerResponse, a: AuthContext): Promise<void> {
    if (!this.allowed(res, a, PHOTOS_SCOPES.appendonly, PHOTOS_SCOPES.editAppCreated)) return;
    const body = await req.json<{ album?: { title?: string } }>();
    const title = body.album?.title ?? '';
    if (!title || title.length > 500)
      return this.err(res, 400, 'INVALID_ARGUMENT', 'Album title must be 1 to 500 characters.');
    const al: Album = { id: `A${randomId(60)}`, owner: a.user, title, items: [], appCreated: true };
    this.albums.set(al.id, al);
    sendJson(res, 200, this.albumRes(al));
  }

  private async albumAction(req: EmuRequest, res: ServerResponse, a: AuthContext): Promise<void> {
    const [id, action] = (req.params.idaction ?? '').split(':');
    if (action !== 'batchAddMediaItems') return this.sendNoRoute(req, res);
    if (!this.allowed(res, a, PHOTOS_SCOPES.appendonly, PHOTOS_SCOPES.editAppCreated)) return;
    const body = await req.json<{ mediaItemIds?: string[] }>();
    const al = this.albums.get(id ?? '');
    if (!al || al.owner !== a.user) return this.err(res, 404, 'NOT_FOUND', 'Requested entity was not found.');
    if (!al.appCreated)
      return this.err(res, 403, 'PERMISSION_DENIED', 'Only albums created by this app can be changed.');
    const ids = body.mediaItemIds ?? [];
    if (ids.length === 0 || ids.length > 50)
      return this.err(res, 400, 'INVALID_ARGUMENT', 'Between 1 and 50 media item ids are required.');
    for (const mid of ids) {
      const i = this.mediaItems.get(mid);
      if (!i || i.owner !== a.user || !i.appCreated)
        return this.err(res, 400, 'INVALID_ARGUMENT', 'Request contains an invalid media item id.');
    }
    for (const mid of ids) if (!al.items.includes(mid)) al.items.push(mid);
    sendJson(res, 200, {});
  }

  private bytes(req: EmuRequest, res: ServerResponse): void {
    const spec = req.params.spec ?? '';
    const eq = spec.indexOf('=');
    const id = eq >= 0 ? spec.slice(0, eq) : spec;
    const opts = eq >= 0 ? spec.slice(eq + 1) : '';
    const i = this.mediaItems.get(id);
    if (!i) return this.err(res, 404, 'NOT_FOUND', 'Not found');
    const wantsOriginal = i.video ? opts.split('-').includes('dv') : opts.split('-').includes('d');
    // Without =d / =dv the service serves a resized rendition; the emulator serves a placeholder.
    const data = wantsOriginal ? i.content : Buffer.from(`rendition of ${i.filename}`);
    sendBytes(req, res, data, {}, i.mimeType);
  }

  // ---------- test setup ----------

  /** Adds an item the user has in their library but this app did not create (invisible since March 2025). */
  seedForeign(user: string, filename: string, content: Buffer): PhotoItem {
    const item: PhotoItem = {
      id: `A${randomId(60)}`,
      owner: user,
      filename,
      description: '',
      mimeType: 'image/jpeg',
      video: false,
      content,
      created: Date.now(),
      appCreated: false,
    };
    this.mediaItems.set(item.id, item);
    return item;
  }

  seedForeignAlbum(user: string, title: string): Album {
    const al: Album = { id: `A${randomId(60)}`, owner: user, title, items: [], appCreated: false };
    this.albums.set(al.id, al);
    return al;
  }
}
