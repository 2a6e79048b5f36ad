import { createHash, type Hash } from 'node:crypto';
import { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
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
import { ENCODINGS, NameEncoder } from '../../encoding.ts';
import { PathIdCache } from '../../id-cache.ts';
import {
  baseName,
  checkName,
  cleanPath,
  isWithin,
  joinPath,
  parentPath,
  pathSegments,
  restoredName,
} from '../../path.ts';
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
import { ByteTaker } from '../oauth-common/take.ts';
import { spoolToTemp } from '../oauth-common/spool.ts';
import { SpoolingChunkWriter } from '../oauth-common/spooling-writer.ts';

/**
 * Box (Platform API 2.0). Items are addressed by id with a path-to-ID cache for folders. Files up
 * to `upload_cutoff` (50 MiB) go in one direct upload carrying their SHA-1; bigger ones through a
 * chunked upload session (parts of the size Box chooses, each with its SHA-1 digest, committed
 * with the whole file's SHA-1; parallel parts in the chunk writer). Deleting moves to Box's trash;
 * `remove` and `rmdir` also purge it from there; the trash is listed, restored from and purged
 * (ids "file:<id>" and "folder:<id>"). Search is Box's own (by name, below a folder). SHA-1 is
 * the hash Box reports.
 * References: https://developer.box.com/reference/, https://developer.box.com/guides/uploads/chunked/,
 * https://developer.box.com/guides/trash/, https://developer.box.com/guides/api-calls/permissions-and-errors/common-errors/.
 */

const MiB = 1024 * 1024;
const FIELDS = 'type,id,name,size,sha1,modified_at,content_modified_at,parent';

interface BoxItem {
  type: 'file' | 'folder' | 'web_link';
  id: string;
  name: string;
  size?: number;
  sha1?: string;
  modified_at?: string;
  content_modified_at?: string;
  parent?: { id: string } | null;
  path_collection?: { entries: Array<{ id: string; name: string }> };
  trashed_at?: string | null;
}

/** Box's pages of search results and of the trash (offset paging). */
interface BoxOffsetPage {
  total_count: number;
  entries: BoxItem[];
  offset: number;
  limit: number;
}

/** Most results Box's search answers a page. */
const SEARCH_PAGE = 200;
const TRASH_PAGE = 1000;

interface BoxErrorBody {
  type?: string;
  status?: number;
  code?: string;
  message?: string;
  context_info?: { conflicts?: BoxItem[] | BoxItem };
}

interface UploadSession {
  id: string;
  part_size: number;
  total_parts: number;
}

interface Part {
  part_id: string;
  offset: number;
  size: number;
  sha1?: string;
}

/** Box's error objects (type "error", status, code, message). */
export function boxError(e: ErrorInfo): ProviderError {
  const body = e.json as BoxErrorBody | undefined;
  const code = body?.code ?? '';
  const message = `Box: ${body?.message ?? (e.text.slice(0, 200) || `HTTP ${e.status}`)}${code ? ` (${code})` : ''}`;
  const retryAfterMs = retryAfterOf(e.headers);
  const opts = { serviceCode: code || String(e.status), ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  if (e.status === 429 || code === 'rate_limit_exceeded') return new ProviderError('rate_limited', message, opts);
  if (e.status === 401) return new ProviderError('auth_expired', message, opts);
  if (code === 'not_found' || code === 'trashed' || code === 'not_trashed')
    return new ProviderError('not_found', message, opts);
  if (code === 'item_name_in_use') return new ProviderError('exists', message, opts);
  if (code === 'item_name_invalid' || code === 'item_name_too_long')
    return new ProviderError('invalid_name', message, opts);
  if (code === 'storage_limit_exceeded' || code === 'insufficient_storage' || code === 'file_size_limit_exceeded')
    return new ProviderError('quota', message, opts);
  if (code === 'folder_not_empty') return new ProviderError('dir_not_empty', message, opts);
  if (code === 'sha1_mismatch' || code === 'upload_session_digest_mismatch')
    return new ProviderError('corrupted', message, opts);
  if (code.startsWith('access_denied') || code === 'forbidden') return new ProviderError('permission', message, opts);
  return genericHttpError(e, message, code || undefined);
}

/** The item a 409 item_name_in_use names. */
function conflictOf(err: unknown): BoxItem | undefined {
  const cause = err instanceof ProviderError ? (err.cause as { json?: BoxErrorBody } | undefined) : undefined;
  const c = cause?.json?.context_info?.conflicts;
  return Array.isArray(c) ? c[0] : c;
}

/** Box time: whole seconds with an offset. */
function boxTime(d: Date): string {
  return new Date(Math.floor(d.getTime() / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, '+00:00');
}

function sha1Base64(data: Buffer): string {
  return createHash('sha1').update(data).digest('base64');
}

export interface BoxOptions {
  credentials: Record<string, unknown>;
  ctx: ProviderContext;
}

export class BoxProvider implements Provider {
  readonly kind = 'box';
  readonly accountKey: string;
  readonly features: Features = {
    copy: true,
    move: true,
    trash: true,
    about: true,
    chunkWriter: true,
    listRecursive: false,
    setModTime: true,
    caseInsensitive: true,
    bucketBased: false,
    needsSize: true,
    nameLimit: { max: 255, unit: 'chars' },
  };
  readonly hashes: ReadonlySet<HashType> = new Set<HashType>(['sha1']);
  /** Files above this size use chunked upload sessions (Box takes direct uploads up to 50 MB). */
  readonly uploadCutoff: number;
  readonly concurrency: number;
  private readonly api: ApiClient;
  private readonly base: string;
  private readonly uploadBase: string;
  private readonly names = new NameEncoder(ENCODINGS.box);
  private readonly cache = new PathIdCache('0');
  private readonly locks = new KeyedMutex();

  constructor(opts: BoxOptions) {
    const c = opts.credentials;
    const s = setupOAuth(c, opts.ctx, {
      kind: 'box',
      service: 'box',
      accountPrefix: 'box',
      defaultApiUrl: 'https://api.box.com',
      defaultUploadUrl: 'https://upload.box.com',
      mapError: (e) => {
        const err = boxError(e);
        // Keep the body: a 409 names the conflicting item.
        return new ProviderError(err.code, err.message, {
          retry: err.retry,
          ...(err.retryAfterMs !== undefined ? { retryAfterMs: err.retryAfterMs } : {}),
          ...(err.serviceCode !== undefined ? { serviceCode: err.serviceCode } : {}),
          cause: { json: e.json },
        });
      },
    });
    this.api = s.api;
    this.accountKey = s.accountKey;
    this.base = s.apiUrl;
    this.uploadBase = s.uploadUrl;
    this.uploadCutoff = numberSetting(c, 'upload_cutoff', 50 * MiB);
    this.concurrency = Math.max(1, Math.floor(numberSetting(c, 'upload_concurrency', 4)));
  }

  private u(path: string, query: Record<string, string | number | boolean | undefined> = {}): string {
    return urlOf(this.base, `/2.0${path}`, query);
  }

  private up(path: string, query: Record<string, string | number | undefined> = {}): string {
    return urlOf(this.uploadBase, `/api/2.0${path}`, query);
  }

  private toEntry(dir: string, it: BoxItem, name?: string): Entry {
    const n = name ?? this.names.decode(it.name);
    const isDir = it.type === 'folder';
    const e: Entry = {
      path: joinPath(dir, n),
      name: n,
      kind: isDir ? 'dir' : 'file',
      size: isDir ? 0 : (it.size ?? 0),
      id: it.id,
    };
    const mod = it.content_modified_at ?? it.modified_at;
    if (mod) e.modTime = new Date(mod);
    if (!isDir && it.sha1) e.hashes = { sha1: it.sha1.toLowerCase() };
    return e;
  }

  private async page(
    folderId: string,
    marker: string | undefined,
    limit: number,
    signal?: AbortSignal,
  ): Promise<{ entries: BoxItem[]; next_marker?: string }> {
    return this.api.json({
      method: 'GET',
      url: this.u(`/folders/${encodeURIComponent(folderId)}/items`, { fields: FIELDS, usemarker: true, limit, marker }),
      ...(signal ? { signal } : {}),
    });
  }

  /** A folder's child by name (Box has no lookup by name: the folder is read page by page). */
  private async findChild(folderId: string, name: string, signal?: AbortSignal): Promise<BoxItem | undefined> {
    const wanted = this.names.encode(name).toLowerCase();
    let marker: string | undefined;
    do {
      const page = await this.page(folderId, marker, 1000, signal);
      const hit = page.entries.find((it) => it.name.toLowerCase() === wanted && it.type !== 'web_link');
      if (hit) return hit;
      marker = page.next_marker || undefined;
    } while (marker);
    return undefined;
  }

  private async dirId(path: string, signal?: AbortSignal): Promise<string> {
    const p = cleanPath(path);
    const hit = this.cache.get(p);
    if (hit) return hit;
    let id = '0';
    let cur = '/';
    for (const seg of pathSegments(p)) {
      cur = joinPath(cur, seg);
      const known = this.cache.get(cur);
      if (known) {
        id = known;
        continue;
      }
      const it = await this.findChild(id, seg, signal);
      if (!it) throw new ProviderError('not_found', `not found: ${cur}`);
      if (it.type !== 'folder') throw new ProviderError('not_dir', `not a folder: ${cur}`);
      this.cache.set(cur, it.id);
      id = it.id;
    }
    return id;
  }

  private async lookup(path: string, signal?: AbortSignal): Promise<BoxItem> {
    const p = cleanPath(path);
    if (p === '/') return { type: 'folder', id: '0', name: '' };
    const parentId = await this.dirId(parentPath(p), signal);
    const it = await this.findChild(parentId, baseName(p), signal);
    if (!it) throw new ProviderError('not_found', `not found: ${p}`);
    if (it.type === 'folder') this.cache.set(p, it.id);
    return it;
  }

  private async ensureDir(path: string, signal?: AbortSignal): Promise<string> {
    const p = cleanPath(path);
    const hit = this.cache.get(p);
    if (hit) return hit;
    let id = '0';
    let cur = '/';
    for (const seg of pathSegments(p)) {
      cur = joinPath(cur, seg);
      const here = cur;
      const parent = id;
      id = await this.locks.run(`dir:${here}`, async () => {
        const known = this.cache.get(here);
        if (known) return known;
        try {
          // Creating answers 409 with the existing item when the name is taken: no listing needed.
          const made = await this.api.json<BoxItem>({
            method: 'POST',
            url: this.u('/folders', { fields: FIELDS }),
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ name: this.names.encode(seg), parent: { id: parent } }),
            ...(signal ? { signal } : {}),
          });
          this.cache.set(here, made.id);
          return made.id;
        } catch (err) {
          const existing = ProviderError.is(err, 'exists') ? conflictOf(err) : undefined;
          if (!existing) throw err;
          if (existing.type !== 'folder') throw new ProviderError('exists', `a file is in the way: ${here}`);
          this.cache.set(here, existing.id);
          return existing.id;
        }
      });
    }
    return id;
  }

  // ---------- reading ----------

  async list(dir: string, opts: ListOptions = {}): Promise<Page> {
    const p = cleanPath(dir);
    const id = await this.dirId(p, opts.signal).catch(async (err: unknown) => {
      if (ProviderError.is(err, 'not_found') && p !== '/') {
        const it = await this.lookup(p, opts.signal).catch(() => undefined);
        if (it && it.type !== 'folder') throw new ProviderError('not_dir', `not a folder: ${p}`);
      }
      throw err;
    });
    const page = await this.page(id, opts.pageToken, Math.min(Math.max(opts.pageSize ?? 1000, 1), 1000), opts.signal);
    const entries: Entry[] = [];
    for (const it of page.entries) {
      if (it.type === 'web_link') continue;
      const e = this.toEntry(p, it);
      if (e.kind === 'dir') this.cache.set(e.path, it.id);
      entries.push(e);
    }
    return { entries, ...(page.next_marker ? { nextPageToken: page.next_marker } : {}) };
  }

  async stat(path: string, opts: { signal?: AbortSignal } = {}): Promise<Entry> {
    const p = cleanPath(path);
    if (p === '/') return { path: '/', name: '', kind: 'dir', size: 0, id: '0' };
    return this.toEntry(parentPath(p), await this.lookup(p, opts.signal), baseName(p));
  }

  async hash(path: string, type: HashType, opts: { signal?: AbortSignal } = {}): Promise<string | undefined> {
    return (await this.stat(path, opts)).hashes?.[type];
  }

  async openRead(path: string, opts: ReadOptions = {}): Promise<Readable> {
    const it = await this.lookup(path, opts.signal);
    if (it.type === 'folder') throw new ProviderError('is_dir', `is a folder: ${cleanPath(path)}`);
    const size = it.size ?? 0;
    const headers: Record<string, string> = {};
    if (opts.range) {
      if (opts.range.start >= size) return Readable.from([]);
      headers.range = `bytes=${opts.range.start}-${opts.range.end !== undefined ? Math.min(opts.range.end, size - 1) : ''}`;
    }
    // The content call answers 302 to a download URL; fetch follows it (without the token).
    const res = await this.api.request({
      method: 'GET',
      url: this.u(`/files/${encodeURIComponent(it.id)}/content`),
      headers,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    return bodyStream(res, opts.signal);
  }

  async about(): Promise<About> {
    const me = await this.api.json<{ space_amount?: number; space_used?: number }>({
      method: 'GET',
      url: this.u('/users/me', { fields: 'space_amount,space_used' }),
    });
    const out: About = {};
    if (me.space_used !== undefined) out.used = me.space_used;
    // Unlimited accounts report a huge space_amount (or -1).
    if (me.space_amount !== undefined && me.space_amount >= 0) {
      out.total = me.space_amount;
      if (out.used !== undefined) out.free = Math.max(0, out.total - out.used);
    }
    return out;
  }

  // ---------- writing ----------

  private attributes(name: string, src: SrcInfo, parentId?: string): Record<string, unknown> {
    const a: Record<string, unknown> = { name: this.names.encode(name) };
    if (parentId) a.parent = { id: parentId };
    if (src.modTime) a.content_modified_at = boxTime(src.modTime);
    return a;
  }

  /** Direct upload (new file, or a new version when the name is taken by a file). */
  private async directUpload(
    parentId: string,
    name: string,
    data: Buffer,
    src: SrcInfo,
    path: string,
    signal?: AbortSignal,
  ): Promise<BoxItem> {
    const send = (url: string, attrs: Record<string, unknown>) => {
      const boundary = `skyferry${Math.random().toString(36).slice(2)}`;
      const body = Buffer.concat([
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="attributes"\r\n\r\n${JSON.stringify(attrs)}\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="upload"\r\nContent-Type: application/octet-stream\r\n\r\n`,
        ),
        data,
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      return this.api.json<{ entries: BoxItem[] }>({
        method: 'POST',
        url,
        headers: {
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-md5': createHash('sha1').update(data).digest('hex'),
        },
        body,
        ...(signal ? { signal } : {}),
      });
    };
    try {
      const r = await send(this.up('/files/content', { fields: FIELDS }), this.attributes(name, src, parentId));
      return r.entries[0]!;
    } catch (err) {
      const existing = ProviderError.is(err, 'exists') ? conflictOf(err) : undefined;
      if (!existing) throw err;
      if (existing.type === 'folder') throw new ProviderError('is_dir', `a folder is in the way: ${path}`);
      const attrs: Record<string, unknown> = {};
      if (src.modTime) attrs.content_modified_at = boxTime(src.modTime);
      const r = await send(this.up(`/files/${encodeURIComponent(existing.id)}/content`, { fields: FIELDS }), attrs);
      return r.entries[0]!;
    }
  }

  /** Opens a chunked upload session for a new file, or a new version of the file holding the name. */
  async createSession(
    parentId: string,
    name: string,
    size: number,
    path: string,
    signal?: AbortSignal,
  ): Promise<UploadSession> {
    try {
      return await this.api.json<UploadSession>({
        method: 'POST',
        url: this.up('/files/upload_sessions'),
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ folder_id: parentId, file_size: size, file_name: this.names.encode(name) }),
        ...(signal ? { signal } : {}),
      });
    } catch (err) {
      const existing = ProviderError.is(err, 'exists') ? conflictOf(err) : undefined;
      if (!existing) throw err;
      if (existing.type === 'folder') throw new ProviderError('is_dir', `a folder is in the way: ${path}`);
      return this.api.json<UploadSession>({
        method: 'POST',
        url: this.up(`/files/${encodeURIComponent(existing.id)}/upload_sessions`),
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ file_size: size }),
        ...(signal ? { signal } : {}),
      });
    }
  }

  async uploadPart(
    session: UploadSession,
    offset: number,
    data: Buffer,
    total: number,
    signal?: AbortSignal,
  ): Promise<Part> {
    const r = await this.api.json<{ part: Part }>({
      method: 'PUT',
      url: this.up(`/files/upload_sessions/${encodeURIComponent(session.id)}`),
      headers: {
        'content-type': 'application/octet-stream',
        digest: `sha=${sha1Base64(data)}`,
        'content-range': `bytes ${offset}-${offset + data.length - 1}/${total}`,
      },
      body: data,
      ...(signal ? { signal } : {}),
    });
    return r.part;
  }

  /** Commits a session; Box may answer 202 while it processes parts (wait Retry-After, ask again). */
  async commit(
    session: UploadSession,
    parts: Part[],
    fileSha1: Buffer,
    src: SrcInfo,
    signal?: AbortSignal,
  ): Promise<BoxItem> {
    const attributes: Record<string, unknown> = {};
    if (src.modTime) attributes.content_modified_at = boxTime(src.modTime);
    for (let i = 0; i < 100; i++) {
      const res = await this.api.request({
        method: 'POST',
        url: this.up(`/files/upload_sessions/${encodeURIComponent(session.id)}/commit`, { fields: FIELDS }),
        headers: { 'content-type': 'application/json', digest: `sha=${fileSha1.toString('base64')}` },
        body: JSON.stringify({ parts: [...parts].sort((a, b) => a.offset - b.offset), attributes }),
        accept: (s) => s === 201 || s === 200 || s === 202,
        ...(signal ? { signal } : {}),
      });
      if (res.status !== 202) return ((await res.json()) as { entries: BoxItem[] }).entries[0]!;
      await res.body?.cancel().catch(() => undefined);
      await delay(retryAfterOf(res.headers) ?? 1000, undefined, signal ? { signal } : {}).catch(() => {
        throw canceled();
      });
    }
    throw new ProviderError('server', 'Box did not finish processing the upload');
  }

  async abortSession(session: UploadSession): Promise<void> {
    await this.api
      .request({
        method: 'DELETE',
        url: this.up(`/files/upload_sessions/${encodeURIComponent(session.id)}`),
        retry: false,
      })
      .catch(() => undefined);
  }

  async put(path: string, body: Readable, src: SrcInfo, opts: WriteOptions = {}): Promise<Entry> {
    const p = cleanPath(path);
    if (p === '/') throw new ProviderError('is_dir', 'cannot write the root');
    const signal = opts.signal;
    const reader = new ByteTaker(body);
    let spooled: Awaited<ReturnType<typeof spoolToTemp>> | undefined;
    let session: UploadSession | undefined;
    try {
      let size = src.size;
      let first: Buffer = Buffer.alloc(0);
      let source = reader;
      if (size < 0 || size <= this.uploadCutoff) {
        first = (await reader.read(this.uploadCutoff, signal)) ?? Buffer.alloc(0);
        if (first.length === this.uploadCutoff) {
          const more = await reader.read(1, signal);
          if (more) {
            if (src.size >= 0) throw shortBody(first.length + 1, src.size);
            // Chunked sessions need the size: keep the rest on disk first.
            spooled = await spoolToTemp([first, more], reader, MiB, signal);
            size = spooled.size;
            source = new ByteTaker(spooled.open());
          }
        }
        if (!spooled) {
          if (src.size >= 0 && first.length !== src.size) throw shortBody(first.length, src.size);
          size = first.length;
        }
      }
      return await this.locks.run(`file:${p}`, async () => {
        const parentId = await this.ensureDir(parentPath(p), signal);
        if (size <= this.uploadCutoff && !spooled) {
          const it = await this.directUpload(parentId, baseName(p), first, src, p, signal);
          opts.onProgress?.(first.length);
          return this.toEntry(parentPath(p), it, baseName(p));
        }
        session = await this.createSession(parentId, baseName(p), size, p, signal);
        const whole = createHash('sha1');
        const parts: Part[] = [];
        let offset = 0;
        while (offset < size) {
          const piece = await source.read(Math.min(session.part_size, size - offset), signal);
          if (!piece || (piece.length < session.part_size && offset + piece.length < size))
            throw shortBody(offset + (piece?.length ?? 0), size);
          whole.update(piece);
          parts.push(await this.uploadPart(session, offset, piece, size, signal));
          offset += piece.length;
          opts.onProgress?.(offset);
        }
        if (!spooled && (await source.read(1, signal))) throw shortBody(size + 1, size);
        const it = await this.commit(session, parts, whole.digest(), src, signal);
        return this.toEntry(parentPath(p), it, baseName(p));
      });
    } catch (err) {
      if (session) await this.abortSession(session);
      await reader.cancel().catch(() => undefined);
      body.destroy();
      if (signal?.aborted) throw canceled();
      throw err;
    } finally {
      await spooled?.cleanup();
    }
  }

  async openChunkWriter(path: string, src: SrcInfo, opts: { signal?: AbortSignal } = {}): Promise<ChunkWriter> {
    const p = cleanPath(path);
    if (src.size < 0) {
      // Sessions need the total: gather the chunks on disk, upload at close.
      return new SpoolingChunkWriter(8 * MiB, (body, size) =>
        this.put(p, body, { ...src, size }, opts.signal ? { signal: opts.signal } : {}),
      );
    }
    const parentId = await this.ensureDir(parentPath(p), opts.signal);
    if (src.size <= this.uploadCutoff) {
      // Too small for a session: gather the chunks and upload them directly at close.
      return new GatheringWriter(8 * MiB, src.size, async (data) =>
        this.toEntry(
          parentPath(p),
          await this.directUpload(parentId, baseName(p), data, src, p, opts.signal),
          baseName(p),
        ),
      );
    }
    const session = await this.createSession(parentId, baseName(p), src.size, p, opts.signal);
    return new BoxChunkWriter(this, session, p, src, opts.signal);
  }

  async mkdir(path: string): Promise<void> {
    await this.ensureDir(path);
  }

  private async deleteItem(it: BoxItem, purge: boolean): Promise<void> {
    const kind = it.type === 'folder' ? 'folders' : 'files';
    await this.api.request({
      method: 'DELETE',
      url: this.u(`/${kind}/${encodeURIComponent(it.id)}`, it.type === 'folder' ? { recursive: true } : {}),
    });
    if (purge)
      await this.api
        .request({ method: 'DELETE', url: this.u(`/${kind}/${encodeURIComponent(it.id)}/trash`), retry: false })
        .catch(() => undefined);
  }

  async remove(path: string): Promise<void> {
    const p = cleanPath(path);
    const it = await this.lookup(p);
    if (it.type === 'folder') throw new ProviderError('is_dir', `is a folder: ${p}`);
    await this.deleteItem(it, true);
  }

  async rmdir(path: string): Promise<void> {
    const p = cleanPath(path);
    if (p === '/') throw new ProviderError('permission', 'cannot remove the root folder');
    const it = await this.lookup(p);
    if (it.type !== 'folder') throw new ProviderError('not_dir', `not a folder: ${p}`);
    await this.deleteItem(it, true);
    this.cache.invalidateTree(p);
  }

  async trash(path: string): Promise<void> {
    const p = cleanPath(path);
    if (p === '/') throw new ProviderError('permission', 'cannot trash the root folder');
    const it = await this.lookup(p);
    await this.deleteItem(it, false);
    this.cache.invalidateTree(p);
  }

  /** The path of an item from its path_collection (the folders above it, from "All Files", id 0). */
  private pathOf(it: BoxItem): string | undefined {
    const up = it.path_collection?.entries ?? [];
    if (up[0]?.id !== '0') return undefined;
    let dir = '/';
    for (const f of up.slice(1)) dir = joinPath(dir, this.names.decode(f.name));
    return joinPath(dir, this.names.decode(it.name));
  }

  /** Box's search by name below folder `dir` (offset paging: the page token is the next offset). */
  async search(dir: string, query: string, opts: ListOptions = {}): Promise<Page> {
    const base = cleanPath(dir);
    const id = await this.dirId(base, opts.signal);
    const offset = Number(opts.pageToken ?? 0);
    if (!Number.isSafeInteger(offset) || offset < 0) throw new ProviderError('unknown', 'invalid page token');
    const page = await this.api.json<BoxOffsetPage>({
      method: 'GET',
      url: this.u('/search', {
        query,
        content_types: 'name',
        fields: `${FIELDS},path_collection`,
        limit: Math.min(Math.max(opts.pageSize ?? SEARCH_PAGE, 1), SEARCH_PAGE),
        offset,
        ...(id === '0' ? {} : { ancestor_folder_ids: id }),
      }),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    const entries: Entry[] = [];
    for (const it of page.entries) {
      const path = it.type === 'web_link' ? undefined : this.pathOf(it);
      if (path === undefined || path === base || !isWithin(base, path)) continue;
      entries.push(this.toEntry(parentPath(path), it, baseName(path)));
    }
    const next = page.offset + page.entries.length;
    return { entries, ...(page.entries.length > 0 && next < page.total_count ? { nextPageToken: String(next) } : {}) };
  }

  /** "file:<id>" or "folder:<id>", as listTrash names a trashed item. */
  private static trashId(id: string): { kind: 'files' | 'folders'; id: string } {
    const m = /^(file|folder):(\d+)$/.exec(id);
    if (!m) throw new ProviderError('not_found', `not in the trash: ${id}`);
    return { kind: m[1] === 'file' ? 'files' : 'folders', id: m[2] as string };
  }

  /** The items in Box's trash (a trashed folder holds what was in it), with where they were. */
  async listTrash(opts: { pageToken?: string; signal?: AbortSignal } = {}): Promise<TrashPage> {
    const offset = Number(opts.pageToken ?? 0);
    if (!Number.isSafeInteger(offset) || offset < 0) throw new ProviderError('unknown', 'invalid page token');
    const page = await this.api.json<BoxOffsetPage>({
      method: 'GET',
      url: this.u('/folders/trash/items', { fields: `${FIELDS},trashed_at`, limit: TRASH_PAGE, offset }),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    const folders = new Map<string, Promise<string | undefined>>();
    const folderPath = (id: string) => {
      let p = folders.get(id);
      if (!p) {
        p = this.api
          .json<BoxItem>({
            method: 'GET',
            url: this.u(`/folders/${encodeURIComponent(id)}`, { fields: 'id,name,path_collection' }),
            ...(opts.signal ? { signal: opts.signal } : {}),
          })
          .then(
            (f) => (f.id === '0' ? '/' : this.pathOf(f)),
            // A folder that is itself in the trash, or gone: where it was is not known.
            () => undefined,
          );
        folders.set(id, p);
      }
      return p;
    };
    const entries: TrashEntry[] = [];
    for (const it of page.entries) {
      if (it.type === 'web_link') continue;
      const name = this.names.decode(it.name);
      const isDir = it.type === 'folder';
      const e: TrashEntry = {
        id: `${it.type}:${it.id}`,
        name,
        kind: isDir ? 'dir' : 'file',
        size: isDir ? 0 : (it.size ?? 0),
      };
      const folder = it.parent ? await folderPath(it.parent.id) : undefined;
      if (folder !== undefined) e.originalPath = joinPath(folder, name);
      if (it.trashed_at) e.deletedAt = new Date(it.trashed_at);
      entries.push(e);
    }
    const next = page.offset + page.entries.length;
    return { entries, ...(page.entries.length > 0 && next < page.total_count ? { nextPageToken: String(next) } : {}) };
  }

  /**
   * Puts a trashed item back in its folder, as "name (restored)" when the name is taken there again;
   * in the root folder when its folder is gone.
   */
  async restoreTrash(id: string): Promise<Entry> {
    const t = BoxProvider.trashId(id);
    let item: BoxItem | undefined;
    for (let n = 0; !item; n++) {
      try {
        item = await this.api.json<BoxItem>({
          method: 'POST',
          url: this.u(`/${t.kind}/${encodeURIComponent(t.id)}`, { fields: `${FIELDS},path_collection` }),
          headers: { 'content-type': 'application/json' },
          // Box puts it back in its folder; the root only where that folder is gone (or trashed).
          body: JSON.stringify({ parent: { id: '0' }, ...(n === 0 ? {} : { name: await this.restoredAs(t, n) }) }),
        });
      } catch (err) {
        if (!ProviderError.is(err, 'exists') || n >= 20) throw err;
      }
    }
    const path = this.pathOf(item);
    if (path === undefined) throw new ProviderError('not_found', `restored outside this cloud: ${id}`);
    this.cache.invalidateTree(path);
    return this.toEntry(parentPath(path), item, baseName(path));
  }

  /** The `n`th free name to restore a trashed item under. */
  private async restoredAs(t: { kind: 'files' | 'folders'; id: string }, n: number): Promise<string> {
    const it = await this.api.json<BoxItem>({
      method: 'GET',
      url: this.u(`/${t.kind}/${encodeURIComponent(t.id)}/trash`, { fields: 'id,name' }),
    });
    return this.names.encode(restoredName(this.names.decode(it.name), t.kind === 'files' ? 'file' : 'dir', n));
  }

  async purgeTrash(id: string): Promise<void> {
    const t = BoxProvider.trashId(id);
    await this.api.request({ method: 'DELETE', url: this.u(`/${t.kind}/${encodeURIComponent(t.id)}/trash`) });
  }

  /** Box has no call that empties the trash: each item in it is purged. */
  async emptyTrash(): Promise<void> {
    const ids: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.listTrash(token ? { pageToken: token } : {});
      ids.push(...page.entries.map((e) => e.id));
      token = page.nextPageToken;
    } while (token);
    for (const id of ids) {
      await this.purgeTrash(id).catch((err: unknown) => {
        // Purged meanwhile, or with the folder it was in.
        if (!ProviderError.is(err, 'not_found')) throw err;
      });
    }
  }

  private update(it: BoxItem, body: Record<string, unknown>, signal?: AbortSignal): Promise<BoxItem> {
    return this.api.json<BoxItem>({
      method: 'PUT',
      url: this.u(`/${it.type === 'folder' ? 'folders' : 'files'}/${encodeURIComponent(it.id)}`, { fields: FIELDS }),
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      ...(signal ? { signal } : {}),
    });
  }

  async rename(path: string, newName: string): Promise<Entry> {
    checkName(newName);
    const p = cleanPath(path);
    if (p === '/') throw new ProviderError('permission', 'cannot rename the root folder');
    const it = await this.lookup(p);
    const updated = await this.update(it, { name: this.names.encode(newName) });
    if (it.type === 'folder') this.cache.invalidateTree(p);
    return this.toEntry(parentPath(p), updated, newName);
  }

  async move(src: Entry, dst: string, opts: { signal?: AbortSignal } = {}): Promise<Entry> {
    const from = cleanPath(src.path);
    const to = cleanPath(dst);
    if (from === '/' || to === '/') throw new ProviderError('permission', 'cannot move the root folder');
    const it = await this.lookup(from, opts.signal);
    const parentId = await this.ensureDir(parentPath(to), opts.signal);
    const updated = await this.update(
      it,
      { name: this.names.encode(baseName(to)), parent: { id: parentId } },
      opts.signal,
    );
    if (it.type === 'folder') {
      this.cache.invalidateTree(from);
      this.cache.set(to, it.id);
    }
    return this.toEntry(parentPath(to), updated, baseName(to));
  }

  async copy(src: Entry, dst: string, opts: { signal?: AbortSignal } = {}): Promise<Entry> {
    const to = cleanPath(dst);
    const it = await this.lookup(cleanPath(src.path), opts.signal);
    const parentId = await this.ensureDir(parentPath(to), opts.signal);
    const kind = it.type === 'folder' ? 'folders' : 'files';
    const copyOnce = () =>
      this.api.json<BoxItem>({
        method: 'POST',
        url: this.u(`/${kind}/${encodeURIComponent(it.id)}/copy`, { fields: FIELDS }),
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ parent: { id: parentId }, name: this.names.encode(baseName(to)) }),
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
    return this.locks.run(`file:${to}`, async () => {
      let made: BoxItem;
      try {
        made = await copyOnce();
      } catch (err) {
        const existing = ProviderError.is(err, 'exists') ? conflictOf(err) : undefined;
        if (!existing || existing.type === 'folder' || it.type === 'folder') throw err;
        // Replace the file at the destination.
        await this.deleteItem(existing, true);
        made = await copyOnce();
      }
      if (made.type === 'folder') this.cache.set(to, made.id);
      return this.toEntry(parentPath(to), made, baseName(to));
    });
  }

  async close(): Promise<void> {
    // fetch keeps no per-provider connections to release.
  }
}

function shortBody(got: number, announced: number): ProviderError {
  return new ProviderError(
    'corrupted',
    `the source gave ${got > announced ? 'more than' : got} bytes where ${announced} were announced`,
  );
}

/**
 * The parallel chunk writer over a Box upload session. Parts go up in any order; the commit needs
 * the whole file's SHA-1, so chunks are hashed in index order as they arrive (a chunk written
 * ahead of its predecessors is held until they come, which a caller writing in order never does).
 */
class BoxChunkWriter implements ChunkWriter {
  readonly chunkSize: number;
  readonly concurrency: number;
  private readonly box: BoxProvider;
  private readonly session: UploadSession;
  private readonly path: string;
  private readonly src: SrcInfo;
  private readonly signal: AbortSignal | undefined;
  private readonly chunks: number;
  private readonly parts = new Map<number, Part>();
  private readonly hash: Hash = createHash('sha1');
  private hashedUpTo = 0;
  private readonly held = new Map<number, Buffer>();
  private aborted = false;

  constructor(box: BoxProvider, session: UploadSession, path: string, src: SrcInfo, signal?: AbortSignal) {
    this.box = box;
    this.session = session;
    this.path = path;
    this.src = src;
    this.signal = signal;
    this.chunkSize = session.part_size;
    this.concurrency = box.concurrency;
    this.chunks = Math.max(1, Math.ceil(src.size / this.chunkSize));
  }

  async writeChunk(index: number, data: Buffer, signal?: AbortSignal): Promise<void> {
    if (this.aborted) throw new ProviderError('unknown', 'chunk writer was aborted');
    if (index < 0 || index >= this.chunks)
      throw new ProviderError('unknown', `chunk ${index} is outside 0..${this.chunks - 1}`);
    const expected = index === this.chunks - 1 ? this.src.size - index * this.chunkSize : this.chunkSize;
    if (data.length !== expected)
      throw new ProviderError('unknown', `chunk ${index} has ${data.length} bytes, expected ${expected}`);
    this.held.set(index, data);
    while (this.held.has(this.hashedUpTo)) {
      this.hash.update(this.held.get(this.hashedUpTo)!);
      this.held.delete(this.hashedUpTo);
      this.hashedUpTo++;
    }
    const part = await this.box.uploadPart(
      this.session,
      index * this.chunkSize,
      data,
      this.src.size,
      signal ?? this.signal,
    );
    this.parts.set(index, part);
  }

  async close(): Promise<Entry> {
    if (this.aborted) throw new ProviderError('unknown', 'chunk writer was aborted');
    if (this.parts.size !== this.chunks || this.hashedUpTo !== this.chunks) {
      throw new ProviderError('unknown', `chunks missing: ${this.chunks - this.parts.size} of ${this.chunks}`);
    }
    const it = await this.box.commit(this.session, [...this.parts.values()], this.hash.digest(), this.src, this.signal);
    const entry: Entry = {
      path: this.path,
      name: baseName(this.path),
      kind: 'file',
      size: it.size ?? this.src.size,
      id: it.id,
    };
    const mod = it.content_modified_at ?? it.modified_at;
    if (mod) entry.modTime = new Date(mod);
    if (it.sha1) entry.hashes = { sha1: it.sha1.toLowerCase() };
    return entry;
  }

  async abort(): Promise<void> {
    if (this.aborted) return;
    this.aborted = true;
    this.held.clear();
    await this.box.abortSession(this.session);
  }
}

/** For files too small for a session: chunks gathered in memory, uploaded at close. */
class GatheringWriter implements ChunkWriter {
  readonly chunkSize: number;
  readonly concurrency = 4;
  private readonly total: number;
  private readonly chunks = new Map<number, Buffer>();
  private readonly finish: (data: Buffer) => Promise<Entry>;
  private aborted = false;

  constructor(chunkSize: number, total: number, finish: (data: Buffer) => Promise<Entry>) {
    this.chunkSize = chunkSize;
    this.total = total;
    this.finish = finish;
  }

  async writeChunk(index: number, data: Buffer): Promise<void> {
    if (this.aborted) throw new ProviderError('unknown', 'chunk writer was aborted');
    this.chunks.set(index, data);
  }

  async close(): Promise<Entry> {
    const n = Math.max(1, Math.ceil(this.total / this.chunkSize));
    const parts: Buffer[] = [];
    for (let i = 0; i < n; i++) {
      const c = this.chunks.get(i);
      if (!c && this.total > 0) throw new ProviderError('unknown', `chunk ${i} missing`);
      if (c) parts.push(c);
    }
    const data = Buffer.concat(parts);
    if (data.length !== this.total)
      throw new ProviderError('corrupted', `chunks hold ${data.length} bytes, expected ${this.total}`);
    return this.finish(data);
  }

  async abort(): Promise<void> {
    this.aborted = true;
    this.chunks.clear();
  }
}

export async function openBox(credentials: Record<string, unknown>, ctx: ProviderContext): Promise<BoxProvider> {
  return new BoxProvider({ credentials, ctx });
}
