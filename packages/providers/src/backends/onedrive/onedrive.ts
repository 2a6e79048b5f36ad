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
  WriteOptions,
} from '../../api/types.ts';
import { ENCODINGS, NameEncoder } from '../../encoding.ts';
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
import { ByteTaker, type ByteSource } from '../oauth-common/take.ts';
import { spoolToTemp } from '../oauth-common/spool.ts';
import { SpoolingChunkWriter } from '../oauth-common/spooling-writer.ts';

/**
 * OneDrive (personal) and OneDrive for Business / SharePoint document libraries over Microsoft
 * Graph. Items are addressed by id, with a path-to-ID cache for folders; small files go in one
 * PUT, larger ones through an upload session in fragments of a multiple of 320 KiB, sent in order
 * to the session URL without the bearer token; server-side copy is asynchronous and followed
 * through its monitor URL; deletions go to the recycle bin; quickXorHash is the hash reported.
 * Search is Graph's own (driveItem search below a folder; names only are kept). The recycle bin is
 * not listed: Graph has no call that lists a drive's deleted items (only onedrive.com shows them),
 * so this backend has no listTrash.
 * References: https://learn.microsoft.com/graph/api/resources/driveitem,
 * https://learn.microsoft.com/graph/api/driveitem-createuploadsession,
 * https://learn.microsoft.com/graph/api/driveitem-copy, https://learn.microsoft.com/graph/throttling,
 * https://learn.microsoft.com/onedrive/developer/rest-api/concepts/errors.
 */

const FRAGMENT = 320 * 1024;
const MiB = 1024 * 1024;
/** Larger files go through an upload session (the historical simple-upload limit). */
const SIMPLE_LIMIT = 4 * MiB;

interface GraphItem {
  id: string;
  name: string;
  size?: number;
  folder?: { childCount?: number };
  file?: { mimeType?: string; hashes?: { quickXorHash?: string; sha1Hash?: string; sha256Hash?: string } };
  fileSystemInfo?: { lastModifiedDateTime?: string };
  lastModifiedDateTime?: string;
  /** `path`: "/drive/root:/a/b" (or "/drives/{id}/root:/a/b"), each name percent-encoded. */
  parentReference?: { driveId?: string; id?: string; path?: string };
  root?: unknown;
}

interface GraphError {
  error?: { code?: string; message?: string };
}

/** Graph's error bodies (https://learn.microsoft.com/graph/errors). */
export function graphError(e: ErrorInfo): ProviderError {
  const err = (e.json as GraphError | undefined)?.error;
  const code = err?.code ?? '';
  const message = `OneDrive: ${err?.message ?? (e.text.slice(0, 200) || `HTTP ${e.status}`)}`;
  const retryAfterMs = retryAfterOf(e.headers);
  const withRetry = { serviceCode: code || String(e.status), ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  if (code === 'activityLimitReached' || e.status === 429 || (e.status === 503 && retryAfterMs !== undefined)) {
    return new ProviderError('rate_limited', message, withRetry);
  }
  if (code === 'itemNotFound') return new ProviderError('not_found', message, withRetry);
  if (code === 'nameAlreadyExists') return new ProviderError('exists', message, withRetry);
  if (code === 'quotaLimitReached' || e.status === 507) return new ProviderError('quota', message, withRetry);
  if (code === 'accessDenied' || code === 'notAllowed') return new ProviderError('permission', message, withRetry);
  if (code === 'invalidRange' || e.status === 416) return new ProviderError('server', message, withRetry);
  if (e.status === 401) return new ProviderError('auth_expired', message, withRetry);
  if (code === 'invalidRequest' && /name/i.test(err?.message ?? ''))
    return new ProviderError('invalid_name', message, withRetry);
  return genericHttpError(e, message, code || undefined);
}

export interface OneDriveOptions {
  kind: 'onedrive' | 'onedrive_business';
  credentials: Record<string, unknown>;
  ctx: ProviderContext;
}

export class OneDriveProvider implements Provider {
  readonly kind: string;
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
  readonly hashes: ReadonlySet<HashType> = new Set<HashType>(['quickxor']);
  readonly chunkSize: number;
  private readonly api: ApiClient;
  private readonly graph: string;
  private readonly drivePath: string;
  private readonly business: boolean;
  private readonly names = new NameEncoder(ENCODINGS.onedrive);
  private cache: PathIdCache | undefined;
  private rootPromise: Promise<{ id: string; driveId: string }> | undefined;
  private readonly locks = new KeyedMutex();

  constructor(opts: OneDriveOptions) {
    const c = opts.credentials;
    const s = setupOAuth(c, opts.ctx, {
      kind: opts.kind,
      service: 'microsoft',
      accountPrefix: 'microsoft',
      defaultApiUrl: 'https://graph.microsoft.com',
      mapError: graphError,
    });
    this.kind = opts.kind;
    this.api = s.api;
    this.accountKey = s.accountKey;
    this.graph = `${s.apiUrl.replace(/\/+$/, '')}/v1.0`;
    const driveId = typeof c.drive_id === 'string' && c.drive_id ? c.drive_id : undefined;
    this.drivePath = driveId ? `/drives/${encodeURIComponent(driveId)}` : '/me/drive';
    this.business = opts.kind === 'onedrive_business';
    // Fragments must be multiples of 320 KiB; 10 MiB is exactly 32 of them.
    this.chunkSize = Math.max(FRAGMENT, Math.floor(numberSetting(c, 'chunk_size', 10 * MiB) / FRAGMENT) * FRAGMENT);
  }

  private u(path: string, query: Record<string, string | number | undefined> = {}): string {
    return urlOf(this.graph, path, query);
  }

  private async root(): Promise<{ id: string; driveId: string }> {
    this.rootPromise ??= this.api
      .json<GraphItem>({ method: 'GET', url: this.u(`${this.drivePath}/root`) })
      .then((r) => ({ id: r.id, driveId: r.parentReference?.driveId ?? '' }))
      .catch((err: unknown) => {
        this.rootPromise = undefined;
        throw err;
      });
    const r = await this.rootPromise;
    if (!r.driveId) {
      const d = await this.api.json<{ id: string }>({ method: 'GET', url: this.u(this.drivePath) });
      r.driveId = d.id;
    }
    return r;
  }

  private async idCache(): Promise<PathIdCache> {
    this.cache ??= new PathIdCache((await this.root()).id);
    return this.cache;
  }

  private itemUrl(id: string, suffix = ''): string {
    return this.u(`${this.drivePath}/items/${encodeURIComponent(id)}${suffix}`);
  }

  /** `items/{parent}:/{name}:` plus an action. */
  private childUrl(
    parentId: string,
    name: string,
    action = '',
    query: Record<string, string | number | undefined> = {},
  ): string {
    return this.u(
      `${this.drivePath}/items/${encodeURIComponent(parentId)}:/${encodeURIComponent(this.names.encode(name))}:${action}`,
      query,
    );
  }

  private toEntry(dir: string, it: GraphItem, name?: string): Entry {
    const n = name ?? this.names.decode(it.name);
    const isDir = Boolean(it.folder) || Boolean(it.root);
    const e: Entry = {
      path: joinPath(dir, n),
      name: n,
      kind: isDir ? 'dir' : 'file',
      size: isDir ? 0 : (it.size ?? 0),
      id: it.id,
    };
    const mod = it.fileSystemInfo?.lastModifiedDateTime ?? it.lastModifiedDateTime;
    if (mod) e.modTime = new Date(mod);
    if (!isDir) {
      if (it.file?.mimeType) e.mimeType = it.file.mimeType;
      const h = it.file?.hashes;
      if (h?.quickXorHash) e.hashes = { quickxor: h.quickXorHash };
    }
    return e;
  }

  private async child(parentId: string, name: string, signal?: AbortSignal): Promise<GraphItem | undefined> {
    try {
      return await this.api.json<GraphItem>({
        method: 'GET',
        url: this.childUrl(parentId, name),
        ...(signal ? { signal } : {}),
      });
    } catch (err) {
      if (ProviderError.is(err, 'not_found')) return undefined;
      throw err;
    }
  }

  private async dirId(path: string, signal?: AbortSignal): Promise<string> {
    const cache = await this.idCache();
    const p = cleanPath(path);
    const hit = cache.get(p);
    if (hit) return hit;
    let id = (await this.root()).id;
    let cur = '/';
    for (const seg of pathSegments(p)) {
      cur = joinPath(cur, seg);
      const known = cache.get(cur);
      if (known) {
        id = known;
        continue;
      }
      const it = await this.child(id, seg, signal);
      if (!it) throw new ProviderError('not_found', `not found: ${cur}`);
      if (!it.folder) throw new ProviderError('not_dir', `not a folder: ${cur}`);
      cache.set(cur, it.id);
      id = it.id;
    }
    return id;
  }

  private async lookup(path: string, signal?: AbortSignal): Promise<GraphItem> {
    const p = cleanPath(path);
    if (p === '/')
      return this.api.json<GraphItem>({
        method: 'GET',
        url: this.itemUrl((await this.root()).id),
        ...(signal ? { signal } : {}),
      });
    const parentId = await this.dirId(parentPath(p), signal);
    const it = await this.child(parentId, baseName(p), signal);
    if (!it) throw new ProviderError('not_found', `not found: ${p}`);
    if (it.folder) (await this.idCache()).set(p, it.id);
    return it;
  }

  private async ensureDir(path: string, signal?: AbortSignal): Promise<string> {
    const cache = await this.idCache();
    const p = cleanPath(path);
    const hit = cache.get(p);
    if (hit) return hit;
    let id = (await this.root()).id;
    let cur = '/';
    for (const seg of pathSegments(p)) {
      cur = joinPath(cur, seg);
      const here = cur;
      const parent = id;
      id = await this.locks.run(`dir:${here}`, async () => {
        const known = cache.get(here);
        if (known) return known;
        const existing = await this.child(parent, seg, signal);
        if (existing) {
          if (!existing.folder) throw new ProviderError('exists', `a file is in the way: ${here}`);
          cache.set(here, existing.id);
          return existing.id;
        }
        try {
          const made = await this.api.json<GraphItem>({
            method: 'POST',
            url: this.itemUrl(parent, '/children'),
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({
              name: this.names.encode(seg),
              folder: {},
              '@microsoft.graph.conflictBehavior': 'fail',
            }),
            ...(signal ? { signal } : {}),
          });
          cache.set(here, made.id);
          return made.id;
        } catch (err) {
          if (!ProviderError.is(err, 'exists')) throw err;
          // Made by someone else meanwhile.
          const now = await this.child(parent, seg, signal);
          if (!now?.folder) throw new ProviderError('exists', `a file is in the way: ${here}`);
          cache.set(here, now.id);
          return now.id;
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
        if (it && !it.folder) throw new ProviderError('not_dir', `not a folder: ${p}`);
      }
      throw err;
    });
    // The page token is Graph's own @odata.nextLink (checked to stay on this drive's host).
    let url: string;
    if (opts.pageToken) {
      if (!opts.pageToken.startsWith(this.graph)) throw new ProviderError('unknown', 'invalid page token');
      url = opts.pageToken;
    } else {
      url = this.u(`${this.drivePath}/items/${encodeURIComponent(id)}/children`, {
        $top: Math.min(Math.max(opts.pageSize ?? 1000, 1), 1000),
      });
    }
    const page = await this.api.json<{ value: GraphItem[]; '@odata.nextLink'?: string }>({
      method: 'GET',
      url,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    const cache = await this.idCache();
    const entries = page.value.map((it) => {
      const e = this.toEntry(p, it);
      if (e.kind === 'dir') cache.set(e.path, it.id);
      return e;
    });
    return { entries, ...(page['@odata.nextLink'] ? { nextPageToken: page['@odata.nextLink'] } : {}) };
  }

  /** The cloud path of a folder from a parentReference.path; undefined when it is not this drive's root path. */
  private folderOfRef(refPath: string | undefined): string | undefined {
    const at = refPath?.indexOf('root:') ?? -1;
    if (refPath === undefined || at < 0) return undefined;
    let dir = '/';
    for (const seg of refPath
      .slice(at + 5)
      .split('/')
      .filter(Boolean))
      dir = joinPath(dir, this.names.decode(decodeURIComponent(seg)));
    return dir;
  }

  /**
   * Graph's search below folder `dir` ("search(q=)"); it matches content and metadata too, so only
   * the items whose name holds the query are kept. The page token is Graph's @odata.nextLink.
   */
  async search(dir: string, query: string, opts: ListOptions = {}): Promise<Page> {
    const base = cleanPath(dir);
    let url: string;
    if (opts.pageToken) {
      if (!opts.pageToken.startsWith(this.graph)) throw new ProviderError('unknown', 'invalid page token');
      url = opts.pageToken;
    } else {
      const id = await this.dirId(base, opts.signal);
      const q = encodeURIComponent(query.replace(/'/g, "''"));
      url = this.u(`${this.drivePath}/items/${encodeURIComponent(id)}/search(q='${q}')`, {
        $top: Math.min(Math.max(opts.pageSize ?? 1000, 1), 1000),
      });
    }
    const page = await this.api.json<{ value: GraphItem[]; '@odata.nextLink'?: string }>({
      method: 'GET',
      url,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    const needle = query.toLowerCase();
    const parents = new Map<string, Promise<string | undefined>>();
    // Search results may leave parentReference.path out (business drives): the parent is read then.
    const folderOf = (it: GraphItem): Promise<string | undefined> => {
      const known = this.folderOfRef(it.parentReference?.path);
      const parentId = it.parentReference?.id;
      if (known !== undefined || !parentId) return Promise.resolve(known);
      let p = parents.get(parentId);
      if (!p) {
        p = this.api
          .json<GraphItem>({
            method: 'GET',
            url: this.itemUrl(parentId),
            ...(opts.signal ? { signal: opts.signal } : {}),
          })
          .then((parent) => {
            if (parent.root) return '/';
            const up = this.folderOfRef(parent.parentReference?.path);
            return up === undefined ? undefined : joinPath(up, this.names.decode(parent.name));
          });
        parents.set(parentId, p);
      }
      return p;
    };
    const entries: Entry[] = [];
    for (const it of page.value) {
      const name = this.names.decode(it.name);
      if (!name.toLowerCase().includes(needle)) continue;
      const folder = await folderOf(it);
      if (folder === undefined) continue;
      const e = this.toEntry(folder, it, name);
      if (e.path !== base && isWithin(base, e.path)) entries.push(e);
    }
    return { entries, ...(page['@odata.nextLink'] ? { nextPageToken: page['@odata.nextLink'] } : {}) };
  }

  async stat(path: string, opts: { signal?: AbortSignal } = {}): Promise<Entry> {
    const p = cleanPath(path);
    const it = await this.lookup(p, opts.signal);
    if (p === '/') return { path: '/', name: '', kind: 'dir', size: 0, id: it.id };
    return this.toEntry(parentPath(p), it, baseName(p));
  }

  async hash(path: string, type: HashType, opts: { signal?: AbortSignal } = {}): Promise<string | undefined> {
    return (await this.stat(path, opts)).hashes?.[type];
  }

  async openRead(path: string, opts: ReadOptions = {}): Promise<Readable> {
    const it = await this.lookup(path, opts.signal);
    if (it.folder || it.root) throw new ProviderError('is_dir', `is a folder: ${cleanPath(path)}`);
    const size = it.size ?? 0;
    const headers: Record<string, string> = {};
    if (opts.range) {
      if (opts.range.start >= size) return Readable.from([]);
      headers.range = `bytes=${opts.range.start}-${opts.range.end !== undefined ? Math.min(opts.range.end, size - 1) : ''}`;
    }
    // /content answers a 302 to a pre-authenticated URL; fetch follows it without the token.
    const res = await this.api.request({
      method: 'GET',
      url: this.itemUrl(it.id, '/content'),
      headers,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    return bodyStream(res, opts.signal);
  }

  async about(): Promise<About> {
    const d = await this.api.json<{ quota?: { total?: number; used?: number; remaining?: number; deleted?: number } }>({
      method: 'GET',
      url: this.u(this.drivePath),
    });
    const q = d.quota ?? {};
    const out: About = {};
    if (q.total !== undefined) out.total = q.total;
    if (q.used !== undefined) out.used = q.used;
    if (q.remaining !== undefined) out.free = q.remaining;
    if (q.deleted !== undefined) out.trashed = q.deleted;
    return out;
  }

  // ---------- writing ----------

  async put(path: string, body: Readable, src: SrcInfo, opts: WriteOptions = {}): Promise<Entry> {
    const p = cleanPath(path);
    if (p === '/') throw new ProviderError('is_dir', 'cannot write the root');
    const signal = opts.signal;
    const reader = new ByteTaker(body);
    let spooled: Awaited<ReturnType<typeof spoolToTemp>> | undefined;
    let session: GraphSession | undefined;
    try {
      const first = (await reader.read(Math.max(SIMPLE_LIMIT, this.chunkSize), signal)) ?? Buffer.alloc(0);
      let size = src.size;
      let rest: ByteSource = reader;
      if (size < 0) {
        const more =
          first.length >= Math.max(SIMPLE_LIMIT, this.chunkSize) ? await reader.read(this.chunkSize, signal) : null;
        if (!more) size = first.length;
        else {
          // Graph needs the total size for a session: keep the rest on disk first.
          spooled = await spoolToTemp([first, more], reader, this.chunkSize, signal);
          size = spooled.size;
          rest = new ByteTaker(spooled.open());
        }
      }
      return await this.locks.run(`file:${p}`, async () => {
        const parentId = await this.ensureDir(parentPath(p), signal);
        const existing = await this.child(parentId, baseName(p), signal);
        if (existing?.folder) throw new ProviderError('is_dir', `a folder is in the way: ${p}`);
        if (size <= SIMPLE_LIMIT && !spooled) {
          if (first.length !== size) throw shortBody(first.length, size);
          const it = await this.simpleUpload(parentId, baseName(p), first.subarray(0, size), src, signal);
          opts.onProgress?.(size);
          return this.toEntry(parentPath(p), it, baseName(p));
        }
        session = new GraphSession(this, parentId, baseName(p), src, size, signal);
        let offset = 0;
        const pieces = spooled ? rest : null;
        let pending: Buffer = spooled ? Buffer.alloc(0) : first;
        while (offset < size) {
          while (pending.length < this.chunkSize && offset + pending.length < size) {
            const more = await (pieces ?? reader).read(this.chunkSize - pending.length, signal);
            if (!more) break;
            pending = pending.length ? Buffer.concat([pending, more]) : more;
          }
          const piece = pending.subarray(0, this.chunkSize);
          // A body shorter than announced must not become a file.
          if (piece.length < this.chunkSize && offset + piece.length < size)
            throw shortBody(offset + piece.length, size);
          pending = pending.subarray(piece.length);
          const final = offset + piece.length === size;
          if (final && !spooled && (pending.length > 0 || (await reader.read(1, signal))))
            throw shortBody(size + 1, size);
          await session.send(offset, piece, final, signal);
          offset += piece.length;
          opts.onProgress?.(offset);
        }
        return this.toEntry(parentPath(p), session.result(), baseName(p));
      });
    } catch (err) {
      await session?.cancel().catch(() => undefined);
      await reader.cancel().catch(() => undefined);
      body.destroy();
      if (signal?.aborted) throw canceled();
      throw err;
    } finally {
      await spooled?.cleanup();
    }
  }

  private async simpleUpload(
    parentId: string,
    name: string,
    data: Buffer,
    src: SrcInfo,
    signal?: AbortSignal,
  ): Promise<GraphItem> {
    const it = await this.api.json<GraphItem>({
      method: 'PUT',
      url: this.childUrl(parentId, name, '/content', { '@microsoft.graph.conflictBehavior': 'replace' }),
      headers: { 'content-type': src.mimeType ?? 'application/octet-stream' },
      body: data,
      ...(signal ? { signal } : {}),
    });
    if (!src.modTime) return it;
    return this.api.json<GraphItem>({
      method: 'PATCH',
      url: this.itemUrl(it.id),
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ fileSystemInfo: { lastModifiedDateTime: src.modTime.toISOString() } }),
      ...(signal ? { signal } : {}),
    });
  }

  /** Creates an upload session (used by GraphSession). */
  async createSession(parentId: string, name: string, src: SrcInfo, signal?: AbortSignal): Promise<string> {
    const item: Record<string, unknown> = { '@microsoft.graph.conflictBehavior': 'replace' };
    if (src.modTime) item.fileSystemInfo = { lastModifiedDateTime: src.modTime.toISOString() };
    const s = await this.api.json<{ uploadUrl: string }>({
      method: 'POST',
      url: this.childUrl(parentId, name, '/createUploadSession'),
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ item }),
      ...(signal ? { signal } : {}),
    });
    return s.uploadUrl;
  }

  get client(): ApiClient {
    return this.api;
  }

  async openChunkWriter(path: string, src: SrcInfo, opts: { signal?: AbortSignal } = {}): Promise<ChunkWriter> {
    const p = cleanPath(path);
    if (src.size < 0) {
      // The session needs the total: gather the chunks on disk, upload at close.
      return new SpoolingChunkWriter(this.chunkSize, (body, size) =>
        this.put(p, body, { ...src, size }, opts.signal ? { signal: opts.signal } : {}),
      );
    }
    const parentId = await this.ensureDir(parentPath(p), opts.signal);
    const existing = await this.child(parentId, baseName(p), opts.signal);
    if (existing?.folder) throw new ProviderError('is_dir', `a folder is in the way: ${p}`);
    const session = new GraphSession(this, parentId, baseName(p), src, src.size, opts.signal);
    const target: SequentialTarget = {
      send: (offset, data, final, signal) => session.send(offset, data, final, signal ?? opts.signal),
      finish: async () => this.toEntry(parentPath(p), session.result(), baseName(p)),
      abort: () => session.cancel(),
    };
    return new SequentialChunkWriter(target, this.chunkSize, src.size);
  }

  async mkdir(path: string): Promise<void> {
    await this.ensureDir(path);
  }

  async remove(path: string): Promise<void> {
    const p = cleanPath(path);
    const it = await this.lookup(p);
    if (it.folder || it.root) throw new ProviderError('is_dir', `is a folder: ${p}`);
    await this.deleteItem(it.id, this.business);
  }

  /** Deletes to the recycle bin, or permanently on business drives when asked. */
  private async deleteItem(id: string, permanent: boolean): Promise<void> {
    if (permanent) {
      await this.api.request({ method: 'POST', url: this.itemUrl(id, '/permanentDelete') });
      return;
    }
    await this.api.request({ method: 'DELETE', url: this.itemUrl(id) });
  }

  async rmdir(path: string): Promise<void> {
    const p = cleanPath(path);
    if (p === '/') throw new ProviderError('permission', 'cannot remove the root folder');
    const it = await this.lookup(p);
    if (!it.folder) throw new ProviderError('not_dir', `not a folder: ${p}`);
    await this.deleteItem(it.id, this.business);
    (await this.idCache()).invalidateTree(p);
  }

  async trash(path: string): Promise<void> {
    const p = cleanPath(path);
    if (p === '/') throw new ProviderError('permission', 'cannot trash the root folder');
    const it = await this.lookup(p);
    await this.deleteItem(it.id, false);
    (await this.idCache()).invalidateTree(p);
  }

  private patch(id: string, body: Record<string, unknown>, signal?: AbortSignal): Promise<GraphItem> {
    return this.api.json<GraphItem>({
      method: 'PATCH',
      url: this.u(`${this.drivePath}/items/${encodeURIComponent(id)}`, { '@microsoft.graph.conflictBehavior': 'fail' }),
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
    const updated = await this.patch(it.id, { name: this.names.encode(newName) });
    if (it.folder) (await this.idCache()).invalidateTree(p);
    return this.toEntry(parentPath(p), updated, newName);
  }

  async move(src: Entry, dst: string, opts: { signal?: AbortSignal } = {}): Promise<Entry> {
    const from = cleanPath(src.path);
    const to = cleanPath(dst);
    if (from === '/' || to === '/') throw new ProviderError('permission', 'cannot move the root folder');
    const it = await this.lookup(from, opts.signal);
    const parentId = await this.ensureDir(parentPath(to), opts.signal);
    const updated = await this.patch(
      it.id,
      { name: this.names.encode(baseName(to)), parentReference: { id: parentId } },
      opts.signal,
    );
    const cache = await this.idCache();
    if (it.folder) {
      cache.invalidateTree(from);
      cache.set(to, it.id);
    }
    return this.toEntry(parentPath(to), updated, baseName(to));
  }

  async copy(src: Entry, dst: string, opts: { signal?: AbortSignal } = {}): Promise<Entry> {
    const to = cleanPath(dst);
    const it = await this.lookup(cleanPath(src.path), opts.signal);
    const parentId = await this.ensureDir(parentPath(to), opts.signal);
    const { driveId } = await this.root();
    const res = await this.api.request({
      method: 'POST',
      url: this.u(`${this.drivePath}/items/${encodeURIComponent(it.id)}/copy`, {
        '@microsoft.graph.conflictBehavior': 'replace',
      }),
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ parentReference: { driveId, id: parentId }, name: this.names.encode(baseName(to)) }),
      accept: (s) => s === 202,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    await res.body?.cancel().catch(() => undefined);
    const monitor = res.headers.get('location');
    if (!monitor) throw new ProviderError('server', 'OneDrive accepted the copy without a monitor URL');
    const id = await this.followCopy(monitor, opts.signal);
    const made = await this.api.json<GraphItem>({
      method: 'GET',
      url: this.itemUrl(id),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    if (made.folder) (await this.idCache()).set(to, made.id);
    return this.toEntry(parentPath(to), made, baseName(to));
  }

  /** Polls an asynchronous copy's monitor (no token: the URL is pre-authenticated) until it ends. */
  private async followCopy(monitor: string, signal?: AbortSignal): Promise<string> {
    let wait = 50;
    for (let i = 0; i < 600; i++) {
      if (signal?.aborted) throw canceled();
      const res = await this.api.request({
        method: 'GET',
        url: monitor,
        auth: false,
        redirect: 'manual',
        accept: (s) => s === 200 || s === 202 || s === 303,
        ...(signal ? { signal } : {}),
      });
      if (res.status === 303) {
        await res.body?.cancel().catch(() => undefined);
        const loc = res.headers.get('location') ?? '';
        const m = /items\/([^/?]+)/.exec(loc);
        if (m) return decodeURIComponent(m[1]!);
        throw new ProviderError('server', 'OneDrive copy finished without naming the new item');
      }
      const status = (await res.json()) as {
        status?: string;
        resourceId?: string;
        error?: { code?: string; message?: string };
      };
      if (status.status === 'completed' && status.resourceId) return status.resourceId;
      if (status.status === 'failed') {
        const code = status.error?.code ?? 'failed';
        throw new ProviderError(
          code === 'nameAlreadyExists' ? 'exists' : code === 'quotaLimitReached' ? 'quota' : 'server',
          `OneDrive copy failed: ${status.error?.message ?? code}`,
          { serviceCode: code },
        );
      }
      await delay(wait, undefined, signal ? { signal } : {}).catch(() => {
        throw canceled();
      });
      wait = Math.min(wait * 2, 2000);
    }
    throw new ProviderError('server', 'OneDrive copy did not finish in time');
  }

  async close(): Promise<void> {
    // fetch keeps no per-provider connections to release.
  }
}

/**
 * One upload session: fragments PUT in order to the session URL without the bearer token; after a
 * failed attempt the session says what it still expects (nextExpectedRanges) and the rest of the
 * fragment is sent.
 */
class GraphSession {
  private url: Promise<string> | undefined;
  private item: GraphItem | undefined;
  private readonly od: OneDriveProvider;
  private readonly parentId: string;
  private readonly name: string;
  private readonly src: SrcInfo;
  private readonly total: number;
  private readonly signal: AbortSignal | undefined;

  constructor(od: OneDriveProvider, parentId: string, name: string, src: SrcInfo, total: number, signal?: AbortSignal) {
    this.od = od;
    this.parentId = parentId;
    this.name = name;
    this.src = src;
    this.total = total;
    this.signal = signal;
  }

  private uploadUrl(): Promise<string> {
    this.url ??= this.od.createSession(this.parentId, this.name, this.src, this.signal);
    return this.url;
  }

  async send(offset: number, data: Buffer, _final: boolean, signal?: AbortSignal): Promise<void> {
    const url = await this.uploadUrl();
    const api = this.od.client;
    await api.pacer.call(
      async (attempt) => {
        let from = 0;
        if (attempt > 0) {
          const status = await api.request({
            method: 'GET',
            url,
            auth: false,
            retry: false,
            ...(signal ? { signal } : {}),
          });
          const s = (await status.json()) as { nextExpectedRanges?: string[] };
          const next = Number((s.nextExpectedRanges?.[0] ?? '0-').split('-')[0]);
          if (next < offset) throw new ProviderError('server', 'OneDrive lost part of the upload');
          from = Math.min(next - offset, data.length);
          if (from === data.length) return;
        }
        const piece = data.subarray(from);
        const start = offset + from;
        const res = await api.request({
          method: 'PUT',
          url,
          auth: false,
          retry: false,
          headers: { 'content-range': `bytes ${start}-${start + piece.length - 1}/${this.total}` },
          body: piece,
          accept: (st) => st === 200 || st === 201 || st === 202,
          ...(signal ? { signal } : {}),
        });
        if (res.status === 202) {
          await res.body?.cancel().catch(() => undefined);
          return;
        }
        this.item = (await res.json()) as GraphItem;
      },
      signal ? { signal } : {},
    );
  }

  result(): GraphItem {
    if (!this.item) throw new ProviderError('server', 'OneDrive upload session did not complete');
    return this.item;
  }

  async cancel(): Promise<void> {
    if (!this.url) return;
    const url = await this.url.catch(() => undefined);
    if (url) await this.od.client.request({ method: 'DELETE', url, auth: false, retry: false }).catch(() => undefined);
  }
}

function shortBody(got: number, announced: number): ProviderError {
  return new ProviderError(
    'corrupted',
    `the source gave ${got === announced + 1 ? 'more' : got} bytes where ${announced} were announced`,
  );
}

export async function openOneDrive(
  kind: 'onedrive' | 'onedrive_business',
  credentials: Record<string, unknown>,
  ctx: ProviderContext,
): Promise<OneDriveProvider> {
  return new OneDriveProvider({ kind, credentials, ctx });
}
