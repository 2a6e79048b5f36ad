import { Readable } from 'node:stream';
import { canceled, ProviderError } from '../../api/errors.ts';
import type { ProviderContext } from '../../api/registry.ts';
import type {
  About,
  ChunkWriter,
  Entry,
  Features,
  HashType,
  ListOptions,
  Page,
  Provider,
  ReadOptions,
  SrcInfo,
  TrashEntry,
  TrashPage,
  WriteOptions,
} from '../../api/types.ts';
import { NameEncoder } from '../../encoding.ts';
import { PathIdCache } from '../../id-cache.ts';
import { baseName, checkName, cleanPath, isWithin, joinPath, parentPath, pathSegments } from '../../path.ts';
import {
  bodyStream,
  genericHttpError,
  KeyedMutex,
  retryAfterOf,
  urlOf,
  type ApiClient,
  type ErrorInfo,
} from '../oauth-common/http.ts';
import { SequentialChunkWriter, type SequentialTarget } from '../oauth-common/sequential-writer.ts';
import { numberSetting, setupOAuth } from '../oauth-common/setup.ts';
import { ByteTaker } from '../oauth-common/take.ts';

/**
 * Google Drive (API v3): My Drive, a shared drive (`drive_id`), or "Shared with me" (read-only
 * kind google_drive_shared). Paths map to ids through a path-to-ID cache; uploads go in one
 * multipart request when they fit in a chunk and through resumable sessions (chunks of a multiple
 * of 256 KiB) otherwise; Google Docs, Sheets, Slides and Drawings are listed with an Office
 * extension and exported on download, or left out when `google_docs` is "skip".
 * References: https://developers.google.com/drive/api/reference/rest/v3/files,
 * https://developers.google.com/drive/api/guides/manage-uploads,
 * https://developers.google.com/drive/api/guides/ref-export-formats,
 * https://developers.google.com/drive/api/guides/handle-errors,
 * https://developers.google.com/drive/api/guides/limits (750 GB per day).
 */

const FOLDER = 'application/vnd.google-apps.folder';
const GOOGLE_APPS = 'application/vnd.google-apps.';
const MiB = 1024 * 1024;
const GRANULARITY = 256 * 1024;
const SHARED_ROOT = '<sharedWithMe>';
const FILE_FIELDS =
  'id,name,mimeType,parents,size,md5Checksum,sha1Checksum,sha256Checksum,modifiedTime,createdTime,trashed,driveId,capabilities';

/** Google Workspace types exported on download: the Office (or PDF) format and its extension. */
export const DOCS_EXPORTS: Record<string, { mimeType: string; ext: string }> = {
  'application/vnd.google-apps.document': {
    mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    ext: '.docx',
  },
  'application/vnd.google-apps.spreadsheet': {
    mimeType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    ext: '.xlsx',
  },
  'application/vnd.google-apps.presentation': {
    mimeType: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
    ext: '.pptx',
  },
  'application/vnd.google-apps.drawing': { mimeType: 'application/pdf', ext: '.pdf' },
};

export type GoogleDocsMode = 'export' | 'skip';

interface DriveFile {
  id: string;
  name: string;
  mimeType: string;
  parents?: string[];
  size?: string;
  md5Checksum?: string;
  sha1Checksum?: string;
  sha256Checksum?: string;
  modifiedTime?: string;
  trashed?: boolean;
  /** Trashed itself, not only as part of a trashed folder. */
  explicitlyTrashed?: boolean;
  /** When it was trashed (Drive reports it for items of shared drives). */
  trashedTime?: string;
  driveId?: string;
}

interface DriveErrorBody {
  error?: { code?: number; message?: string; errors?: Array<{ reason?: string; message?: string; domain?: string }> };
}

/** Drive's error bodies, from the "Resolve errors" guide. */
export function driveError(e: ErrorInfo): ProviderError {
  const err = (e.json as DriveErrorBody | undefined)?.error;
  const first = err?.errors?.[0];
  const reason = first?.reason ?? '';
  const message = `Google Drive: ${err?.message ?? (e.text.slice(0, 200) || `HTTP ${e.status}`)}`;
  const retryAfterMs = retryAfterOf(e.headers);
  const withRetry = {
    serviceCode: reason || String(e.status),
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  };
  const isUpload = e.request.url.includes('/upload/');
  if (
    e.status === 403 &&
    (reason === 'uploadLimitExceeded' ||
      (reason === 'userRateLimitExceeded' && first?.message === 'User rate limit exceeded.' && isUpload))
  ) {
    return new ProviderError(
      'quota',
      'Google Drive daily upload limit reached: an account may upload 750 GB per day (copies count too). Uploads can continue once the limit resets, within 24 hours.',
      { serviceCode: 'uploadLimitExceeded', retry: 'fatal' },
    );
  }
  if (reason === 'userRateLimitExceeded' || reason === 'rateLimitExceeded' || e.status === 429) {
    return new ProviderError('rate_limited', message, withRetry);
  }
  if (reason === 'storageQuotaExceeded' || reason === 'quotaExceeded' || reason === 'teamDriveFileLimitExceeded') {
    return new ProviderError('quota', message, { serviceCode: reason });
  }
  if (reason === 'fileNotDownloadable' || reason === 'fileNotExportable' || reason === 'cannotCopyFile') {
    return new ProviderError('not_supported', message, { serviceCode: reason });
  }
  if (reason === 'exportSizeLimitExceeded') {
    return new ProviderError(
      'not_supported',
      'Google Drive: this document is larger than the 10 MB Google allows to export',
      { serviceCode: reason },
    );
  }
  if (
    reason === 'insufficientFilePermissions' ||
    reason === 'forbidden' ||
    reason === 'appNotAuthorizedToFile' ||
    reason === 'cannotDeleteRoot'
  ) {
    return new ProviderError('permission', message, { serviceCode: reason });
  }
  if (e.status === 401) return new ProviderError('auth_expired', message, { serviceCode: reason || '401' });
  return genericHttpError(e, message, reason || undefined);
}

function escapeQuery(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/'/g, "\\'");
}

export interface GoogleDriveOptions {
  kind: 'google_drive' | 'google_drive_shared';
  credentials: Record<string, unknown>;
  ctx: ProviderContext;
}

export class GoogleDriveProvider implements Provider {
  readonly kind: string;
  readonly accountKey: string;
  readonly features: Features;
  readonly hashes: ReadonlySet<HashType> = new Set<HashType>(['md5', 'sha1', 'sha256']);
  /** What happens to Google Docs in listings and transfers. */
  googleDocs: GoogleDocsMode;
  /**
   * Ids of the Google Workspace items listings left out (every doc in skip mode, and types with no
   * export format such as Forms in either mode), so a transfer can count them as skipped.
   */
  readonly leftOutDocs = new Set<string>();
  readonly chunkSize: number;
  private readonly api: ApiClient;
  private readonly base: string;
  private readonly uploadBase: string;
  private readonly driveId: string | undefined;
  private readonly sharedWithMe: boolean;
  private readonly names = new NameEncoder(['slash', 'dot']);
  private cache: PathIdCache | undefined;
  private rootPromise: Promise<string> | undefined;
  private readonly locks = new KeyedMutex();

  constructor(opts: GoogleDriveOptions) {
    const c = opts.credentials;
    const s = setupOAuth(c, opts.ctx, {
      kind: opts.kind,
      service: 'google',
      accountPrefix: 'google',
      defaultApiUrl: 'https://www.googleapis.com',
      mapError: driveError,
    });
    this.kind = opts.kind;
    this.api = s.api;
    this.accountKey = s.accountKey;
    this.base = s.apiUrl;
    this.uploadBase = s.uploadUrl;
    this.driveId = typeof c.drive_id === 'string' && c.drive_id ? c.drive_id : undefined;
    this.sharedWithMe = opts.kind === 'google_drive_shared';
    this.googleDocs = c.google_docs === 'skip' ? 'skip' : 'export';
    // Chunks must be multiples of 256 KiB.
    this.chunkSize = Math.max(
      GRANULARITY,
      Math.floor(numberSetting(c, 'chunk_size', 8 * MiB) / GRANULARITY) * GRANULARITY,
    );
    const writable = !this.sharedWithMe;
    this.features = {
      copy: writable,
      move: writable,
      trash: writable,
      about: true,
      chunkWriter: writable,
      listRecursive: false,
      setModTime: writable,
      caseInsensitive: false,
      bucketBased: false,
      needsSize: false,
    };
    if (!writable) {
      // The read-only variant has no write capabilities at all (features match methods).
      for (const m of [
        'copy',
        'move',
        'trash',
        'openChunkWriter',
        'listTrash',
        'restoreTrash',
        'purgeTrash',
        'emptyTrash',
        'search',
      ] as const)
        Object.defineProperty(this, m, { value: undefined });
    }
  }

  // ---------- plumbing ----------

  private q(
    extra: Record<string, string | number | boolean | undefined> = {},
  ): Record<string, string | number | boolean | undefined> {
    return { supportsAllDrives: true, ...extra };
  }

  private async rootId(): Promise<string> {
    if (this.sharedWithMe) return SHARED_ROOT;
    if (this.driveId) return this.driveId;
    this.rootPromise ??= this.api
      .json<DriveFile>({ method: 'GET', url: urlOf(this.base, '/drive/v3/files/root', this.q({ fields: 'id' })) })
      .then((f) => f.id)
      .catch((err: unknown) => {
        this.rootPromise = undefined;
        throw err;
      });
    return this.rootPromise;
  }

  private async idCache(): Promise<PathIdCache> {
    this.cache ??= new PathIdCache(await this.rootId());
    return this.cache;
  }

  private readOnly(): ProviderError {
    return new ProviderError('permission', 'Google Drive "Shared with me" is read-only');
  }

  private isDoc(f: DriveFile): boolean {
    return f.mimeType.startsWith(GOOGLE_APPS) && f.mimeType !== FOLDER;
  }

  /** The name a Drive item has in Skyferry paths (docs get their export extension). */
  private displayName(f: DriveFile): string | undefined {
    let name = this.names.encode(f.name);
    if (this.isDoc(f)) {
      const exp = DOCS_EXPORTS[f.mimeType];
      if (!exp || this.googleDocs === 'skip') return undefined;
      name += exp.ext;
    }
    return name;
  }

  private toEntry(dir: string, f: DriveFile, name: string): Entry {
    const isDir = f.mimeType === FOLDER;
    const doc = this.isDoc(f) ? DOCS_EXPORTS[f.mimeType] : undefined;
    const e: Entry = {
      path: joinPath(dir, name),
      name,
      kind: isDir ? 'dir' : 'file',
      // Exported documents have no size until exported.
      size: isDir ? 0 : doc ? -1 : Number(f.size ?? 0),
      id: f.id,
      mimeType: doc ? doc.mimeType : f.mimeType,
    };
    if (f.modifiedTime) e.modTime = new Date(f.modifiedTime);
    if (!isDir && !doc) {
      const hashes: Entry['hashes'] = {};
      if (f.md5Checksum) hashes.md5 = f.md5Checksum;
      if (f.sha1Checksum) hashes.sha1 = f.sha1Checksum;
      if (f.sha256Checksum) hashes.sha256 = f.sha256Checksum;
      if (Object.keys(hashes).length) e.hashes = hashes;
    }
    return e;
  }

  private async listQuery(
    q: string,
    opts: { pageToken?: string; pageSize?: number; signal?: AbortSignal; fields?: string } = {},
  ): Promise<{ files: DriveFile[]; nextPageToken?: string }> {
    const query: Record<string, string | number | boolean | undefined> = this.q({
      q,
      fields: `nextPageToken,files(${opts.fields ?? FILE_FIELDS})`,
      pageSize: Math.min(Math.max(opts.pageSize ?? 1000, 1), 1000),
      pageToken: opts.pageToken,
      includeItemsFromAllDrives: true,
    });
    if (this.driveId) Object.assign(query, { corpora: 'drive', driveId: this.driveId });
    return this.api.json({
      method: 'GET',
      url: urlOf(this.base, '/drive/v3/files', query),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
  }

  private parentClause(parentId: string): string {
    return parentId === SHARED_ROOT ? 'sharedWithMe = true' : `'${escapeQuery(parentId)}' in parents`;
  }

  /** The child of a folder shown under `name` (docs match by their exported name). */
  private async findChild(parentId: string, name: string, signal?: AbortSignal): Promise<DriveFile | undefined> {
    const driveName = this.names.decode(name);
    const candidates = [driveName];
    for (const exp of Object.values(DOCS_EXPORTS))
      if (driveName.endsWith(exp.ext)) candidates.push(driveName.slice(0, -exp.ext.length));
    const nameClause = candidates.map((n) => `name = '${escapeQuery(n)}'`).join(' or ');
    let pageToken: string | undefined;
    const found: DriveFile[] = [];
    do {
      const page = await this.listQuery(`${this.parentClause(parentId)} and (${nameClause}) and trashed = false`, {
        ...(pageToken ? { pageToken } : {}),
        ...(signal ? { signal } : {}),
      });
      // Drive compares names without regard to case: keep the exact ones.
      for (const f of page.files) if (this.displayName(f) === name) found.push(f);
      pageToken = page.nextPageToken;
    } while (pageToken);
    // Folders first (a path through a folder), then the oldest-listed file.
    return found.find((f) => f.mimeType === FOLDER) ?? found[0];
  }

  private async getById(id: string, signal?: AbortSignal): Promise<DriveFile> {
    return this.api.json<DriveFile>({
      method: 'GET',
      url: urlOf(this.base, `/drive/v3/files/${encodeURIComponent(id)}`, this.q({ fields: FILE_FIELDS })),
      ...(signal ? { signal } : {}),
    });
  }

  /** The Drive item at a path (root included). */
  private async lookup(path: string, signal?: AbortSignal): Promise<DriveFile> {
    const p = cleanPath(path);
    const cache = await this.idCache();
    if (p === '/') {
      const id = await this.rootId();
      return id === SHARED_ROOT
        ? { id, name: '', mimeType: FOLDER }
        : { ...(await this.getById(id, signal)), mimeType: FOLDER };
    }
    const parentId = await this.dirId(parentPath(p), signal);
    const cached = cache.get(p);
    if (cached) {
      try {
        const f = await this.getById(cached, signal);
        if (!f.trashed && this.displayName(f) === baseName(p)) return f;
      } catch (err) {
        if (!ProviderError.is(err, 'not_found')) throw err;
      }
      cache.invalidateTree(p);
    }
    const f = await this.findChild(parentId, baseName(p), signal);
    if (!f) throw new ProviderError('not_found', `not found: ${p}`);
    if (f.mimeType === FOLDER) cache.set(p, f.id);
    return f;
  }

  /** The id of the folder at a path: not_found, or not_dir when a file is in the way. */
  private async dirId(path: string, signal?: AbortSignal): Promise<string> {
    const cache = await this.idCache();
    const p = cleanPath(path);
    const cached = cache.get(p);
    if (cached) return cached;
    let id = await this.rootId();
    let cur = '/';
    for (const seg of pathSegments(p)) {
      cur = joinPath(cur, seg);
      const known = cache.get(cur);
      if (known) {
        id = known;
        continue;
      }
      const child = await this.findChild(id, seg, signal);
      if (!child) throw new ProviderError('not_found', `not found: ${cur}`);
      if (child.mimeType !== FOLDER) throw new ProviderError('not_dir', `not a folder: ${cur}`);
      cache.set(cur, child.id);
      id = child.id;
    }
    return id;
  }

  /** Creates missing folders down to `path`; answers its id. */
  private async ensureDir(path: string, signal?: AbortSignal): Promise<string> {
    const p = cleanPath(path);
    const cache = await this.idCache();
    const hit = cache.get(p);
    if (hit) return hit;
    let id = await this.rootId();
    let cur = '/';
    for (const seg of pathSegments(p)) {
      cur = joinPath(cur, seg);
      const here = cur;
      const parent = id;
      id = await this.locks.run(`dir:${here}`, async () => {
        const known = cache.get(here);
        if (known) return known;
        const child = await this.findChild(parent, seg, signal);
        if (child) {
          if (child.mimeType !== FOLDER) throw new ProviderError('exists', `a file is in the way: ${here}`);
          cache.set(here, child.id);
          return child.id;
        }
        const made = await this.api.json<DriveFile>({
          method: 'POST',
          url: urlOf(this.base, '/drive/v3/files', this.q({ fields: FILE_FIELDS })),
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: this.names.decode(seg), mimeType: FOLDER, parents: [parent] }),
          ...(signal ? { signal } : {}),
        });
        cache.set(here, made.id);
        return made.id;
      });
    }
    return id;
  }

  // ---------- reading ----------

  async list(dir: string, opts: ListOptions = {}): Promise<Page> {
    const p = cleanPath(dir);
    let id: string;
    try {
      id = await this.dirId(p, opts.signal);
    } catch (err) {
      if (ProviderError.is(err, 'not_found') && p !== '/') {
        // A file at that path is "not a folder", not "missing".
        const f = await this.lookup(p, opts.signal).catch(() => undefined);
        if (f && f.mimeType !== FOLDER) throw new ProviderError('not_dir', `not a folder: ${p}`);
      }
      throw err;
    }
    const page = await this.listQuery(`${this.parentClause(id)} and trashed = false`, {
      ...(opts.pageToken ? { pageToken: opts.pageToken } : {}),
      ...(opts.pageSize ? { pageSize: opts.pageSize } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    const cache = await this.idCache();
    const entries: Entry[] = [];
    for (const f of page.files) {
      if (f.mimeType === 'application/vnd.google-apps.shortcut') continue;
      const name = this.displayName(f);
      if (name === undefined) {
        this.leftOutDocs.add(f.id);
        continue;
      }
      const e = this.toEntry(p, f, name);
      if (e.kind === 'dir') cache.set(e.path, f.id);
      entries.push(e);
    }
    return { entries, ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}) };
  }

  async stat(path: string, opts: { signal?: AbortSignal } = {}): Promise<Entry> {
    const p = cleanPath(path);
    const f = await this.lookup(p, opts.signal);
    if (p === '/') return { path: '/', name: '', kind: 'dir', size: 0, id: f.id };
    return this.toEntry(parentPath(p), f, baseName(p));
  }

  async hash(path: string, type: HashType, opts: { signal?: AbortSignal } = {}): Promise<string | undefined> {
    const e = await this.stat(path, opts);
    return e.hashes?.[type];
  }

  async openRead(path: string, opts: ReadOptions = {}): Promise<Readable> {
    const f = await this.lookup(path, opts.signal);
    if (f.mimeType === FOLDER) throw new ProviderError('is_dir', `is a folder: ${cleanPath(path)}`);
    const signal = opts.signal;
    const doc = this.isDoc(f) ? DOCS_EXPORTS[f.mimeType] : undefined;
    if (this.isDoc(f)) {
      if (!doc) throw new ProviderError('not_supported', `Google Drive cannot export ${f.mimeType}`);
      const res = await this.api.request({
        method: 'GET',
        url: urlOf(this.base, `/drive/v3/files/${encodeURIComponent(f.id)}/export`, { mimeType: doc.mimeType }),
        ...(signal ? { signal } : {}),
      });
      const stream = bodyStream(res, signal);
      return opts.range ? sliceStream(stream, opts.range.start, opts.range.end) : stream;
    }
    const size = Number(f.size ?? 0);
    const headers: Record<string, string> = {};
    if (opts.range) {
      if (opts.range.start >= size) return Readable.from([]);
      headers.range = `bytes=${opts.range.start}-${opts.range.end !== undefined ? Math.min(opts.range.end, size - 1) : ''}`;
    }
    const res = await this.api.request({
      method: 'GET',
      url: urlOf(this.base, `/drive/v3/files/${encodeURIComponent(f.id)}`, this.q({ alt: 'media' })),
      headers,
      ...(signal ? { signal } : {}),
    });
    return bodyStream(res, signal);
  }

  async about(): Promise<About> {
    const a = await this.api.json<{ storageQuota?: { limit?: string; usage?: string; usageInDriveTrash?: string } }>({
      method: 'GET',
      url: urlOf(this.base, '/drive/v3/about', { fields: 'storageQuota,user' }),
    });
    const q = a.storageQuota ?? {};
    const out: About = {};
    if (q.usage !== undefined) out.used = Number(q.usage);
    if (q.limit !== undefined) {
      out.total = Number(q.limit);
      if (out.used !== undefined) out.free = Math.max(0, out.total - out.used);
    }
    if (q.usageInDriveTrash !== undefined) out.trashed = Number(q.usageInDriveTrash);
    return out;
  }

  // ---------- writing ----------

  private metadata(name: string, src: SrcInfo, parentId?: string): Record<string, unknown> {
    const meta: Record<string, unknown> = { name: this.names.decode(name) };
    if (parentId) meta.parents = [parentId];
    if (src.modTime) meta.modifiedTime = src.modTime.toISOString();
    if (src.mimeType) meta.mimeType = src.mimeType;
    return meta;
  }

  /** An existing file to replace at `path` (a folder there is an error). */
  private async existingFile(
    parentId: string,
    name: string,
    path: string,
    signal?: AbortSignal,
  ): Promise<DriveFile | undefined> {
    const f = await this.findChild(parentId, name, signal);
    if (f?.mimeType === FOLDER) throw new ProviderError('is_dir', `a folder is in the way: ${path}`);
    if (f && this.isDoc(f)) throw new ProviderError('exists', `a Google document has this name: ${path}`);
    return f;
  }

  async put(path: string, body: Readable, src: SrcInfo, opts: WriteOptions = {}): Promise<Entry> {
    if (this.sharedWithMe) throw this.readOnly();
    const p = cleanPath(path);
    if (p === '/') throw new ProviderError('is_dir', 'cannot write the root');
    const signal = opts.signal;
    const reader = new ByteTaker(body);
    try {
      const first = (await reader.read(this.chunkSize, signal)) ?? Buffer.alloc(0);
      const second = first.length === this.chunkSize ? await reader.read(this.chunkSize, signal) : null;
      return await this.locks.run(`file:${p}`, async () => {
        const parentId = await this.ensureDir(parentPath(p), signal);
        const existing = await this.existingFile(parentId, baseName(p), p, signal);
        if (!second) {
          if (src.size >= 0 && first.length !== src.size) throw shortBody(first.length, src.size);
          const f = await this.simpleUpload(p, first, src, parentId, existing, signal);
          opts.onProgress?.(first.length);
          return this.toEntry(parentPath(p), f, baseName(p));
        }
        const session = new DriveSession(this, p, src, parentId, existing?.id, signal);
        let offset = 0;
        let cur: Buffer = first;
        let next: Buffer | null = second;
        for (;;) {
          const final = next === null;
          const upTo = offset + cur.length;
          // A body longer or shorter than announced must not become a file.
          if (src.size >= 0 && (upTo > src.size || (final && upTo !== src.size))) throw shortBody(upTo, src.size);
          await session.send(offset, cur, final, signal);
          offset += cur.length;
          opts.onProgress?.(offset);
          if (final) break;
          cur = next!;
          next = await reader.read(this.chunkSize, signal);
        }
        const f = await session.result();
        return this.toEntry(parentPath(p), f, baseName(p));
      });
    } catch (err) {
      await reader.cancel().catch(() => undefined);
      body.destroy();
      if (signal?.aborted) throw canceled();
      throw err;
    }
  }

  private async simpleUpload(
    path: string,
    data: Buffer,
    src: SrcInfo,
    parentId: string,
    existing: DriveFile | undefined,
    signal?: AbortSignal,
  ): Promise<DriveFile> {
    const boundary = `skyferry${Math.random().toString(36).slice(2)}`;
    const meta = this.metadata(baseName(path), src, existing ? undefined : parentId);
    const body = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n${JSON.stringify(meta)}\r\n--${boundary}\r\nContent-Type: ${src.mimeType ?? 'application/octet-stream'}\r\n\r\n`,
      ),
      data,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    return this.api.json<DriveFile>({
      method: existing ? 'PATCH' : 'POST',
      url: urlOf(
        this.uploadBase,
        `/upload/drive/v3/files${existing ? `/${encodeURIComponent(existing.id)}` : ''}`,
        this.q({ uploadType: 'multipart', fields: FILE_FIELDS }),
      ),
      headers: { 'content-type': `multipart/related; boundary=${boundary}` },
      body,
      ...(signal ? { signal } : {}),
    });
  }

  /** Starts a resumable session (used by DriveSession). */
  async startSession(
    path: string,
    src: SrcInfo,
    parentId: string,
    existingId: string | undefined,
    signal?: AbortSignal,
  ): Promise<string> {
    const headers: Record<string, string> = { 'content-type': 'application/json; charset=UTF-8' };
    if (src.size >= 0) headers['x-upload-content-length'] = String(src.size);
    if (src.mimeType) headers['x-upload-content-type'] = src.mimeType;
    const res = await this.api.request({
      method: existingId ? 'PATCH' : 'POST',
      url: urlOf(
        this.uploadBase,
        `/upload/drive/v3/files${existingId ? `/${encodeURIComponent(existingId)}` : ''}`,
        this.q({ uploadType: 'resumable', fields: FILE_FIELDS }),
      ),
      headers,
      body: JSON.stringify(this.metadata(baseName(path), src, existingId ? undefined : parentId)),
      ...(signal ? { signal } : {}),
    });
    await res.body?.cancel().catch(() => undefined);
    const location = res.headers.get('location');
    if (!location) throw new ProviderError('server', 'Google Drive did not answer a resumable session URI');
    return location;
  }

  /** The API client (used by DriveSession). */
  get client(): ApiClient {
    return this.api;
  }

  async openChunkWriter(path: string, src: SrcInfo, opts: { signal?: AbortSignal } = {}): Promise<ChunkWriter> {
    if (this.sharedWithMe) throw this.readOnly();
    const p = cleanPath(path);
    if (src.size < 0) throw new ProviderError('not_supported', 'a chunked upload needs the size up front');
    const parentId = await this.ensureDir(parentPath(p), opts.signal);
    const existing = await this.existingFile(parentId, baseName(p), p, opts.signal);
    const session = new DriveSession(this, p, src, parentId, existing?.id, opts.signal);
    const target: SequentialTarget = {
      send: (offset, data, final, signal) => session.send(offset, data, final, signal ?? opts.signal),
      finish: async () => {
        const f = await session.result();
        return this.toEntry(parentPath(p), f, baseName(p));
      },
      abort: async () => undefined,
    };
    return new SequentialChunkWriter(target, this.chunkSize, src.size);
  }

  async mkdir(path: string): Promise<void> {
    if (this.sharedWithMe) throw this.readOnly();
    await this.ensureDir(path);
  }

  async remove(path: string): Promise<void> {
    if (this.sharedWithMe) throw this.readOnly();
    const p = cleanPath(path);
    const f = await this.lookup(p);
    if (f.mimeType === FOLDER) throw new ProviderError('is_dir', `is a folder: ${p}`);
    await this.api.request({
      method: 'DELETE',
      url: urlOf(this.base, `/drive/v3/files/${encodeURIComponent(f.id)}`, this.q()),
    });
  }

  async rmdir(path: string): Promise<void> {
    if (this.sharedWithMe) throw this.readOnly();
    const p = cleanPath(path);
    if (p === '/') throw new ProviderError('permission', 'cannot remove the root folder');
    const f = await this.lookup(p);
    if (f.mimeType !== FOLDER) throw new ProviderError('not_dir', `not a folder: ${p}`);
    await this.api.request({
      method: 'DELETE',
      url: urlOf(this.base, `/drive/v3/files/${encodeURIComponent(f.id)}`, this.q()),
    });
    (await this.idCache()).invalidateTree(p);
  }

  async trash(path: string): Promise<void> {
    const p = cleanPath(path);
    if (p === '/') throw new ProviderError('permission', 'cannot trash the root folder');
    const f = await this.lookup(p);
    await this.patch(f.id, { trashed: true });
    (await this.idCache()).invalidateTree(p);
  }

  /**
   * The path in this cloud of the folder with id `id` (through its parents, `memo` keeping what one
   * call learnt); undefined when it is not below this cloud's root.
   */
  private async folderPathOf(id: string, memo: Map<string, string | undefined>, signal?: AbortSignal) {
    const root = await this.rootId();
    if (id === root) return '/';
    if (memo.has(id)) return memo.get(id);
    let out: string | undefined;
    try {
      const f = await this.getById(id, signal);
      const parent = f.parents?.[0];
      const name = this.displayName(f);
      if (parent && name !== undefined && !f.trashed) {
        const up = await this.folderPathOf(parent, memo, signal);
        if (up !== undefined) out = joinPath(up, name);
      }
    } catch (err) {
      if (!ProviderError.is(err, 'not_found') && !ProviderError.is(err, 'permission')) throw err;
    }
    memo.set(id, out);
    return out;
  }

  /**
   * Drive's own search ("name contains", its rules of matching: word prefixes, case ignored) over
   * the whole drive; the finds outside folder `dir` are left out.
   */
  async search(dir: string, query: string, opts: ListOptions = {}): Promise<Page> {
    const base = cleanPath(dir);
    await this.dirId(base, opts.signal);
    const page = await this.listQuery(`name contains '${escapeQuery(query)}' and trashed = false`, {
      ...(opts.pageToken ? { pageToken: opts.pageToken } : {}),
      ...(opts.pageSize ? { pageSize: opts.pageSize } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    const memo = new Map<string, string | undefined>();
    const entries: Entry[] = [];
    for (const f of page.files) {
      const name = this.displayName(f);
      const parent = f.parents?.[0];
      if (f.mimeType === 'application/vnd.google-apps.shortcut' || name === undefined || !parent) continue;
      const folder = await this.folderPathOf(parent, memo, opts.signal);
      if (folder === undefined) continue;
      const e = this.toEntry(folder, f, name);
      if (e.path !== base && isWithin(base, e.path)) entries.push(e);
    }
    return { entries, ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}) };
  }

  /** The items trashed themselves (not those inside a trashed folder), with where they were. */
  async listTrash(opts: { pageToken?: string; signal?: AbortSignal } = {}): Promise<TrashPage> {
    const page = await this.listQuery('trashed = true', {
      ...(opts.pageToken ? { pageToken: opts.pageToken } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
      fields: `${FILE_FIELDS},explicitlyTrashed,trashedTime`,
    });
    const memo = new Map<string, string | undefined>();
    const entries: TrashEntry[] = [];
    for (const f of page.files) {
      if (f.explicitlyTrashed === false) continue;
      const name = this.displayName(f) ?? this.names.encode(f.name);
      const parent = f.parents?.[0];
      const folder = parent ? await this.folderPathOf(parent, memo, opts.signal) : undefined;
      const isDir = f.mimeType === FOLDER;
      const entry: TrashEntry = { id: f.id, name, kind: isDir ? 'dir' : 'file', size: isDir ? 0 : Number(f.size ?? 0) };
      if (folder !== undefined) entry.originalPath = joinPath(folder, name);
      if (f.trashedTime) entry.deletedAt = new Date(f.trashedTime);
      entries.push(entry);
    }
    return { entries, ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}) };
  }

  /** A trashed item of this drive by its id; not_found for anything else (a live item is no trash). */
  private async trashedItem(id: string): Promise<DriveFile> {
    const f = await this.getById(id).catch((err: unknown) => {
      throw ProviderError.is(err, 'not_found') ? new ProviderError('not_found', `not in the trash: ${id}`) : err;
    });
    if (!f.trashed || (this.driveId !== undefined && f.driveId !== this.driveId))
      throw new ProviderError('not_found', `not in the trash: ${id}`);
    return f;
  }

  async restoreTrash(id: string): Promise<Entry> {
    await this.trashedItem(id);
    const f = await this.patch(id, { trashed: false });
    const name = this.displayName(f) ?? this.names.encode(f.name);
    const folder = f.parents?.[0] ? await this.folderPathOf(f.parents[0], new Map()) : undefined;
    if (folder === undefined) throw new ProviderError('not_found', `restored outside this cloud: ${id}`);
    const entry = this.toEntry(folder, f, name);
    (await this.idCache()).invalidateTree(entry.path);
    return entry;
  }

  async purgeTrash(id: string): Promise<void> {
    await this.trashedItem(id);
    await this.api.request({
      method: 'DELETE',
      url: urlOf(this.base, `/drive/v3/files/${encodeURIComponent(id)}`, this.q()),
    });
  }

  async emptyTrash(): Promise<void> {
    await this.api.request({
      method: 'DELETE',
      url: urlOf(this.base, '/drive/v3/files/trash', this.driveId ? { driveId: this.driveId } : {}),
    });
  }

  private patch(
    id: string,
    body: Record<string, unknown>,
    query: Record<string, string | undefined> = {},
    signal?: AbortSignal,
  ): Promise<DriveFile> {
    return this.api.json<DriveFile>({
      method: 'PATCH',
      url: urlOf(this.base, `/drive/v3/files/${encodeURIComponent(id)}`, this.q({ fields: FILE_FIELDS, ...query })),
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      ...(signal ? { signal } : {}),
    });
  }

  async rename(path: string, newName: string): Promise<Entry> {
    if (this.sharedWithMe) throw this.readOnly();
    checkName(newName);
    const p = cleanPath(path);
    if (p === '/') throw new ProviderError('permission', 'cannot rename the root folder');
    const f = await this.lookup(p);
    const parent = parentPath(p);
    const dst = joinPath(parent, newName);
    if (newName !== baseName(p)) {
      const parentId = await this.dirId(parent);
      if (await this.findChild(parentId, newName)) throw new ProviderError('exists', `already exists: ${dst}`);
    }
    if (this.isDoc(f)) throw new ProviderError('not_supported', 'rename Google documents in Google Drive itself');
    const updated = await this.patch(f.id, { name: this.names.decode(newName) });
    if (f.mimeType === FOLDER) (await this.idCache()).invalidateTree(p);
    return this.toEntry(parent, updated, newName);
  }

  async move(src: Entry, dst: string, opts: { signal?: AbortSignal } = {}): Promise<Entry> {
    const from = cleanPath(src.path);
    const to = cleanPath(dst);
    if (from === '/' || to === '/') throw new ProviderError('permission', 'cannot move the root folder');
    const f = await this.lookup(from, opts.signal);
    if (this.isDoc(f)) throw new ProviderError('not_supported', 'move Google documents in Google Drive itself');
    const newParent = await this.ensureDir(parentPath(to), opts.signal);
    if (await this.findChild(newParent, baseName(to), opts.signal))
      throw new ProviderError('exists', `already exists: ${to}`);
    const oldParents = (f.parents ?? []).join(',');
    const updated = await this.patch(
      f.id,
      { name: this.names.decode(baseName(to)) },
      newParent !== oldParents ? { addParents: newParent, removeParents: oldParents } : {},
      opts.signal,
    );
    const cache = await this.idCache();
    if (f.mimeType === FOLDER) {
      cache.invalidateTree(from);
      cache.set(to, f.id);
    }
    return this.toEntry(parentPath(to), updated, baseName(to));
  }

  async copy(src: Entry, dst: string, opts: { signal?: AbortSignal } = {}): Promise<Entry> {
    const to = cleanPath(dst);
    const f = await this.lookup(cleanPath(src.path), opts.signal);
    if (f.mimeType === FOLDER) throw new ProviderError('not_supported', 'Google Drive copies files, not folders');
    const parentId = await this.ensureDir(parentPath(to), opts.signal);
    return this.locks.run(`file:${to}`, async () => {
      const existing = await this.existingFile(parentId, baseName(to), to, opts.signal);
      const body: Record<string, unknown> = {
        name: this.names.decode(this.isDoc(f) ? stripDocExt(baseName(to), f.mimeType) : baseName(to)),
        parents: [parentId],
      };
      if (f.modifiedTime) body.modifiedTime = f.modifiedTime;
      const made = await this.api.json<DriveFile>({
        method: 'POST',
        url: urlOf(this.base, `/drive/v3/files/${encodeURIComponent(f.id)}/copy`, this.q({ fields: FILE_FIELDS })),
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
      if (existing)
        await this.api.request({
          method: 'DELETE',
          url: urlOf(this.base, `/drive/v3/files/${encodeURIComponent(existing.id)}`, this.q()),
        });
      return this.toEntry(parentPath(to), made, baseName(to));
    });
  }

  async close(): Promise<void> {
    // fetch keeps no per-provider connections to release.
  }
}

function shortBody(got: number, announced: number): ProviderError {
  return new ProviderError('corrupted', `the source gave ${got} bytes where ${announced} were announced`);
}

function stripDocExt(name: string, mimeType: string): string {
  const ext = DOCS_EXPORTS[mimeType]?.ext;
  return ext && name.endsWith(ext) ? name.slice(0, -ext.length) : name;
}

/** Applies a byte range to a stream that cannot be fetched ranged (exports). */
function sliceStream(stream: Readable, start: number, end?: number): Readable {
  let pos = 0;
  async function* slice(): AsyncGenerator<Buffer> {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const from = Math.max(0, start - pos);
      const to = end === undefined ? chunk.length : Math.min(chunk.length, end + 1 - pos);
      pos += chunk.length;
      if (to > from) yield chunk.subarray(from, to);
      if (end !== undefined && pos > end) {
        stream.destroy();
        return;
      }
    }
  }
  return Readable.from(slice());
}

/**
 * One resumable upload (https://developers.google.com/drive/api/guides/manage-uploads#resumable):
 * chunks PUT with Content-Range; 308 answers what was received; after a failed attempt the
 * session is asked where it stands (`bytes *\/total`) and the rest of the chunk is sent.
 */
class DriveSession {
  private uri: Promise<string> | undefined;
  private final: DriveFile | undefined;
  private readonly drive: GoogleDriveProvider;
  private readonly path: string;
  private readonly src: SrcInfo;
  private readonly parentId: string;
  private readonly existingId: string | undefined;
  private readonly signal: AbortSignal | undefined;

  constructor(
    drive: GoogleDriveProvider,
    path: string,
    src: SrcInfo,
    parentId: string,
    existingId: string | undefined,
    signal?: AbortSignal,
  ) {
    this.drive = drive;
    this.path = path;
    this.src = src;
    this.parentId = parentId;
    this.existingId = existingId;
    this.signal = signal;
  }

  private sessionUri(): Promise<string> {
    this.uri ??= this.drive.startSession(this.path, this.src, this.parentId, this.existingId, this.signal);
    return this.uri;
  }

  async send(offset: number, data: Buffer, final: boolean, signal?: AbortSignal): Promise<void> {
    const uri = await this.sessionUri();
    const api = this.drive.client;
    const total = final ? String(offset + data.length) : this.src.size >= 0 ? String(this.src.size) : '*';
    await api.pacer.call(
      async (attempt) => {
        let from = 0;
        if (attempt > 0) {
          // Where does the session stand after the failed attempt?
          const status = await api.request({
            method: 'PUT',
            url: uri,
            auth: false,
            retry: false,
            headers: { 'content-range': `bytes */${total}` },
            accept: (s) => s === 308 || s === 200 || s === 201,
            ...(signal ? { signal } : {}),
          });
          if (status.status !== 308) {
            this.final = (await status.json()) as DriveFile;
            return;
          }
          await status.body?.cancel().catch(() => undefined);
          const received = receivedUpTo(status.headers.get('range'));
          if (received < offset) throw new ProviderError('server', 'Google Drive lost part of the upload');
          from = Math.min(received - offset, data.length);
        }
        const piece = data.subarray(from);
        const start = offset + from;
        const range = piece.length > 0 ? `bytes ${start}-${start + piece.length - 1}/${total}` : `bytes */${total}`;
        const res = await api.request({
          method: 'PUT',
          url: uri,
          auth: false,
          retry: false,
          headers: { 'content-range': range },
          body: piece,
          accept: (s) => s === 308 || s === 200 || s === 201,
          ...(signal ? { signal } : {}),
        });
        if (res.status === 308) {
          await res.body?.cancel().catch(() => undefined);
          const received = receivedUpTo(res.headers.get('range'));
          if (received !== offset + data.length)
            throw new ProviderError('server', `Google Drive received ${received} of ${offset + data.length} bytes`);
          if (final) throw new ProviderError('server', 'Google Drive did not complete the upload');
          return;
        }
        this.final = (await res.json()) as DriveFile;
      },
      signal ? { signal } : {},
    );
  }

  async result(): Promise<DriveFile> {
    if (!this.final) throw new ProviderError('server', 'Google Drive upload did not complete');
    return this.final;
  }
}

/** The end of a 308's `Range: bytes=0-N` header, as a byte count. */
function receivedUpTo(range: string | null): number {
  const m = range ? /bytes=0-(\d+)/.exec(range) : null;
  return m ? Number(m[1]) + 1 : 0;
}

export async function openGoogleDrive(
  kind: 'google_drive' | 'google_drive_shared',
  credentials: Record<string, unknown>,
  ctx: ProviderContext,
): Promise<GoogleDriveProvider> {
  return new GoogleDriveProvider({ kind, credentials, ctx });
}

/** Chooses whether Google Docs are exported or left out (a transfer option). */
export function setGoogleDocsMode(provider: Provider, mode: GoogleDocsMode): void {
  if (provider instanceof GoogleDriveProvider) provider.googleDocs = mode;
}

/** How many Google Workspace items the provider's listings have left out so far (0 for other kinds). */
export function googleDocsLeftOut(provider: Provider): number {
  return provider instanceof GoogleDriveProvider ? provider.leftOutDocs.size : 0;
}
