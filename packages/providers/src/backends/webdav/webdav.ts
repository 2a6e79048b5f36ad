import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ProviderError, canceled, toProviderError } from '../../api/errors.ts';
import type { OutboundGuard } from '../../net/guard.ts';
import { keepErrorListener } from '../../net/listeners.ts';
import { pacerFor } from '../../pacer.ts';
import { relayErrors } from '../../recycle.ts';
import {
  STALE_TEMP_MS,
  TEMP_NAME,
  TEMP_PREFIX,
  activeTemps,
  hasTempSegment,
  isTaggedTemp,
  isTempName,
  markSwept,
  sweepDue,
  tempName,
} from '../../temp-files.ts';
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
  TempWriteOptions,
  TrashPage,
  WriteOptions,
} from '../../api/types.ts';
import { baseName, checkName, cleanPath, isWithin, joinPath, parentPath, pathSegments } from '../../path.ts';
import { DavHttp, byteCounter, drain, isOk, sliceStream, statusError, text } from './http.ts';
import {
  emptyNextcloudTrash,
  hasNextcloudTrash,
  listNextcloudTrash,
  openNextcloudChunkWriter,
  purgeNextcloudTrash,
  restoreNextcloudTrash,
} from './nextcloud.ts';
import {
  MTIME_STATE_KEY,
  keepsTime,
  ocMtime,
  probeMtime,
  proppatchMtime,
  recordedMtime,
  type WebdavMtimeMethod,
} from './mtime.ts';
import { openRangedChunkWriter, takesRangedWrites } from './ranged.ts';
import { PROPFIND_BODY, QUOTA_BODY, hrefToPath, parseQuota, parseResources, type DavResource } from './propfind.ts';

/** Prefix and exact name of in-progress uploads (temp-files.ts); hidden from listings, never returned by stat. */
export const WEBDAV_TEMP_PREFIX = TEMP_PREFIX;
export const WEBDAV_TEMP_NAME = TEMP_NAME;
/** Age from which a temporary file a cut-off upload left is removed (temp-files.ts). */
export const WEBDAV_STALE_TEMP_MS = STALE_TEMP_MS;

export type WebdavVendor = 'nextcloud' | 'owncloud' | 'other';

export interface WebdavOptions {
  /** Which server this is; detected from /status.php when the URL has "/remote.php/" in it. */
  vendor?: WebdavVendor;
  /** Largest page `list` returns when the caller gives no page size (PROPFIND returns everything). */
  pageSize?: number;
  /** Nextcloud chunked upload: chunk size (5 MB to 5 GB; default 10 MB) and parallel chunks. */
  chunkSize?: number;
  concurrency?: number;
  /** Accept a self-signed HTTPS certificate (documented as unsafe; for private servers). */
  insecureSkipVerify?: boolean;
  /** Requests per second for the account (the pacer's limit). */
  rateLimitPerSecond?: number;
  /** Age from which a leftover temporary file is removed (default WEBDAV_STALE_TEMP_MS). */
  staleTempMs?: number;
  /** Checks the server's address on every connection (unset: any address). */
  guard?: OutboundGuard;
  /** A request whose server stays silent this long fails (default 300 s). */
  timeoutMs?: number;
  /**
   * How the server keeps modification times (mtime.ts): Nextcloud and ownCloud take X-OC-Mtime;
   * for other servers openWebdav finds out once and records it in the cloud's state.
   */
  mtime?: WebdavMtimeMethod;
  /** Told when a write showed that the server does not keep the times it was given after all. */
  onMtimeLost?: () => Promise<void>;
}

const DEFAULT_PAGE_SIZE = 1000;
/** How long a listing fetched for page 1 serves later pages of the same folder. */
const SNAPSHOT_TTL_MS = 120_000;
const MAX_SNAPSHOTS = 16;

function encodePath(path: string): string {
  return pathSegments(path).map(encodeURIComponent).join('/');
}

/**
 * WebDAV (RFC 4918) for Nextcloud, ownCloud and any generic server (Apache mod_dav, rclone serve
 * webdav, ...). Listings are PROPFIND depth 1, paged here because servers answer all at once.
 * Generic servers get uploads under a hidden temporary name then MOVEd into place, so a cancelled
 * upload leaves nothing visible; Nextcloud/ownCloud write atomically themselves (".part" files),
 * keep the modification time we send in X-OC-Mtime, report checksums, and take big files through
 * Nextcloud's chunked upload v2. Other servers keep a written file's time where they take
 * X-OC-Mtime or PROPPATCH of getlastmodified (found out once, `mtime`); `features.setModTime`
 * says whether they do, and turns false as soon as a write shows they did not.
 */
export class WebdavProvider implements Provider {
  readonly kind = 'webdav';
  readonly accountKey: string;
  readonly features: Features;
  readonly hashes: ReadonlySet<HashType>;
  readonly vendor: WebdavVendor;
  readonly base: URL;
  readonly username: string;
  readonly http: DavHttp;
  private readonly basePath: string;
  private readonly pageSize: number;
  private readonly staleTempMs: number;
  readonly chunkSize: number;
  readonly concurrency: number;
  /** How this server keeps a written file's modification time ('none' once a write shows it does not). */
  mtime: WebdavMtimeMethod;
  private readonly onMtimeLost?: () => Promise<void>;
  private readonly knownDirs = new Set<string>(['/']);
  private readonly dirsInFlight = new Map<string, Promise<void>>();
  /**
   * Paths a stat or listing found missing (a planner looking at a new target folder): folders made
   * under one of them are made from the top down, without first asking for the deepest and being
   * told a parent is missing (409). Only a hint: a folder made meanwhile by someone else answers
   * MKCOL with 405, which is taken as made.
   */
  private readonly missingDirs = new Set<string>();
  private readonly snapshots = new Map<string, { at: number; entries: Entry[] }>();
  /** RFC 4331 quota: only where the server reports it. */
  readonly about?: () => Promise<About>;
  /**
   * Nextcloud chunked upload v2 on Nextcloud; ranged writes on generic servers that take them
   * (others refuse with not_supported when asked, and the bytes go through put()).
   */
  readonly openChunkWriter?: (path: string, src: SrcInfo, opts?: TempWriteOptions) => Promise<ChunkWriter>;
  /**
   * Nextcloud's trashbin, where the server has it on: a DELETE moves an item there, and the
   * trashbin's own DAV endpoint lists, restores and purges (nextcloud.ts).
   */
  readonly trash?: (path: string) => Promise<void>;
  readonly listTrash?: (opts?: { signal?: AbortSignal }) => Promise<TrashPage>;
  readonly restoreTrash?: (id: string) => Promise<Entry>;
  readonly purgeTrash?: (id: string) => Promise<void>;
  readonly emptyTrash?: () => Promise<void>;

  constructor(
    base: URL,
    username: string,
    password: string,
    vendor: WebdavVendor,
    opts: WebdavOptions & { hasQuota?: boolean; hasTrash?: boolean } = {},
  ) {
    this.base = base;
    this.username = username;
    this.vendor = vendor;
    this.basePath = hrefToPath(base.pathname);
    this.accountKey = webdavAccountKey(username, base);
    this.http = new DavHttp(base, username, password, {
      rejectUnauthorized: !opts.insecureSkipVerify,
      pacer: pacerFor(this.accountKey, { rateLimitPerSecond: opts.rateLimitPerSecond }),
      guard: opts.guard,
      timeoutMs: opts.timeoutMs,
    });
    this.pageSize = opts.pageSize ?? DEFAULT_PAGE_SIZE;
    this.staleTempMs = opts.staleTempMs ?? WEBDAV_STALE_TEMP_MS;
    this.chunkSize = Math.max(5 * 1024 * 1024, opts.chunkSize ?? 10 * 1024 * 1024);
    this.concurrency = opts.concurrency ?? 4;
    const oc = vendor !== 'other';
    this.mtime = opts.mtime ?? (oc ? 'x-oc-mtime' : 'none');
    this.onMtimeLost = opts.onMtimeLost;
    this.features = {
      copy: true,
      move: true,
      trash: false,
      about: opts.hasQuota === true,
      chunkWriter: vendor !== 'owncloud',
      listRecursive: false,
      setModTime: this.mtime !== 'none',
      caseInsensitive: false,
      bucketBased: false,
      needsSize: false,
    };
    // Nextcloud/ownCloud keep only the checksums clients send (OC-Checksum): entries carry them
    // when present, but no hash type is promised for every file.
    this.hashes = new Set<HashType>();
    if (this.features.about) this.about = () => this.quota();
    if (opts.hasTrash === true && vendor === 'nextcloud') {
      this.features.trash = true;
      // Nextcloud's DELETE is the move to its trashbin.
      this.trash = async (p) => ((await this.stat(p)).kind === 'dir' ? this.rmdir(p) : this.remove(p));
      this.listTrash = (o) => listNextcloudTrash(this, o?.signal);
      this.restoreTrash = async (id) => {
        const entry = await restoreNextcloudTrash(this, id);
        this.forgetDirs(entry.path);
        return entry;
      };
      this.purgeTrash = (id) => purgeNextcloudTrash(this, id);
      this.emptyTrash = () => emptyNextcloudTrash(this);
    }
    if (this.features.chunkWriter) this.openChunkWriter = (p, src, o) => this.chunkWriter(p, src, o);
  }

  /** The URL of a cloud path; folders get a trailing slash. */
  url(path: string, dir = false): URL {
    const enc = encodePath(path);
    const u = new URL(this.base.href);
    u.pathname = this.base.pathname + enc + (dir && enc !== '' ? '/' : '');
    return u;
  }

  private cloudPath(hrefPath: string): string | undefined {
    if (this.basePath === '/') return cleanPath(hrefPath);
    if (hrefPath === this.basePath) return '/';
    if (hrefPath.startsWith(this.basePath + '/')) return cleanPath(hrefPath.slice(this.basePath.length));
    return undefined;
  }

  private entryOf(path: string, r: DavResource): Entry {
    const e: Entry = { path, name: baseName(path), kind: r.isDir ? 'dir' : 'file', size: r.isDir ? 0 : r.size };
    if (r.modTime) e.modTime = r.modTime;
    if (r.mimeType && !r.isDir) e.mimeType = r.mimeType;
    if (r.fileId) e.id = r.fileId;
    if (r.hashes && !r.isDir) e.hashes = r.hashes;
    return e;
  }

  private async propfind(path: string, depth: 0 | 1, signal?: AbortSignal, body = PROPFIND_BODY): Promise<string> {
    const res = await this.http.send({
      method: 'PROPFIND',
      // A folder's URL ends in "/"; some servers (rclone) refuse a file's URL with one.
      url: this.url(path, depth === 1),
      headers: { depth: String(depth), 'content-type': 'application/xml; charset=utf-8' },
      body,
      signal,
    });
    if (res.statusCode !== 207) throw await statusError(res, `PROPFIND ${path}`);
    return text(res);
  }

  private hidden(path: string): boolean {
    return hasTempSegment(path);
  }

  async stat(path: string, opts: { signal?: AbortSignal } = {}): Promise<Entry> {
    const p = cleanPath(path);
    if (this.hidden(p)) throw new ProviderError('not_found', `not found: ${p}`);
    let xml: string;
    try {
      xml = await this.propfind(p, 0, opts.signal);
    } catch (err) {
      if (ProviderError.is(err, 'not_found')) {
        // A hint, not a record: kept small (a successful write's stat takes its path out again).
        if (this.missingDirs.size >= 256) this.missingDirs.clear();
        this.missingDirs.add(p);
      }
      throw err;
    }
    const r = parseResources(xml)[0];
    if (!r) throw new ProviderError('not_found', `not found: ${p}`);
    this.missingDirs.delete(p);
    if (r.isDir) this.knownDirs.add(p);
    return this.entryOf(p, r);
  }

  /** Records that folder `d` was searched for stale temporary files (or is new: it holds none). */
  private markSwept(d: string): void {
    markSwept(`${this.accountKey}|${d}`);
  }

  /**
   * Removes the temporary files a cut-off upload left in folder `d`, given its PROPFIND (depth 1)
   * answer: files (not collections) named exactly as this backend names them, untouched for
   * `staleTempMs`, and not an upload of this process. Never fails: a file it cannot remove stays hidden.
   */
  private async removeStaleTemps(d: string, resources: readonly DavResource[]): Promise<void> {
    this.markSwept(d);
    const cutoff = Date.now() - this.staleTempMs;
    const stale: string[] = [];
    for (const r of resources) {
      const p = this.cloudPath(r.hrefPath);
      if (p === undefined || parentPath(p) !== d || r.isDir || !WEBDAV_TEMP_NAME.test(baseName(p))) continue;
      if (!r.modTime || r.modTime.getTime() >= cutoff || activeTemps.has(`${this.accountKey}|${p}`)) continue;
      stale.push(p);
    }
    await Promise.all(stale.map((p) => this.deleteQuietly(p)));
  }

  /** Before a write: looks for stale temporary files in the folder, at most once every ten minutes. */
  private async sweepBeforeWrite(d: string, signal?: AbortSignal): Promise<void> {
    if (!sweepDue(`${this.accountKey}|${d}`)) return;
    this.markSwept(d);
    try {
      await this.removeStaleTemps(d, parseResources(await this.propfind(d, 1, signal)));
    } catch {
      // The write goes on; the next listing tries again.
    }
  }

  private async fetchListing(d: string, signal?: AbortSignal): Promise<Entry[]> {
    let xml: string;
    try {
      xml = await this.propfind(d, 1, signal);
    } catch (err) {
      // A file's URL with a trailing slash is an error on some servers (Apache: 400/404-ish).
      if (ProviderError.is(err, 'auth_invalid') || ProviderError.is(err, 'canceled')) throw err;
      const st = await this.stat(d, { signal }).catch(() => undefined);
      if (st && st.kind !== 'dir') throw new ProviderError('not_dir', `not a folder: ${d}`);
      throw err;
    }
    const entries: Entry[] = [];
    let self: DavResource | undefined;
    const resources = parseResources(xml);
    for (const r of resources) {
      const p = this.cloudPath(r.hrefPath);
      if (p === undefined) continue;
      if (p === d) {
        self = r;
        continue;
      }
      if (parentPath(p) !== d || this.hidden(p)) continue;
      entries.push(this.entryOf(p, r));
    }
    if (self && !self.isDir) throw new ProviderError('not_dir', `not a folder: ${d}`);
    if (!self && entries.length === 0) {
      // Some servers answer depth 1 on a file with the file only, under another href form.
      const st = await this.stat(d, { signal });
      if (st.kind !== 'dir') throw new ProviderError('not_dir', `not a folder: ${d}`);
    }
    await this.removeStaleTemps(d, resources);
    this.knownDirs.add(d);
    return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  async list(dir: string, opts: ListOptions = {}): Promise<Page> {
    const d = cleanPath(dir);
    if (this.hidden(d)) throw new ProviderError('not_found', `not found: ${d}`);
    const size = Math.max(1, opts.pageSize ?? this.pageSize);
    const after = opts.pageToken;
    let entries: Entry[];
    const snap = this.snapshots.get(d);
    if (after !== undefined && snap && Date.now() - snap.at < SNAPSHOT_TTL_MS) {
      entries = snap.entries;
    } else {
      entries = await this.fetchListing(d, opts.signal);
    }
    // The page token is the last name returned: stable even when the snapshot is refetched.
    const start = after === undefined ? 0 : entries.findIndex((e) => e.name > after);
    const slice = start < 0 ? [] : entries.slice(start, start + size);
    const more = start >= 0 && start + size < entries.length;
    if (more) {
      this.snapshots.delete(d);
      this.snapshots.set(d, { at: Date.now(), entries });
      while (this.snapshots.size > MAX_SNAPSHOTS) {
        const oldest = this.snapshots.keys().next().value;
        if (oldest === undefined) break;
        this.snapshots.delete(oldest);
      }
    } else {
      this.snapshots.delete(d);
    }
    const last = slice[slice.length - 1];
    return more && last ? { entries: slice, nextPageToken: last.name } : { entries: slice };
  }

  async openRead(path: string, opts: ReadOptions = {}): Promise<Readable> {
    const p = cleanPath(path);
    if (this.hidden(p)) throw new ProviderError('not_found', `not found: ${p}`);
    const start = opts.range?.start ?? 0;
    const end = opts.range?.end;
    if (end !== undefined && end < start) return Readable.from([]);
    const headers: Record<string, string> = {};
    if (start > 0 || end !== undefined) headers.range = `bytes=${start}-${end ?? ''}`;
    const res = await this.http.download(this.url(p), headers, opts.signal);
    const status = res.statusCode ?? 0;
    if (status === 416) {
      await drain(res);
      const st = await this.stat(p, opts);
      if (st.kind === 'dir') throw new ProviderError('is_dir', `is a folder: ${p}`);
      return Readable.from([]);
    }
    if (!isOk(res)) {
      const err = await statusError(res, `GET ${p}`);
      // Servers answer a folder's GET with 404 (Apache without an index), 403 or 405.
      const st = await this.stat(p, opts).catch(() => undefined);
      if (st?.kind === 'dir') throw new ProviderError('is_dir', `is a folder: ${p}`);
      throw err;
    }
    const ctype = String(res.headers['content-type'] ?? '');
    if (ctype.startsWith('httpd/unix-directory') || ctype.startsWith('text/html')) {
      // Servers answer a folder's GET with an index page; a real .html file passes this check.
      const st = await this.stat(p, opts);
      if (st.kind === 'dir') {
        res.destroy();
        throw new ProviderError('is_dir', `is a folder: ${p}`);
      }
    }
    const out = keepErrorListener(new PassThrough({ highWaterMark: 256 * 1024 }));
    const stages: NodeJS.ReadWriteStream[] = [];
    if (status === 200 && headers.range)
      stages.push(sliceStream(start, end === undefined ? undefined : end - start + 1));
    pipeline([res, ...stages, out]).catch((err: unknown) => {
      out.destroy(opts.signal?.aborted ? canceled() : toProviderError(err));
    });
    return out;
  }

  /** Creates each missing folder of `dir` (MKCOL), remembering which exist; one request per folder at a time. */
  private ensureDir(dir: string): Promise<void> {
    const d = cleanPath(dir);
    if (this.knownDirs.has(d)) return Promise.resolve();
    let pending = this.dirsInFlight.get(d);
    if (!pending) {
      pending = this.makeDir(d).finally(() => this.dirsInFlight.delete(d));
      this.dirsInFlight.set(d, pending);
    }
    return pending;
  }

  private async makeDir(d: string): Promise<void> {
    // Under a folder known to be missing, its parents first (one request each, none refused).
    if (d !== '/' && this.missingDirs.size > 0 && ancestors(d).some((a) => this.missingDirs.has(a))) {
      await this.ensureDir(parentPath(d));
    }
    const res = await this.http.send({ method: 'MKCOL', url: this.url(d, true) });
    const status = res.statusCode ?? 0;
    if (status === 201) {
      await drain(res);
      this.knownDirs.add(d);
      // Made just now: no temporary file to look for before writing into it.
      this.markSwept(d);
      this.missingDirs.delete(d);
      return;
    }
    if (status === 409) {
      // A parent is missing: make it, then this one.
      await drain(res);
      await this.ensureDir(parentPath(d));
      return this.makeDir(d);
    }
    const err = await statusError(res, `MKCOL ${d}`);
    // Already there (405), or made by someone else meanwhile (some servers answer 403): look.
    // Nothing there: the server refused to make it (a read-only share), a permission error.
    const st = await this.stat(d).catch(() => undefined);
    if (st?.kind === 'dir') return;
    if (st) throw new ProviderError('exists', `a file exists at ${d}`);
    throw err;
  }

  async mkdir(path: string): Promise<void> {
    const p = cleanPath(path);
    for (const seg of pathSegments(p)) {
      checkName(seg);
      if (isTempName(seg)) throw new ProviderError('invalid_name', `reserved name: ${seg}`);
    }
    this.knownDirs.delete(p);
    await this.ensureDir(p);
  }

  private async refuseDirTarget(p: string): Promise<void> {
    try {
      const st = await this.stat(p);
      if (st.kind === 'dir') throw new ProviderError('is_dir', `is a folder: ${p}`);
    } catch (err) {
      if (!ProviderError.is(err, 'not_found')) throw err;
    }
  }

  async put(path: string, body: Readable, src: SrcInfo, opts: WriteOptions = {}): Promise<Entry> {
    const p = cleanPath(path);
    if (p === '/') throw new ProviderError('is_dir', 'is a folder: /');
    const name = baseName(p);
    checkName(name);
    if (isTempName(name)) throw new ProviderError('invalid_name', `reserved name: ${name}`);
    if (opts.signal?.aborted) {
      body.destroy();
      throw canceled();
    }
    const direct = this.vendor !== 'other';
    let tmp: string | undefined;
    let tmpKey: string | undefined;
    let written = 0;
    try {
      await this.ensureDir(parentPath(p));
      if (!direct) {
        await this.sweepBeforeWrite(parentPath(p), opts.signal);
        tmp = joinPath(parentPath(p), tempName(opts.tempTag));
        tmpKey = `${this.accountKey}|${tmp}`;
        activeTemps.add(tmpKey);
      }
      // Into a temporary file, a folder at the path is found by the move (see moveIntoPlace).
      if (!tmp) await this.refuseDirTarget(p);
      const headers: OutgoingHttpHeaders = { 'content-type': src.mimeType ?? 'application/octet-stream' };
      if (src.size >= 0) headers['content-length'] = src.size;
      if (src.modTime && this.mtime === 'x-oc-mtime') headers['x-oc-mtime'] = ocMtime(src.modTime);
      if (direct) {
        if (src.hashes?.sha1) headers['oc-checksum'] = `SHA1:${src.hashes.sha1}`;
        else if (src.hashes?.md5) headers['oc-checksum'] = `MD5:${src.hashes.md5}`;
      }
      const counter = byteCounter(
        (n) => {
          written = n;
          opts.onProgress?.(n);
        },
        src.size,
        p,
      );
      relayErrors(body, counter);
      const res = await this.http.send({
        method: 'PUT',
        url: this.url(tmp ?? p),
        headers,
        body: body.pipe(counter),
        signal: opts.signal,
      });
      if (!isOk(res)) {
        const err = await statusError(res, `PUT ${p}`);
        // A PUT into a folder that is there answered "not found": the share refuses writes
        // (rclone serve --read-only answers so).
        if (res.statusCode === 404 && (await this.stat(parentPath(p)).catch(() => undefined))?.kind === 'dir')
          throw new ProviderError('permission', `the server refuses writes: PUT ${p}`, { serviceCode: 404 });
        throw err;
      }
      await drain(res);
      if (src.size >= 0 && written !== src.size) {
        throw new ProviderError('corrupted', `size mismatch writing ${p}: expected ${src.size}, sent ${written}`);
      }
      if (tmp) {
        await this.moveIntoPlace(tmp, p, opts.signal);
        tmp = undefined;
      }
    } catch (err) {
      body.destroy();
      if (tmp) await this.deleteQuietly(tmp);
      if (opts.signal?.aborted) throw canceled();
      throw toProviderError(err);
    } finally {
      if (tmpKey) activeTemps.delete(tmpKey);
    }
    return this.keepModTime(p, src, await this.statAfterWrite(p), opts.signal);
  }

  /**
   * After a write: the entry as the server keeps it, with the source's time where the server keeps
   * times (set by PROPPATCH where that is how it does). A write whose time did not stick shows the
   * server keeps none after all: `features.setModTime` turns false and the cloud's record says so.
   * A server-side copy (`copy: true`) only reports: servers keep no given time on COPY.
   */
  async keepModTime(p: string, src: SrcInfo, entry: Entry, signal?: AbortSignal, copy = false): Promise<Entry> {
    if (!src.modTime || this.mtime === 'none' || keepsTime(entry.modTime, src.modTime)) return entry;
    if (this.mtime === 'proppatch' && (await proppatchMtime(this, p, src.modTime, signal).catch(() => false))) {
      const set = await this.stat(p, { signal });
      if (keepsTime(set.modTime, src.modTime)) return set;
    }
    if (!copy) await this.mtimeLost();
    return entry;
  }

  private async mtimeLost(): Promise<void> {
    if (this.mtime === 'none') return;
    this.mtime = 'none';
    this.features.setModTime = false;
    await this.onMtimeLost?.().catch(() => undefined);
  }

  /**
   * Stat right after our own write. Servers that replace a file as delete-then-rename (rclone)
   * show nothing there for a moment while a concurrent write to the same path lands: look again.
   */
  async statAfterWrite(p: string): Promise<Entry> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await this.stat(p);
      } catch (err) {
        if (!ProviderError.is(err, 'not_found') || attempt >= 5) throw err;
        await new Promise((r) => setTimeout(r, 20 * 2 ** attempt));
      }
    }
  }

  async removeTemps(dir: string, tag: string, opts: { signal?: AbortSignal } = {}): Promise<number> {
    const d = cleanPath(dir);
    let resources: DavResource[];
    try {
      resources = parseResources(await this.propfind(d, 1, opts.signal));
    } catch (err) {
      if (ProviderError.is(err, 'not_found') || ProviderError.is(err, 'not_dir')) return 0;
      throw err;
    }
    let removed = 0;
    for (const r of resources) {
      const p = this.cloudPath(r.hrefPath);
      if (p === undefined || parentPath(p) !== d || r.isDir || !isTaggedTemp(baseName(p), tag)) continue;
      if (activeTemps.has(`${this.accountKey}|${p}`)) continue;
      const res = await this.http.send({ method: 'DELETE', url: this.url(p), signal: opts.signal });
      if (!isOk(res) && res.statusCode !== 404) throw await statusError(res, `DELETE ${p}`);
      await drain(res);
      removed++;
    }
    return removed;
  }

  async deleteQuietly(path: string): Promise<void> {
    try {
      const res = await this.http.send({ method: 'DELETE', url: this.url(path) });
      await drain(res);
    } catch {
      // best effort: a leftover is hidden from listings anyway
    }
  }

  private send(
    method: 'MOVE' | 'COPY',
    from: string,
    to: string,
    overwrite: boolean,
    isDir: boolean,
    signal?: AbortSignal,
  ): Promise<IncomingMessage> {
    return this.http.send({
      method,
      url: this.url(from, isDir),
      headers: { destination: this.url(to, isDir).href, overwrite: overwrite ? 'T' : 'F', depth: 'infinity' },
      signal,
    });
  }

  /** MOVE or COPY one resource; Overwrite only for files. */
  private async transfer(
    method: 'MOVE' | 'COPY',
    from: string,
    to: string,
    overwrite: boolean,
    isDir: boolean,
    signal?: AbortSignal,
  ): Promise<void> {
    let res = await this.send(method, from, to, overwrite, isDir, signal);
    // A target locked by a concurrent write (423, rclone) frees up quickly: try again a few times.
    for (let attempt = 1; res.statusCode === 423 && attempt <= 6; attempt += 1) {
      await drain(res);
      await new Promise((r) => setTimeout(r, 20 * 2 ** attempt * (0.5 + Math.random())));
      res = await this.send(method, from, to, overwrite, isDir, signal);
    }
    if (isOk(res)) {
      await drain(res);
      return;
    }
    const err = await statusError(res, `${method} ${from} -> ${to}`);
    if (res.statusCode === 412) throw new ProviderError('exists', `already exists: ${to}`, { serviceCode: 412 });
    throw err;
  }

  private async moveRaw(from: string, to: string, overwrite: boolean, signal?: AbortSignal): Promise<void> {
    await this.transfer('MOVE', from, to, overwrite, false, signal);
  }

  /**
   * Moves a finished temporary upload onto its path. First without overwriting: a new file (the
   * common case) needs no look at its path beforehand; something there answers 412, and only a
   * file may then be replaced (MOVE over a folder would delete the folder). When another write
   * replaces the same path at that moment, Apache mod_dav answers the MOVE with 404 or 403 (it
   * deletes the destination the other request already replaced): while our temporary file is
   * still there, try again.
   */
  async moveIntoPlace(tmp: string, p: string, signal?: AbortSignal): Promise<void> {
    let overwrite = false;
    for (let attempt = 0; ; attempt += 1) {
      try {
        await this.moveRaw(tmp, p, overwrite, signal);
        return;
      } catch (err) {
        if (!overwrite && ProviderError.is(err, 'exists')) {
          await this.refuseDirTarget(p);
          overwrite = true;
          continue;
        }
        const raced = ProviderError.is(err, 'not_found') || ProviderError.is(err, 'permission');
        if (!raced || attempt >= 5 || signal?.aborted || !(await this.tempStillThere(tmp, signal))) throw err;
        await new Promise((r) => setTimeout(r, 10 * 2 ** attempt * (0.5 + Math.random())));
      }
    }
  }

  private async tempStillThere(tmp: string, signal?: AbortSignal): Promise<boolean> {
    try {
      return parseResources(await this.propfind(tmp, 0, signal)).length > 0;
    } catch {
      return false;
    }
  }

  forgetDirs(path: string): void {
    for (const d of [...this.knownDirs]) if (d !== '/' && isWithin(path, d)) this.knownDirs.delete(d);
    this.missingDirs.clear();
    this.snapshots.clear();
  }

  async remove(path: string): Promise<void> {
    const p = cleanPath(path);
    if (p === '/') throw new ProviderError('is_dir', 'is a folder: /');
    const st = await this.stat(p);
    if (st.kind === 'dir') throw new ProviderError('is_dir', `is a folder: ${p}`);
    const res = await this.http.send({ method: 'DELETE', url: this.url(p) });
    if (!isOk(res)) throw await statusError(res, `DELETE ${p}`);
    await drain(res);
    this.snapshots.delete(parentPath(p));
  }

  async rmdir(path: string): Promise<void> {
    const p = cleanPath(path);
    if (p === '/') throw new ProviderError('permission', 'refusing to remove the root folder');
    const st = await this.stat(p);
    if (st.kind !== 'dir') throw new ProviderError('not_dir', `not a folder: ${p}`);
    const res = await this.http.send({ method: 'DELETE', url: this.url(p, true) });
    if (!isOk(res)) throw await statusError(res, `DELETE ${p}`);
    await drain(res);
    this.forgetDirs(p);
  }

  async rename(path: string, newName: string): Promise<Entry> {
    const p = cleanPath(path);
    checkName(newName);
    if (p === '/') throw new ProviderError('permission', 'cannot rename the root folder');
    const dst = joinPath(parentPath(p), newName);
    if (dst === p) return this.stat(p);
    const st = await this.stat(p);
    await this.transfer('MOVE', p, dst, false, st.kind === 'dir');
    if (st.kind === 'dir') this.forgetDirs(p);
    this.snapshots.clear();
    return this.stat(dst);
  }

  async move(src: Entry, dst: string, opts: { signal?: AbortSignal } = {}): Promise<Entry> {
    const from = cleanPath(src.path);
    const to = cleanPath(dst);
    if (from === '/' || to === '/') throw new ProviderError('invalid_name', `cannot move ${from} to ${to}`);
    if (to.startsWith(from + '/')) throw new ProviderError('invalid_name', `cannot move ${from} into itself`);
    if (from === to) return this.stat(to, opts);
    const isDir = src.kind === 'dir';
    await this.ensureDir(parentPath(to));
    if (!isDir) await this.refuseDirTarget(to);
    await this.transfer('MOVE', from, to, !isDir, isDir, opts.signal);
    if (isDir) this.forgetDirs(from);
    this.snapshots.clear();
    return this.stat(to, opts);
  }

  async copy(src: Entry, dst: string, opts: { signal?: AbortSignal } = {}): Promise<Entry> {
    const from = cleanPath(src.path);
    const to = cleanPath(dst);
    if (src.kind === 'dir') throw new ProviderError('is_dir', `is a folder: ${from}`);
    if (to === '/') throw new ProviderError('is_dir', 'is a folder: /');
    checkName(baseName(to));
    if (from === to) return this.stat(to, opts);
    await this.ensureDir(parentPath(to));
    await this.refuseDirTarget(to);
    await this.transfer('COPY', from, to, true, false, opts.signal);
    this.snapshots.delete(parentPath(to));
    return this.keepModTime(to, src, await this.stat(to, opts), opts.signal, true);
  }

  /** RFC 4331 quota of the share; empty when the server does not report it. */
  /** Asks for RFC 4331 quota; empty when the server does not report it. */
  async quotaOf(): Promise<About> {
    return this.quota();
  }

  private async quota(): Promise<About> {
    const q = parseQuota(await this.propfind('/', 0, undefined, QUOTA_BODY));
    const about: About = {};
    if (q.used !== undefined) about.used = q.used;
    if (q.available !== undefined) about.free = q.available;
    if (q.used !== undefined && q.available !== undefined) about.total = q.used + q.available;
    return about;
  }

  async hash(path: string, type: HashType, opts: { signal?: AbortSignal } = {}): Promise<string | undefined> {
    const st = await this.stat(path, opts);
    return st.hashes?.[type];
  }

  private async chunkWriter(path: string, src: SrcInfo, opts: TempWriteOptions = {}): Promise<ChunkWriter> {
    const p = cleanPath(path);
    if (p === '/') throw new ProviderError('is_dir', 'is a folder: /');
    const name = baseName(p);
    checkName(name);
    if (isTempName(name)) throw new ProviderError('invalid_name', `reserved name: ${name}`);
    const dir = parentPath(p);
    await this.ensureDir(dir);
    if (this.vendor === 'nextcloud') {
      await this.refuseDirTarget(p);
      return openNextcloudChunkWriter(this, p, src, opts.signal);
    }
    await this.sweepBeforeWrite(dir, opts.signal);
    // A folder at the path is found by the move (see moveIntoPlace).
    const tmp = joinPath(dir, tempName(opts.tempTag));
    const tmpKey = `${this.accountKey}|${tmp}`;
    const probeOnTmp = src.size >= 2;
    const probe = probeOnTmp ? tmp : joinPath(dir, tempName());
    activeTemps.add(tmpKey);
    let ranged = false;
    try {
      ranged = await takesRangedWrites(this, probe, probeOnTmp, opts.signal);
    } finally {
      if (!ranged) activeTemps.delete(tmpKey);
    }
    if (!ranged) {
      throw new ProviderError(
        'not_supported',
        'this WebDAV server does not take ranged writes (PUT with Content-Range)',
      );
    }
    const writer = openRangedChunkWriter(this, p, tmp, src);
    // The temporary file is this process's until the writer is closed or aborted.
    return {
      ...writer,
      close: () => writer.close().finally(() => activeTemps.delete(tmpKey)),
      abort: () => writer.abort().finally(() => activeTemps.delete(tmpKey)),
    };
  }

  /** Called by the chunk writer once the file is in place. */
  async afterChunkedUpload(p: string, src: SrcInfo): Promise<Entry> {
    this.snapshots.delete(parentPath(p));
    return this.keepModTime(p, src, await this.stat(p));
  }

  async close(): Promise<void> {
    this.http.close();
  }
}

function stringOpt(credentials: Record<string, unknown>, key: string): string | undefined {
  const v = credentials[key];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** Finds out whether the server is Nextcloud or ownCloud (their /status.php), else generic. */
/** The pacer's key of a WebDAV account: one login on one share. */
function webdavAccountKey(username: string, base: URL): string {
  return `webdav:${username}@${base.href}`;
}

async function detectVendor(http: DavHttp, base: URL): Promise<WebdavVendor> {
  const i = base.pathname.indexOf('/remote.php/');
  if (i < 0) return 'other';
  const status = new URL(base.href);
  status.pathname = base.pathname.slice(0, i) + '/status.php';
  status.search = '';
  try {
    const res = await http.send({ method: 'GET', url: status, headers: { accept: 'application/json' } });
    if (!isOk(res)) {
      await drain(res);
      return 'other';
    }
    const info = JSON.parse(await text(res)) as { productname?: unknown; installed?: unknown };
    const product = String(info.productname ?? '').toLowerCase();
    if (product.includes('owncloud')) return 'owncloud';
    if (product.includes('nextcloud') || info.installed !== undefined) return 'nextcloud';
  } catch {
    // not a Nextcloud/ownCloud
  }
  return 'other';
}

/**
 * Opens a WebDAV share. Credentials: `url` (the share's base URL, e.g.
 * https://cloud.example.com/remote.php/dav/files/alice/), `username`, `password`; optional `vendor`
 * ("nextcloud", "owncloud", "other"; detected when omitted) and `insecure_skip_verify` (accept any
 * HTTPS certificate: only for a private server with a self-signed certificate).
 */
export async function openWebdav(
  credentials: Record<string, unknown>,
  ctx: ProviderContext = {},
  options: WebdavOptions = {},
): Promise<WebdavProvider> {
  const opts: WebdavOptions = {
    rateLimitPerSecond: ctx.rateLimitPerSecond,
    guard: ctx.outbound,
    timeoutMs: ctx.timeoutMs,
    ...options,
  };
  const rawUrl = stringOpt(credentials, 'url');
  if (!rawUrl) throw new ProviderError('invalid_name', 'a WebDAV URL is required', { retry: 'fatal' });
  let base: URL;
  try {
    base = new URL(rawUrl);
  } catch {
    throw new ProviderError('invalid_name', `not a URL: ${rawUrl}`, { retry: 'fatal' });
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    throw new ProviderError('invalid_name', `not an http(s) URL: ${rawUrl}`, { retry: 'fatal' });
  }
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  base.search = '';
  base.hash = '';
  const username = stringOpt(credentials, 'username') ?? '';
  const password = typeof credentials.password === 'string' ? credentials.password : '';
  const insecure =
    credentials.insecure_skip_verify === true ||
    credentials.insecure_skip_verify === 'true' ||
    opts.insecureSkipVerify === true;
  const vendorOpt = stringOpt(credentials, 'vendor') ?? opts.vendor;
  let vendor: WebdavVendor;
  if (vendorOpt === 'nextcloud' || vendorOpt === 'owncloud' || vendorOpt === 'other') vendor = vendorOpt;
  else {
    // Through the account's pacer: a 5xx or a dropped connection while a server restarts is tried
    // again, instead of taking a Nextcloud for a generic server.
    const probe = new DavHttp(base, username, password, {
      rejectUnauthorized: !insecure,
      pacer: pacerFor(webdavAccountKey(username, base), { rateLimitPerSecond: opts.rateLimitPerSecond }),
      guard: opts.guard,
      timeoutMs: opts.timeoutMs,
    });
    try {
      vendor = await detectVendor(probe, base);
    } finally {
      probe.close();
    }
  }
  const probe = new WebdavProvider(base, username, password, vendor, { ...opts, insecureSkipVerify: insecure });
  let hasQuota: boolean;
  let hasTrash = false;
  let mtime = opts.mtime ?? (vendor === 'other' ? recordedMtime(ctx.state) : undefined);
  const record = async (method: WebdavMtimeMethod) => {
    await ctx.saveState?.({ ...(ctx.state ?? {}), [MTIME_STATE_KEY]: { method, checked_at: Date.now() } });
  };
  try {
    // Checks the address and the login now, so a wrong one fails when the cloud is added.
    const root = await probe.stat('/');
    if (root.kind !== 'dir') throw new ProviderError('not_dir', `not a folder: ${base.href}`, { retry: 'fatal' });
    const q = await probe.quotaOf().catch(() => ({}));
    hasQuota = Object.keys(q).length > 0;
    if (vendor === 'nextcloud') hasTrash = await hasNextcloudTrash(probe);
    if (vendor === 'other' && mtime === undefined) {
      // Once per cloud (kept in its state): whether this server keeps the times it is given.
      mtime = await probeMtime(probe);
      if (mtime) await record(mtime);
    }
  } finally {
    await probe.close();
  }
  return new WebdavProvider(base, username, password, vendor, {
    ...opts,
    insecureSkipVerify: insecure,
    hasQuota,
    hasTrash,
    mtime: mtime ?? (vendor === 'other' ? 'none' : 'x-oc-mtime'),
    ...(vendor === 'other' ? { onMtimeLost: () => record('none') } : {}),
  });
}

/** The folders above `path`, nearest first, not counting the root. */
function ancestors(path: string): string[] {
  const out: string[] = [];
  for (let d = parentPath(path); d !== '/'; d = parentPath(d)) out.push(d);
  return out;
}
