import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
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
import { baseName, checkName, cleanPath, isWithin, joinPath, parentPath } from '../../path.ts';
import {
  bodyStream,
  genericHttpError,
  KeyedMutex,
  retryAfterOf,
  type ApiClient,
  type ErrorInfo,
} from '../oauth-common/http.ts';
import { numberSetting, setupOAuth } from '../oauth-common/setup.ts';
import { ByteTaker } from '../oauth-common/take.ts';
import { Batcher, type BatchResult } from './batch.ts';

/**
 * Dropbox (API v2), personal accounts and team spaces (dropbox_business: every call carries
 * Dropbox-API-Path-Root with the team's root namespace). Dropbox addresses by path, so no id cache
 * is needed. Small files go in one upload; bigger ones through an upload session (sequential for a
 * stream, concurrent for the parallel chunk writer, whose appends are multiples of 4 MiB), each
 * commit checked against the Dropbox content hash computed while the bytes stream. Deleted items
 * stay restorable in Dropbox's deleted files (that is the trash: listed through list_folder with
 * include_deleted, restored through list_revisions and restore, deleted for good through
 * permanently_delete in team accounts only, the only ones Dropbox offers it to; Dropbox has no call
 * that empties it). Search is Dropbox's own (search_v2, names only). Rate limits, including
 * too_many_write_operations, wait out the Retry-After the service sends.
 * Batching (setting batch_size, default 100, 0 turns it off; batch_timeout_ms, default 10): every
 * commit takes the namespace's write lock, so many single commits at once fail with
 * too_many_write_operations. Upload sessions are instead closed by their last start/append and
 * the finishes of files written close together go in one upload_session/finish_batch_v2 (small
 * files: upload_session/start with close=true and the whole content, then the batch); removals
 * requested together go in one delete_batch (async job polled with delete_batch/check). Each
 * put() or remove() still gets its own Entry or its own error.
 * References: https://www.dropbox.com/developers/documentation/http/documentation,
 * https://developers.dropbox.com/dbx-performance-guide, https://www.dropbox.com/developers/reference/content-hash,
 * https://developers.dropbox.com/dbx-team-files-guide,
 * https://developers.dropbox.com/dbx-performance-guide (batch commits and lock contention).
 */

const MiB = 1024 * 1024;
const BLOCK = 4 * MiB;
/** Entries of the whole account's listing read for one page of the trash (each deleted one costs a call). */
const TRASH_PAGE = 2000;

interface DbxListPage {
  entries: DbxMetadata[];
  cursor: string;
  has_more: boolean;
}

interface DbxRevisions {
  is_deleted: boolean;
  server_deleted?: string;
  entries: DbxMetadata[];
}

interface DbxMetadata {
  '.tag': 'file' | 'folder' | 'deleted';
  name: string;
  id?: string;
  rev?: string;
  path_display?: string;
  path_lower?: string;
  size?: number;
  client_modified?: string;
  server_modified?: string;
  content_hash?: string;
}

/** One entry of a batch result: `.tag` success (FileMetadata fields, or `metadata`) or failure. */
interface DbxBatchEntry extends Partial<Omit<DbxMetadata, '.tag'>> {
  '.tag': string;
  failure?: unknown;
  metadata?: DbxMetadata;
}

interface DbxJobStatus {
  '.tag': string;
  async_job_id?: string;
  entries?: DbxBatchEntry[];
  failed?: unknown;
}

/** "path/conflict/folder/" from a nested Dropbox union value (what error_summary would say). */
export function unionSummary(v: unknown): string {
  let out = '';
  let cur: unknown = v;
  while (cur && typeof cur === 'object' && typeof (cur as Record<string, unknown>)['.tag'] === 'string') {
    const tag = (cur as Record<string, string>)['.tag']!;
    out += `${tag}/`;
    const inner = (cur as Record<string, unknown>)[tag];
    // WriteError nests as `path`, UploadWriteFailed as `reason`.
    cur = inner ?? (cur as Record<string, unknown>).reason;
  }
  return out;
}

/** The error of one failed batch entry, mapped as if it were the 409 of a single call. */
function batchEntryError(failure: unknown, url: string): BatchResult<never> {
  const summary = unionSummary(failure);
  const error = dropboxError({
    status: 409,
    headers: new Headers(),
    text: summary,
    json: { error_summary: summary, error: failure },
    request: { method: 'POST', url },
  });
  return { error, retry: summary.includes('too_many_write_operations') };
}

interface DbxErrorBody {
  error_summary?: string;
  error?: { '.tag'?: string; reason?: { '.tag'?: string }; retry_after?: number };
}

/** Dropbox errors: 409 endpoint unions named by error_summary, 429 with retry_after, 401 token tags. */
export function dropboxError(e: ErrorInfo): ProviderError {
  const body = e.json as DbxErrorBody | undefined;
  const summary = body?.error_summary ?? '';
  const message = `Dropbox: ${summary || e.text.slice(0, 200) || `HTTP ${e.status}`}`;
  const headerRetry = retryAfterOf(e.headers);
  const bodyRetry = body?.error?.retry_after !== undefined ? body.error.retry_after * 1000 : undefined;
  const retryAfterMs = headerRetry ?? bodyRetry;
  const opts = {
    serviceCode: summary.split('/')[0] || String(e.status),
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  };
  const has = (s: string) => summary.includes(s);
  if (e.status === 429 || has('too_many_write_operations') || has('too_many_requests')) {
    return new ProviderError('rate_limited', message, {
      ...opts,
      serviceCode: has('too_many_write_operations') ? 'too_many_write_operations' : 'too_many_requests',
    });
  }
  if (e.status === 401) return new ProviderError('auth_expired', message, opts);
  if (e.status === 409) {
    if (has('not_found')) return new ProviderError('not_found', message, opts);
    if (has('conflict')) return new ProviderError('exists', message, opts);
    if (has('not_folder')) return new ProviderError('not_dir', message, opts);
    if (has('not_file')) return new ProviderError('is_dir', message, opts);
    if (has('malformed_path') || has('disallowed_name')) return new ProviderError('invalid_name', message, opts);
    if (has('insufficient_space') || has('insufficient_quota')) return new ProviderError('quota', message, opts);
    if (has('no_write_permission') || has('team_folder') || has('restricted_content'))
      return new ProviderError('permission', message, opts);
    if (has('content_hash_mismatch')) return new ProviderError('corrupted', message, opts);
    if (has('incorrect_offset')) return new ProviderError('server', message, opts);
  }
  return genericHttpError(e, message, opts.serviceCode);
}

/** JSON with every non-ASCII character escaped, as the Dropbox-API-Arg header requires. */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u007f-\uffff]/g,
    (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'),
  );
}

/** Dropbox takes client_modified in whole seconds, "Z" time. */
function dropboxTime(d: Date): string {
  return new Date(Math.floor(d.getTime() / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export interface DropboxOptions {
  kind: 'dropbox' | 'dropbox_business';
  credentials: Record<string, unknown>;
  ctx: ProviderContext;
}

export class DropboxProvider implements Provider {
  readonly kind: string;
  readonly accountKey: string;
  readonly features: Features = {
    copy: true,
    move: true,
    trash: true,
    about: true,
    chunkWriter: true,
    listRecursive: true,
    setModTime: true,
    caseInsensitive: true,
    bucketBased: false,
    needsSize: false,
    nameLimit: { max: 255, unit: 'chars' },
  };
  readonly hashes: ReadonlySet<HashType> = new Set<HashType>(['dropbox']);
  readonly chunkSize: number;
  readonly concurrency: number;
  private readonly api: ApiClient;
  private readonly apiUrl: string;
  private readonly contentUrl: string;
  private readonly team: boolean;
  private pathRoot: string | undefined;
  private readyPromise: Promise<void> | undefined;
  private readonly names = new NameEncoder(ENCODINGS.dropbox);
  private readonly locks = new KeyedMutex();
  /**
   * Deletes a trashed item for good: permanently_delete, which Dropbox offers to team accounts only
   * (absent on personal ones).
   */
  readonly purgeTrash?: (id: string) => Promise<void>;
  /** Finishes of closed upload sessions and deletions, batched (undefined: batching off). */
  private readonly finishes: Batcher<Record<string, unknown>, DbxMetadata> | undefined;
  private readonly deletes: Batcher<string, undefined> | undefined;

  constructor(opts: DropboxOptions) {
    const c = opts.credentials;
    const s = setupOAuth(c, opts.ctx, {
      kind: opts.kind,
      service: 'dropbox',
      accountPrefix: 'dropbox',
      defaultApiUrl: 'https://api.dropboxapi.com',
      defaultContentUrl: 'https://content.dropboxapi.com',
      mapError: dropboxError,
    });
    this.kind = opts.kind;
    this.api = s.api;
    this.accountKey = s.accountKey + (opts.kind === 'dropbox_business' ? ':team' : '');
    this.apiUrl = s.apiUrl.replace(/\/+$/, '');
    this.contentUrl = s.contentUrl.replace(/\/+$/, '');
    this.team = opts.kind === 'dropbox_business';
    if (this.team) this.purgeTrash = (id) => this.purgeDeleted(id);
    // Concurrent session appends must be multiples of 4 MiB.
    this.chunkSize = Math.max(BLOCK, Math.floor(numberSetting(c, 'chunk_size', 8 * MiB) / BLOCK) * BLOCK);
    this.concurrency = Math.max(1, Math.floor(numberSetting(c, 'upload_concurrency', 4)));
    const rawSize = c.batch_size;
    const off = rawSize === 0 || rawSize === '0' || rawSize === false || rawSize === 'off';
    if (!off) {
      const size = Math.min(1000, Math.max(1, Math.floor(numberSetting(c, 'batch_size', 100))));
      const windowMs = numberSetting(c, 'batch_timeout_ms', 10);
      this.finishes = new Batcher({ size, windowMs, send: (entries) => this.finishBatch(entries) });
      this.deletes = new Batcher({ size, windowMs, send: (paths) => this.deleteBatch(paths) });
    }
  }

  /** Batch sizes and counts (tests, logs). */
  batchStats(): { finishBatches: number; deleteBatches: number } {
    return { finishBatches: this.finishes?.batches ?? 0, deleteBatches: this.deletes?.batches ?? 0 };
  }

  /** One upload_session/finish_batch_v2 for closed sessions; results in the order of the entries. */
  private async finishBatch(entries: Array<Record<string, unknown>>): Promise<Array<BatchResult<DbxMetadata>>> {
    const r = await this.rpc<{ entries: DbxBatchEntry[] }>('files/upload_session/finish_batch_v2', { entries });
    return r.entries.map((e) =>
      e['.tag'] === 'success'
        ? { value: { ...(e as unknown as DbxMetadata), '.tag': 'file' } }
        : batchEntryError(e.failure, `${this.apiUrl}/2/files/upload_session/finish_batch_v2`),
    );
  }

  /** One delete_batch job, polled with delete_batch/check until it completes. */
  private async deleteBatch(paths: string[]): Promise<Array<BatchResult<undefined>>> {
    let status = await this.rpc<DbxJobStatus>('files/delete_batch', { entries: paths.map((path) => ({ path })) });
    const jobId = status.async_job_id;
    let delay = 10;
    while (status['.tag'] === 'async_job_id' || status['.tag'] === 'in_progress') {
      await sleep(delay);
      delay = Math.min(delay * 2, 1000);
      status = await this.rpc<DbxJobStatus>('files/delete_batch/check', { async_job_id: jobId });
    }
    if (status['.tag'] === 'failed') {
      // DeleteBatchError: too_many_write_operations (the whole job) is worth another batch.
      const failed = batchEntryError(status.failed, `${this.apiUrl}/2/files/delete_batch/check`);
      return paths.map(() => failed);
    }
    const results = status.entries ?? [];
    return results.map((e) =>
      e['.tag'] === 'success'
        ? { value: undefined }
        : batchEntryError(e.failure, `${this.apiUrl}/2/files/delete_batch/check`),
    );
  }

  /** Finishes a closed session: through the batch when batching is on, else alone. */
  private async finishClosed(
    sessionId: string,
    total: number,
    commit: Record<string, unknown>,
    contentHash: string | undefined,
    signal?: AbortSignal,
  ): Promise<DbxMetadata> {
    const args: Record<string, unknown> = { cursor: { session_id: sessionId, offset: total }, commit };
    if (contentHash) args.content_hash = contentHash;
    if (this.finishes) {
      await this.ready(signal);
      return this.finishes.add(args, signal);
    }
    return this.upload<DbxMetadata>('files/upload_session/finish', args, Buffer.alloc(0), signal);
  }

  /** Deletes one path: in a delete_batch with the others requested meanwhile, or alone. */
  private async deletePath(path: string, signal?: AbortSignal): Promise<void> {
    if (this.deletes) {
      await this.ready(signal);
      await this.deletes.add(path, signal);
      return;
    }
    await this.rpc('files/delete_v2', { path }, signal);
  }

  /** Team spaces: every call is rooted at the team's root namespace. */
  private ready(signal?: AbortSignal): Promise<void> {
    if (!this.team) return Promise.resolve();
    this.readyPromise ??= this.api
      .json<{ root_info?: { '.tag'?: string; root_namespace_id?: string; home_namespace_id?: string } }>({
        method: 'POST',
        url: `${this.apiUrl}/2/users/get_current_account`,
        ...(signal ? { signal } : {}),
      })
      .then((acc) => {
        const ri = acc.root_info;
        if (ri?.root_namespace_id && ri.root_namespace_id !== ri.home_namespace_id) {
          this.pathRoot = asciiJson({ '.tag': 'root', root: ri.root_namespace_id });
        }
      })
      .catch((err: unknown) => {
        this.readyPromise = undefined;
        throw err;
      });
    return this.readyPromise;
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return this.pathRoot ? { 'dropbox-api-path-root': this.pathRoot, ...extra } : extra;
  }

  private async rpc<T>(name: string, args: unknown, signal?: AbortSignal): Promise<T> {
    await this.ready(signal);
    return this.api.json<T>({
      method: 'POST',
      url: `${this.apiUrl}/2/${name}`,
      headers: this.headers({ 'content-type': 'application/json' }),
      body: JSON.stringify(args),
      ...(signal ? { signal } : {}),
    });
  }

  private async upload<T>(name: string, args: unknown, data: Buffer, signal?: AbortSignal): Promise<T> {
    await this.ready(signal);
    return this.api.json<T>({
      method: 'POST',
      url: `${this.contentUrl}/2/${name}`,
      headers: this.headers({ 'dropbox-api-arg': asciiJson(args), 'content-type': 'application/octet-stream' }),
      body: data,
      ...(signal ? { signal } : {}),
    });
  }

  /** Skyferry path -> Dropbox path ("" is the root). */
  private dpath(path: string): string {
    const p = cleanPath(path);
    return p === '/' ? '' : this.names.encodePath(p);
  }

  private toEntry(dir: string, m: DbxMetadata, name?: string): Entry {
    const n = name ?? this.names.decode(m.name);
    const isDir = m['.tag'] === 'folder';
    const e: Entry = { path: joinPath(dir, n), name: n, kind: isDir ? 'dir' : 'file', size: isDir ? 0 : (m.size ?? 0) };
    if (m.id) e.id = m.id;
    const mod = m.client_modified ?? m.server_modified;
    if (!isDir && mod) e.modTime = new Date(mod);
    if (!isDir && m.content_hash) e.hashes = { dropbox: m.content_hash };
    return e;
  }

  // ---------- reading ----------

  async list(dir: string, opts: ListOptions = {}): Promise<Page> {
    const p = cleanPath(dir);
    const page = opts.pageToken
      ? await this.rpc<{ entries: DbxMetadata[]; cursor: string; has_more: boolean }>(
          'files/list_folder/continue',
          { cursor: opts.pageToken },
          opts.signal,
        )
      : await this.rpc<{ entries: DbxMetadata[]; cursor: string; has_more: boolean }>(
          'files/list_folder',
          { path: this.dpath(p), limit: Math.min(Math.max(opts.pageSize ?? 2000, 1), 2000) },
          opts.signal,
        );
    const entries = page.entries.filter((m) => m['.tag'] !== 'deleted').map((m) => this.toEntry(p, m));
    return { entries, ...(page.has_more ? { nextPageToken: page.cursor } : {}) };
  }

  async *listRecursive(dir: string, opts: { signal?: AbortSignal } = {}): AsyncIterable<Entry[]> {
    const p = cleanPath(dir);
    const base = this.dpath(p).toLowerCase();
    let page = await this.rpc<{ entries: DbxMetadata[]; cursor: string; has_more: boolean }>(
      'files/list_folder',
      { path: this.dpath(p), recursive: true, limit: 2000 },
      opts.signal,
    );
    for (;;) {
      const batch: Entry[] = [];
      for (const m of page.entries) {
        if (m['.tag'] === 'deleted' || !m.path_display || !m.path_lower) continue;
        if (m.path_lower === base) continue;
        // The path below the listed folder, with the case Dropbox displays.
        const rel = m.path_display.slice(base.length);
        const skyPath = joinPath(p, this.names.decodePath(rel));
        batch.push(this.toEntry(parentPath(skyPath), m, baseName(skyPath)));
      }
      if (batch.length) yield batch;
      if (!page.has_more) return;
      page = await this.rpc('files/list_folder/continue', { cursor: page.cursor }, opts.signal);
    }
  }

  private async metadata(path: string, signal?: AbortSignal): Promise<DbxMetadata> {
    return this.rpc<DbxMetadata>('files/get_metadata', { path: this.dpath(path) }, signal);
  }

  async stat(path: string, opts: { signal?: AbortSignal } = {}): Promise<Entry> {
    const p = cleanPath(path);
    if (p === '/') return { path: '/', name: '', kind: 'dir', size: 0 };
    return this.toEntry(parentPath(p), await this.metadata(p, opts.signal), baseName(p));
  }

  async hash(path: string, type: HashType, opts: { signal?: AbortSignal } = {}): Promise<string | undefined> {
    return (await this.stat(path, opts)).hashes?.[type];
  }

  async openRead(path: string, opts: ReadOptions = {}): Promise<Readable> {
    const p = cleanPath(path);
    if (p === '/') throw new ProviderError('is_dir', 'is a folder: /');
    await this.ready(opts.signal);
    const headers: Record<string, string> = this.headers({ 'dropbox-api-arg': asciiJson({ path: this.dpath(p) }) });
    if (opts.range) headers.range = `bytes=${opts.range.start}-${opts.range.end ?? ''}`;
    const res = await this.api.request({
      method: 'POST',
      url: `${this.contentUrl}/2/files/download`,
      headers,
      // A range starting past the end answers 416: nothing to read.
      accept: (s) => (s >= 200 && s < 300) || s === 416,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    if (res.status === 416) {
      await res.body?.cancel().catch(() => undefined);
      return Readable.from([]);
    }
    return bodyStream(res, opts.signal);
  }

  async about(): Promise<About> {
    const u = await this.rpc<{ used?: number; allocation?: { '.tag'?: string; allocated?: number } }>(
      'users/get_space_usage',
      null,
    );
    const out: About = {};
    if (u.used !== undefined) out.used = u.used;
    if (u.allocation?.allocated !== undefined) {
      out.total = u.allocation.allocated;
      if (out.used !== undefined) out.free = Math.max(0, out.total - out.used);
    }
    return out;
  }

  // ---------- writing ----------

  private commitInfo(path: string, src: SrcInfo): Record<string, unknown> {
    const commit: Record<string, unknown> = {
      path: this.dpath(path),
      mode: 'overwrite',
      autorename: false,
      mute: true,
    };
    if (src.modTime) commit.client_modified = dropboxTime(src.modTime);
    return commit;
  }

  async put(path: string, body: Readable, src: SrcInfo, opts: WriteOptions = {}): Promise<Entry> {
    const p = cleanPath(path);
    if (p === '/') throw new ProviderError('is_dir', 'cannot write the root');
    const signal = opts.signal;
    const reader = new ByteTaker(body);
    const hasher = new ContentHasher();
    try {
      const first = (await reader.read(this.chunkSize, signal)) ?? Buffer.alloc(0);
      hasher.update(first);
      let next = first.length === this.chunkSize ? await reader.read(this.chunkSize, signal) : null;
      if (next) hasher.update(next);
      return await this.locks.run(`file:${p}`, async () => {
        await this.checkNotDir(p, signal);
        if (!next) {
          if (src.size >= 0 && first.length !== src.size) throw shortBody(first.length, src.size);
          if (this.finishes) {
            // The whole content in a closed session; the commit goes in the next finish batch.
            const { session_id } = await this.upload<{ session_id: string }>(
              'files/upload_session/start',
              { close: true },
              first,
              signal,
            );
            opts.onProgress?.(first.length);
            const m = await this.finishClosed(
              session_id,
              first.length,
              this.commitInfo(p, src),
              hasher.digest(),
              signal,
            );
            return this.toEntry(parentPath(p), m, baseName(p));
          }
          const m = await this.upload<DbxMetadata>(
            'files/upload',
            { ...this.commitInfo(p, src), content_hash: hasher.digest() },
            first,
            signal,
          );
          opts.onProgress?.(first.length);
          return this.toEntry(parentPath(p), m, baseName(p));
        }
        // A sequential session: start with the first chunk, append the middle ones, finish with the last.
        const { session_id } = await this.upload<{ session_id: string }>(
          'files/upload_session/start',
          { close: false },
          first,
          signal,
        );
        let offset = first.length;
        opts.onProgress?.(offset);
        let cur: Buffer = next;
        for (;;) {
          next = await reader.read(this.chunkSize, signal);
          if (next) hasher.update(next);
          if (!next) break;
          if (src.size >= 0 && offset + cur.length > src.size) throw shortBody(offset + cur.length, src.size);
          await this.upload(
            'files/upload_session/append_v2',
            { cursor: { session_id, offset }, close: false },
            cur,
            signal,
          );
          offset += cur.length;
          opts.onProgress?.(offset);
          cur = next;
        }
        if (src.size >= 0 && offset + cur.length !== src.size) throw shortBody(offset + cur.length, src.size);
        if (this.finishes) {
          // The last chunk closes the session; the commit goes in the next finish batch.
          await this.upload(
            'files/upload_session/append_v2',
            { cursor: { session_id, offset }, close: true },
            cur,
            signal,
          );
          opts.onProgress?.(offset + cur.length);
          const m = await this.finishClosed(
            session_id,
            offset + cur.length,
            this.commitInfo(p, src),
            hasher.digest(),
            signal,
          );
          return this.toEntry(parentPath(p), m, baseName(p));
        }
        const m = await this.upload<DbxMetadata>(
          'files/upload_session/finish',
          { cursor: { session_id, offset }, commit: this.commitInfo(p, src), content_hash: hasher.digest() },
          cur,
          signal,
        );
        opts.onProgress?.(offset + cur.length);
        return this.toEntry(parentPath(p), m, baseName(p));
      });
    } catch (err) {
      await reader.cancel().catch(() => undefined);
      body.destroy();
      if (signal?.aborted) throw canceled();
      throw err;
    }
  }

  /** Dropbox would upload beside a folder of the same name; Skyferry calls that is_dir. */
  private async checkNotDir(path: string, signal?: AbortSignal): Promise<void> {
    const m = await this.metadata(path, signal).catch((err: unknown) => {
      if (ProviderError.is(err, 'not_found')) return undefined;
      throw err;
    });
    if (m?.['.tag'] === 'folder') throw new ProviderError('is_dir', `a folder is in the way: ${path}`);
  }

  async openChunkWriter(path: string, src: SrcInfo, opts: { signal?: AbortSignal } = {}): Promise<ChunkWriter> {
    const p = cleanPath(path);
    if (src.size < 0) throw new ProviderError('not_supported', 'a chunked upload needs the size up front');
    await this.checkNotDir(p, opts.signal);
    const { session_id } = await this.upload<{ session_id: string }>(
      'files/upload_session/start',
      { close: false, session_type: { '.tag': 'concurrent' } },
      Buffer.alloc(0),
      opts.signal,
    );
    return new DropboxConcurrentWriter(this, session_id, p, src, opts.signal);
  }

  /** Used by the concurrent writer. */
  appendChunk(sessionId: string, offset: number, data: Buffer, close: boolean, signal?: AbortSignal): Promise<unknown> {
    return this.upload(
      'files/upload_session/append_v2',
      { cursor: { session_id: sessionId, offset }, close },
      data,
      signal,
    );
  }

  async finishConcurrent(
    sessionId: string,
    path: string,
    src: SrcInfo,
    total: number,
    contentHash: string | undefined,
    signal?: AbortSignal,
  ): Promise<Entry> {
    const m = await this.finishClosed(sessionId, total, this.commitInfo(path, src), contentHash, signal);
    return this.toEntry(parentPath(path), m, baseName(path));
  }

  async mkdir(path: string): Promise<void> {
    const p = cleanPath(path);
    if (p === '/') return;
    await this.locks.run(`dir:${p}`, async () => {
      try {
        await this.rpc('files/create_folder_v2', { path: this.dpath(p), autorename: false });
      } catch (err) {
        if (!ProviderError.is(err, 'exists')) throw err;
        const m = await this.metadata(p);
        if (m['.tag'] !== 'folder') throw new ProviderError('exists', `a file is in the way: ${p}`);
      }
    });
  }

  async remove(path: string): Promise<void> {
    const p = cleanPath(path);
    const m = await this.metadata(p);
    if (m['.tag'] === 'folder') throw new ProviderError('is_dir', `is a folder: ${p}`);
    await this.deletePath(this.dpath(p));
  }

  async rmdir(path: string): Promise<void> {
    const p = cleanPath(path);
    if (p === '/') throw new ProviderError('permission', 'cannot remove the root folder');
    const m = await this.metadata(p);
    if (m['.tag'] !== 'folder') throw new ProviderError('not_dir', `not a folder: ${p}`);
    await this.rpc('files/delete_v2', { path: this.dpath(p) });
  }

  /** Dropbox keeps deleted files restorable (its deleted files are the trash). */
  async trash(path: string): Promise<void> {
    const p = cleanPath(path);
    if (p === '/') throw new ProviderError('permission', 'cannot trash the root folder');
    await this.deletePath(this.dpath(p));
  }

  /** Dropbox's search by file name (search_v2) below folder `dir`; the page token is its cursor. */
  async search(dir: string, query: string, opts: ListOptions = {}): Promise<Page> {
    const base = cleanPath(dir);
    type Matches = { matches: Array<{ metadata?: { metadata?: DbxMetadata } }>; has_more: boolean; cursor?: string };
    const page = opts.pageToken
      ? await this.rpc<Matches>('files/search/continue_v2', { cursor: opts.pageToken }, opts.signal)
      : await this.rpc<Matches>(
          'files/search_v2',
          {
            query: query.slice(0, 1000),
            options: {
              ...(base === '/' ? {} : { path: this.dpath(base) }),
              max_results: Math.min(Math.max(opts.pageSize ?? 1000, 1), 1000),
              file_status: 'active',
              filename_only: true,
            },
          },
          opts.signal,
        );
    const entries: Entry[] = [];
    for (const match of page.matches) {
      const m = match.metadata?.metadata;
      if (!m?.path_display || m['.tag'] === 'deleted') continue;
      const path = this.names.decodePath(m.path_display);
      if (path === base || !isWithin(base, path)) continue;
      entries.push(this.toEntry(parentPath(path), m, baseName(path)));
    }
    return { entries, ...(page.has_more && page.cursor ? { nextPageToken: page.cursor } : {}) };
  }

  /** A deleted path's revisions: undefined for a deleted folder (Dropbox keeps revisions of files only). */
  private async revisionsOf(dpath: string, signal?: AbortSignal): Promise<DbxRevisions | undefined> {
    try {
      return await this.rpc<DbxRevisions>('files/list_revisions', { path: dpath, limit: 1 }, signal);
    } catch (err) {
      if (ProviderError.is(err, 'is_dir') || ProviderError.is(err, 'not_found')) return undefined;
      throw err;
    }
  }

  /**
   * Dropbox's deleted files: the deleted entries of a listing of the whole account (include_deleted),
   * less those below a deleted folder listed already (the folder stands for them). The id of each
   * is its path; the page token is the listing's cursor.
   */
  async listTrash(opts: { pageToken?: string; signal?: AbortSignal } = {}): Promise<TrashPage> {
    const page = opts.pageToken
      ? await this.rpc<DbxListPage>('files/list_folder/continue', { cursor: opts.pageToken }, opts.signal)
      : await this.rpc<DbxListPage>(
          'files/list_folder',
          { path: '', recursive: true, include_deleted: true, limit: TRASH_PAGE },
          opts.signal,
        );
    const dead = new Set<string>();
    const entries: TrashEntry[] = [];
    for (const m of page.entries) {
      if (m['.tag'] !== 'deleted' || !m.path_display || !m.path_lower) continue;
      const lower = m.path_lower;
      dead.add(lower);
      let up = parentPath(lower);
      while (up !== '/' && !dead.has(up)) up = parentPath(up);
      if (up !== '/') continue;
      const path = this.names.decodePath(m.path_display);
      const revs = await this.revisionsOf(m.path_lower, opts.signal);
      const file = revs?.entries[0];
      const e: TrashEntry = {
        id: path,
        name: baseName(path),
        originalPath: path,
        kind: file ? 'file' : 'dir',
        size: file?.size ?? 0,
      };
      if (revs?.server_deleted) e.deletedAt = new Date(revs.server_deleted);
      entries.push(e);
    }
    return { entries, ...(page.has_more ? { nextPageToken: page.cursor } : {}) };
  }

  /** The deleted item at cloud path `id`; not_found for a live path or one that never was. */
  private async deletedAt(id: string): Promise<string> {
    const p = cleanPath(id);
    if (p === '/' || p !== id) throw new ProviderError('not_found', `not in the trash: ${id}`);
    const m = await this.rpc<DbxMetadata>('files/get_metadata', { path: this.dpath(p), include_deleted: true }).catch(
      (err: unknown) => {
        throw ProviderError.is(err, 'not_found') ? new ProviderError('not_found', `not in the trash: ${id}`) : err;
      },
    );
    if (m['.tag'] !== 'deleted') throw new ProviderError('not_found', `not in the trash: ${id}`);
    return p;
  }

  /**
   * Restores a deleted item where it was (a path holds one item: a deleted path is free): a file by
   * its latest revision; a folder by making it again with every file deleted below it.
   */
  async restoreTrash(id: string): Promise<Entry> {
    const p = await this.deletedAt(id);
    const revs = await this.revisionsOf(this.dpath(p));
    const rev = revs?.entries[0]?.rev;
    if (rev) {
      const m = await this.rpc<DbxMetadata>('files/restore', { path: this.dpath(p), rev });
      return this.toEntry(parentPath(p), m, baseName(p));
    }
    await this.mkdir(p);
    // What was deleted below it, read from its nearest live folder.
    let from = parentPath(p);
    let page: DbxListPage | undefined;
    while (!page) {
      try {
        page = await this.rpc<DbxListPage>('files/list_folder', {
          path: this.dpath(from),
          recursive: true,
          include_deleted: true,
        });
      } catch (err) {
        if (!ProviderError.is(err, 'not_found') || from === '/') throw err;
        from = parentPath(from);
      }
    }
    for (;;) {
      for (const m of page.entries) {
        if (m['.tag'] !== 'deleted' || !m.path_display) continue;
        const below = this.names.decodePath(m.path_display);
        if (below === p || !isWithin(p, below)) continue;
        const r = (await this.revisionsOf(this.dpath(below)))?.entries[0]?.rev;
        if (r) await this.rpc('files/restore', { path: this.dpath(below), rev: r });
        else await this.mkdir(below);
      }
      if (!page.has_more) break;
      page = await this.rpc<DbxListPage>('files/list_folder/continue', { cursor: page.cursor });
    }
    return this.stat(p);
  }

  private async purgeDeleted(id: string): Promise<void> {
    const p = await this.deletedAt(id);
    await this.rpc('files/permanently_delete', { path: this.dpath(p) });
  }

  async rename(path: string, newName: string): Promise<Entry> {
    checkName(newName);
    const p = cleanPath(path);
    if (p === '/') throw new ProviderError('permission', 'cannot rename the root folder');
    const to = joinPath(parentPath(p), newName);
    const r = await this.rpc<{ metadata: DbxMetadata }>('files/move_v2', {
      from_path: this.dpath(p),
      to_path: this.dpath(to),
      autorename: false,
    });
    return this.toEntry(parentPath(to), r.metadata, newName);
  }

  async move(src: Entry, dst: string, opts: { signal?: AbortSignal } = {}): Promise<Entry> {
    const from = cleanPath(src.path);
    const to = cleanPath(dst);
    if (from === '/' || to === '/') throw new ProviderError('permission', 'cannot move the root folder');
    const r = await this.rpc<{ metadata: DbxMetadata }>(
      'files/move_v2',
      { from_path: this.dpath(from), to_path: this.dpath(to), autorename: false },
      opts.signal,
    );
    return this.toEntry(parentPath(to), r.metadata, baseName(to));
  }

  async copy(src: Entry, dst: string, opts: { signal?: AbortSignal } = {}): Promise<Entry> {
    const to = cleanPath(dst);
    return this.locks.run(`file:${to}`, async () => {
      const args = { from_path: this.dpath(src.path), to_path: this.dpath(to), autorename: false };
      try {
        const r = await this.rpc<{ metadata: DbxMetadata }>('files/copy_v2', args, opts.signal);
        return this.toEntry(parentPath(to), r.metadata, baseName(to));
      } catch (err) {
        if (!ProviderError.is(err, 'exists')) throw err;
        // Replace an existing file (never a folder) at the destination.
        const m = await this.metadata(to, opts.signal);
        if (m['.tag'] === 'folder') throw err;
        await this.rpc('files/delete_v2', { path: this.dpath(to) }, opts.signal);
        const r = await this.rpc<{ metadata: DbxMetadata }>('files/copy_v2', args, opts.signal);
        return this.toEntry(parentPath(to), r.metadata, baseName(to));
      }
    });
  }

  async close(): Promise<void> {
    // fetch keeps no per-provider connections to release.
  }
}

/** The Dropbox content hash of a stream, incrementally (node:crypto; cheap to create per file). */
class ContentHasher {
  private readonly outer = createHash('sha256');
  private block = createHash('sha256');
  private inBlock = 0;

  update(data: Buffer): void {
    let off = 0;
    while (off < data.length) {
      const take = Math.min(BLOCK - this.inBlock, data.length - off);
      this.block.update(data.subarray(off, off + take));
      this.inBlock += take;
      off += take;
      if (this.inBlock === BLOCK) this.endBlock();
    }
  }

  private endBlock(): void {
    this.outer.update(this.block.digest());
    this.block = createHash('sha256');
    this.inBlock = 0;
  }

  digest(): string {
    if (this.inBlock > 0) this.endBlock();
    return this.outer.digest('hex');
  }
}

function shortBody(got: number, announced: number): ProviderError {
  return new ProviderError('corrupted', `the source gave ${got} bytes where ${announced} were announced`);
}

/**
 * The parallel chunk writer over a concurrent upload session: chunks (multiples of 4 MiB) are
 * appended at their offsets in any order, the final one (which closes the session) only when
 * `close` is called, then the session is finished with the commit.
 */
class DropboxConcurrentWriter implements ChunkWriter {
  readonly chunkSize: number;
  readonly concurrency: number;
  private readonly dbx: DropboxProvider;
  private readonly sessionId: string;
  private readonly path: string;
  private readonly src: SrcInfo;
  private readonly signal: AbortSignal | undefined;
  private readonly chunks: number;
  private finalChunk: Buffer | undefined;
  private readonly written = new Set<number>();
  /** SHA-256 of each 4 MiB block, per chunk: the content hash is built from them in order. */
  private readonly blockDigests = new Map<number, Buffer[]>();
  private aborted = false;

  constructor(dbx: DropboxProvider, sessionId: string, path: string, src: SrcInfo, signal?: AbortSignal) {
    this.dbx = dbx;
    this.sessionId = sessionId;
    this.path = path;
    this.src = src;
    this.signal = signal;
    this.chunkSize = dbx.chunkSize;
    this.concurrency = dbx.concurrency;
    this.chunks = Math.max(1, Math.ceil(src.size / this.chunkSize));
  }

  async writeChunk(index: number, data: Buffer, signal?: AbortSignal): Promise<void> {
    if (this.aborted) throw new ProviderError('unknown', 'chunk writer was aborted');
    if (index < 0 || index >= this.chunks)
      throw new ProviderError('unknown', `chunk ${index} is outside 0..${this.chunks - 1}`);
    const expected = index === this.chunks - 1 ? this.src.size - index * this.chunkSize : this.chunkSize;
    if (data.length !== expected)
      throw new ProviderError('unknown', `chunk ${index} has ${data.length} bytes, expected ${expected}`);
    const digests: Buffer[] = [];
    for (let off = 0; off < data.length; off += BLOCK)
      digests.push(
        createHash('sha256')
          .update(data.subarray(off, off + BLOCK))
          .digest(),
      );
    this.blockDigests.set(index, digests);
    if (index === this.chunks - 1) {
      this.finalChunk = data;
      return;
    }
    await this.dbx.appendChunk(this.sessionId, index * this.chunkSize, data, false, signal ?? this.signal);
    this.written.add(index);
  }

  async close(): Promise<Entry> {
    if (this.aborted) throw new ProviderError('unknown', 'chunk writer was aborted');
    if (!this.finalChunk || this.written.size !== this.chunks - 1) {
      throw new ProviderError(
        'unknown',
        `chunks missing: ${this.chunks - this.written.size - (this.finalChunk ? 1 : 0)} of ${this.chunks}`,
      );
    }
    await this.dbx.appendChunk(this.sessionId, (this.chunks - 1) * this.chunkSize, this.finalChunk, true, this.signal);
    const outer = createHash('sha256');
    for (let i = 0; i < this.chunks; i++) for (const d of this.blockDigests.get(i) ?? []) outer.update(d);
    return this.dbx.finishConcurrent(
      this.sessionId,
      this.path,
      this.src,
      this.src.size,
      outer.digest('hex'),
      this.signal,
    );
  }

  async abort(): Promise<void> {
    // Dropbox has no call to discard a session; an unfinished one expires after a week.
    this.aborted = true;
    this.finalChunk = undefined;
  }
}

export async function openDropbox(
  kind: 'dropbox' | 'dropbox_business',
  credentials: Record<string, unknown>,
  ctx: ProviderContext,
): Promise<DropboxProvider> {
  return new DropboxProvider({ kind, credentials, ctx });
}
