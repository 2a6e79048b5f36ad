import type { Readable } from 'node:stream';
import type { FileEntry, Stats } from 'ssh2';
import { ProviderError, canceled } from '../../api/errors.ts';
import { pacerFor } from '../../pacer.ts';
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
  EntryLink,
  Features,
  HashType,
  ListOptions,
  Page,
  Provider,
  ReadOptions,
  SrcInfo,
  TempWriteOptions,
  WriteOptions,
} from '../../api/types.ts';
import { baseName, checkName, cleanPath, isWithin, joinPath, parentPath, pathSegments } from '../../path.ts';
import { SftpPool, connectSftp, maxWriteLength, type SftpConnection, type SftpLogin } from './connection.ts';
import { sftpError } from './errors.ts';
import { BufferRing, chunksOf, recycle } from '../../recycle.ts';
import { pipelinedReadStream, sftpCall } from './io.ts';
import { untilWindow, writeRequest } from './direct-write.ts';

/** Prefix and exact name of in-progress uploads (temp-files.ts); hidden from listings, never returned by stat. */
export const SFTP_TEMP_PREFIX = TEMP_PREFIX;
export const SFTP_TEMP_NAME = TEMP_NAME;
/** Age from which a temporary file a cut-off upload left is removed (temp-files.ts). */
export const SFTP_STALE_TEMP_MS = STALE_TEMP_MS;

export interface SftpOptions {
  /** Most SSH connections kept open (default 4). */
  maxConnections?: number;
  /** Most SFTP channels over those connections (default 8): each has its own 2 MiB window on OpenSSH. */
  maxChannels?: number;
  /** Bytes of one upload's write requests awaiting the answer (default 2 MiB, OpenSSH's channel window). */
  writeWindow?: number;
  /** Bytes per read/write request and requests in flight per stream (defaults 32 KB and 32). */
  requestSize?: number;
  inFlight?: number;
  /** Page size `list` uses when the caller gives none. */
  pageSize?: number;
  /** Chunk writer: chunk size and parallel chunks. */
  chunkSize?: number;
  concurrency?: number;
  /** Age from which a leftover temporary file is removed (default SFTP_STALE_TEMP_MS). */
  staleTempMs?: number;
}

const DEFAULT_PAGE_SIZE = 1000;
/** Uploads at least this large wait for a channel of their own. */
const LARGE_UPLOAD = 4 * 1024 * 1024;
const SNAPSHOT_TTL_MS = 120_000;
const MAX_SNAPSHOTS = 16;
const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;

function hidden(path: string): boolean {
  return hasTempSegment(path);
}

/**
 * Per account: whether its server takes writes only in order (`rclone serve sftp` without a VFS
 * cache waits a second for a gap to fill, then fails the write with "Illegal seek"). Found out by
 * the first chunk writer of the process (`takesWritesOutOfOrder`).
 */
const sequentialOnly = new Map<string, Promise<boolean>>();

/**
 * SFTP over ssh2: a small pool of SSH connections (the host key is recorded at the first connect
 * and checked on every later one), pipelined reads and writes for throughput, uploads to a hidden
 * temporary name renamed into place (a cancelled upload leaves nothing visible), modification
 * times by setstat, quota by statvfs@openssh.com and server-side copy by the copy-data extension
 * where the server has them.
 */
export class SftpProvider implements Provider {
  readonly kind = 'sftp';
  readonly accountKey: string;
  readonly features: Features;
  readonly hashes: ReadonlySet<HashType> = new Set<HashType>();
  /** The remote folder the cloud's "/" maps to. */
  readonly root: string;
  readonly chunkSize: number;
  readonly concurrency: number;
  private readonly pool: SftpPool;
  private readonly extensions: Record<string, string>;
  private readonly requestSize: number;
  private readonly inFlight: number;
  /** Download buffers, one request each, used again once the final writer gives them back. */
  private readonly readRing: BufferRing;
  private readonly writeWindow: number;
  private readonly pageSize: number;
  private readonly staleTempMs: number;
  private readonly knownDirs = new Set<string>(['/']);
  private readonly dirsInFlight = new Map<string, Promise<void>>();
  private readonly snapshots = new Map<string, { at: number; entries: Entry[] }>();
  /** Server-side copy: only where the server has the copy-data extension. */
  readonly copy?: (src: Entry, dst: string, opts?: TempWriteOptions) => Promise<Entry>;
  /** Disk usage: only where statvfs@openssh.com works. */
  readonly about?: () => Promise<About>;

  constructor(
    pool: SftpPool,
    first: SftpConnection,
    root: string,
    accountKey: string,
    hasStatvfs: boolean,
    opts: SftpOptions = {},
  ) {
    this.pool = pool;
    this.root = root === '/' ? '' : root.replace(/\/+$/, '');
    this.accountKey = accountKey;
    this.extensions = first.extensions;
    this.requestSize = opts.requestSize ?? 32 * 1024;
    this.inFlight = opts.inFlight ?? 32;
    this.readRing = new BufferRing(this.requestSize, this.inFlight * 2);
    this.writeWindow = Math.max(64 * 1024, opts.writeWindow ?? 2 * 1024 * 1024);
    this.pageSize = opts.pageSize ?? DEFAULT_PAGE_SIZE;
    this.staleTempMs = opts.staleTempMs ?? SFTP_STALE_TEMP_MS;
    this.chunkSize = opts.chunkSize ?? 8 * 1024 * 1024;
    this.concurrency = opts.concurrency ?? 4;
    this.features = {
      copy: this.extensions['copy-data'] === '1',
      move: true,
      trash: false,
      about: hasStatvfs,
      chunkWriter: true,
      listRecursive: false,
      setModTime: true,
      caseInsensitive: false,
      bucketBased: false,
      needsSize: false,
      nameLimit: { max: 255, unit: 'bytes' },
    };
    if (this.features.copy) this.copy = (src, dst, o) => this.copyData(src, dst, o);
    if (hasStatvfs) this.about = () => this.diskUsage();
  }

  private remote(path: string): string {
    const p = cleanPath(path);
    return p === '/' ? this.root || '/' : this.root + p;
  }

  private kindOf(st: Stats): 'file' | 'dir' | undefined {
    const t = st.mode & S_IFMT;
    if (t === S_IFDIR) return 'dir';
    if (t === S_IFREG) return 'file';
    return undefined;
  }

  private entryOf(path: string, st: Stats, kind: 'file' | 'dir'): Entry {
    const e: Entry = { path, name: baseName(path), kind, size: kind === 'dir' ? 0 : st.size };
    if (st.mtime) e.modTime = new Date(st.mtime * 1000);
    return e;
  }

  async stat(path: string, opts: { signal?: AbortSignal } = {}): Promise<Entry> {
    const p = cleanPath(path);
    if (hidden(p)) throw new ProviderError('not_found', `not found: ${p}`);
    if (opts.signal?.aborted) throw canceled();
    const st = await this.pool
      .use((c) => sftpCall.stat(c.sftp, this.remote(p)))
      .catch((err: unknown) => {
        throw sftpError(err, p);
      });
    const kind = this.kindOf(st);
    if (!kind) throw new ProviderError('not_found', `not a file or folder: ${p}`);
    if (kind === 'dir') this.knownDirs.add(p);
    return this.entryOf(p, st, kind);
  }

  /** Records that folder `d` was searched for stale temporary files (or is new: it holds none). */
  private markSwept(d: string): void {
    markSwept(`${this.accountKey}|${d}`);
  }

  /**
   * Removes the temporary files a cut-off upload left in folder `d`, given its listing: regular
   * files named exactly as this backend names them, untouched for `staleTempMs`, and not an upload
   * of this process. Never fails: a file it cannot remove stays hidden.
   */
  private async removeStaleTemps(c: SftpConnection, d: string, list: readonly FileEntry[]): Promise<void> {
    this.markSwept(d);
    const cutoff = Date.now() - this.staleTempMs;
    await Promise.all(
      list.map(async (f) => {
        if (!SFTP_TEMP_NAME.test(f.filename) || (f.attrs.mode & S_IFMT) !== S_IFREG) return;
        if (!(f.attrs.mtime * 1000 < cutoff)) return;
        const remote = this.remote(joinPath(d, f.filename));
        if (activeTemps.has(`${this.accountKey}|${remote}`)) return;
        await sftpCall.unlink(c.sftp, remote).catch(() => undefined);
      }),
    );
  }

  /** Before a write: looks for stale temporary files in the folder, at most once every ten minutes. */
  private async sweepBeforeWrite(c: SftpConnection, d: string): Promise<void> {
    if (!sweepDue(`${this.accountKey}|${d}`)) return;
    this.markSwept(d);
    try {
      await this.removeStaleTemps(c, d, await sftpCall.readdir(c.sftp, this.remote(d)));
    } catch {
      // The write goes on; the next listing tries again.
    }
  }

  private async fetchListing(d: string): Promise<Entry[]> {
    const raw = await this.pool
      .use(async (c) => {
        const st = await sftpCall.stat(c.sftp, this.remote(d));
        if (this.kindOf(st) !== 'dir') throw new ProviderError('not_dir', `not a folder: ${d}`);
        const list = await sftpCall.readdir(c.sftp, this.remote(d));
        await this.removeStaleTemps(c, d, list);
        // Links are listed as themselves, with what they resolve to (see Entry.link).
        return Promise.all(
          list.map(async (f) => {
            if (f.filename === '.' || f.filename === '..' || isTempName(f.filename)) return undefined;
            if ((f.attrs.mode & S_IFMT) !== S_IFLNK) return { name: f.filename, st: f.attrs as Stats, link: undefined };
            return { name: f.filename, ...(await this.linkOf(c, `${this.remote(d)}/${f.filename}`, f.attrs as Stats)) };
          }),
        );
      })
      .catch((err: unknown) => {
        throw sftpError(err, d);
      });
    const entries: Entry[] = [];
    for (const r of raw) {
      if (!r) continue;
      if (r.link?.broken) {
        entries.push({ ...this.entryOf(joinPath(d, r.name), r.st, 'file'), size: 0, link: r.link });
        continue;
      }
      const kind = this.kindOf(r.st);
      if (!kind) continue;
      const e = this.entryOf(joinPath(d, r.name), r.st, kind);
      entries.push(r.link ? { ...e, link: r.link } : e);
    }
    this.knownDirs.add(d);
    return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** A link as a listing shows it: what the server resolves it to inside the root, or why it does not. */
  private async linkOf(c: SftpConnection, remote: string, own: Stats): Promise<{ st: Stats; link: EntryLink }> {
    const [st, real] = await Promise.all([
      sftpCall.stat(c.sftp, remote).catch(() => undefined),
      sftpCall.realpath(c.sftp, remote).catch(() => undefined),
    ]);
    if (!st || real === undefined) return { st: own, link: { broken: 'dangling' } };
    const root = this.root || '/';
    const inside = root === '/' ? real.startsWith('/') : real === root || real.startsWith(root + '/');
    if (!inside) return { st: own, link: { broken: 'outside' } };
    const target = root === '/' ? cleanPath(real) : cleanPath(real.slice(root.length) || '/');
    return { st, link: { target } };
  }

  async list(dir: string, opts: ListOptions = {}): Promise<Page> {
    const d = cleanPath(dir);
    if (hidden(d)) throw new ProviderError('not_found', `not found: ${d}`);
    if (opts.signal?.aborted) throw canceled();
    const size = Math.max(1, opts.pageSize ?? this.pageSize);
    const after = opts.pageToken;
    const snap = this.snapshots.get(d);
    const entries =
      after !== undefined && snap && Date.now() - snap.at < SNAPSHOT_TTL_MS ? snap.entries : await this.fetchListing(d);
    // The page token is the last name returned: stable even when the listing is fetched again.
    const start = after === undefined ? 0 : entries.findIndex((e) => e.name > after);
    const slice = start < 0 ? [] : entries.slice(start, start + size);
    const more = start >= 0 && start + size < entries.length;
    this.snapshots.delete(d);
    if (more) {
      this.snapshots.set(d, { at: Date.now(), entries });
      while (this.snapshots.size > MAX_SNAPSHOTS) {
        const oldest = this.snapshots.keys().next().value;
        if (oldest === undefined) break;
        this.snapshots.delete(oldest);
      }
    }
    const last = slice[slice.length - 1];
    return more && last ? { entries: slice, nextPageToken: last.name } : { entries: slice };
  }

  async openRead(path: string, opts: ReadOptions = {}): Promise<Readable> {
    const p = cleanPath(path);
    if (hidden(p)) throw new ProviderError('not_found', `not found: ${p}`);
    if (opts.signal?.aborted) throw canceled();
    const { conn, release } = await this.pool.hold();
    const sftp = conn.sftp;
    let handle: Buffer | undefined;
    try {
      const st = await sftpCall.stat(sftp, this.remote(p));
      const kind = this.kindOf(st);
      if (kind === 'dir') throw new ProviderError('is_dir', `is a folder: ${p}`);
      if (!kind) throw new ProviderError('not_found', `not a file: ${p}`);
      handle = await sftpCall.open(sftp, this.remote(p), 'r');
      const start = opts.range?.start ?? 0;
      const endExcl = Math.min(st.size, opts.range?.end === undefined ? st.size : opts.range.end + 1);
      const h = handle;
      const stream = pipelinedReadStream({
        sftp,
        handle: h,
        start,
        end: Math.max(start, endExcl),
        chunk: this.requestSize,
        inFlight: this.inFlight,
        ring: this.readRing,
        onDone: async () => {
          try {
            await sftpCall.close(sftp, h);
          } finally {
            release();
          }
        },
        mapError: (err) => sftpError(err, p),
      });
      if (opts.signal) {
        const signal = opts.signal;
        const onAbort = () => stream.destroy(canceled());
        signal.addEventListener('abort', onAbort, { once: true });
        stream.once('close', () => signal.removeEventListener('abort', onAbort));
      }
      return stream;
    } catch (err) {
      if (handle) await sftpCall.close(sftp, handle).catch(() => undefined);
      release();
      throw sftpError(err, p);
    }
  }

  /** Creates each missing folder of `dir`, remembering which exist; one request per folder at a time. */
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
    await this.pool.use(async (c) => {
      try {
        await sftpCall.mkdir(c.sftp, this.remote(d));
        // Made just now: no temporary file to look for before writing into it.
        this.markSwept(d);
      } catch (err) {
        // Exists already, or a parent is missing (servers answer both with vague codes): look.
        const st = await sftpCall.stat(c.sftp, this.remote(d)).catch(() => undefined);
        if (st) {
          if (this.kindOf(st) === 'dir') return;
          throw new ProviderError('exists', `a file exists at ${d}`);
        }
        const parent = parentPath(d);
        if (parent === d) throw sftpError(err, d);
        const pst = await sftpCall.stat(c.sftp, this.remote(parent)).catch(() => undefined);
        if (pst && this.kindOf(pst) !== 'dir') throw new ProviderError('not_dir', `not a folder: ${parent}`);
        if (pst) throw sftpError(err, d);
        await this.ensureDir(parent);
        await sftpCall.mkdir(c.sftp, this.remote(d)).catch(async (err2: unknown) => {
          const again = await sftpCall.stat(c.sftp, this.remote(d)).catch(() => undefined);
          if (!again || this.kindOf(again) !== 'dir') throw sftpError(err2, d);
        });
      }
    });
    this.knownDirs.add(d);
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

  private async refuseDirTarget(c: SftpConnection, p: string): Promise<void> {
    const st = await sftpCall.stat(c.sftp, this.remote(p)).catch(() => undefined);
    if (st && this.kindOf(st) === 'dir') throw new ProviderError('is_dir', `is a folder: ${p}`);
  }

  /** Renames a finished temporary file onto its final name, replacing a file there. */
  private async publish(c: SftpConnection, tmpRemote: string, p: string): Promise<void> {
    const target = this.remote(p);
    if (c.extensions['posix-rename@openssh.com'] === '1') {
      await sftpCall.posixRename(c.sftp, tmpRemote, target);
      return;
    }
    try {
      await sftpCall.rename(c.sftp, tmpRemote, target);
    } catch (err) {
      // Plain SFTP rename refuses an existing target: remove it, then rename.
      const st = await sftpCall.lstat(c.sftp, target).catch(() => undefined);
      if (!st) throw err;
      await sftpCall.unlink(c.sftp, target);
      await sftpCall.rename(c.sftp, tmpRemote, target);
    }
  }

  private checkWritable(p: string): void {
    if (p === '/') throw new ProviderError('is_dir', 'is a folder: /');
    const name = baseName(p);
    checkName(name);
    if (isTempName(name)) throw new ProviderError('invalid_name', `reserved name: ${name}`);
  }

  async put(path: string, body: Readable, src: SrcInfo, opts: WriteOptions = {}): Promise<Entry> {
    const p = cleanPath(path);
    this.checkWritable(p);
    if (opts.signal?.aborted) {
      body.destroy();
      throw canceled();
    }
    await this.ensureDir(parentPath(p)).catch((err: unknown) => {
      body.destroy();
      throw err;
    });
    // A large upload keeps a channel (and its flow-control window) to itself when the pool has one.
    const { conn, release } = await this.pool.hold(src.size >= LARGE_UPLOAD);
    const sftp = conn.sftp;
    const tmpRemote = this.remote(joinPath(parentPath(p), tempName(opts.tempTag)));
    const tmpKey = `${this.accountKey}|${tmpRemote}`;
    let handle: Buffer | undefined;
    let published = false;
    // A stalled source must not keep a cancelled upload waiting: end the body on abort.
    const onAbort = () => body.destroy(canceled());
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    let written: Stats | undefined;
    try {
      await this.sweepBeforeWrite(conn, parentPath(p));
      activeTemps.add(tmpKey);
      handle = await sftpCall.open(sftp, tmpRemote, 'w');
      const h = handle;
      let pos = 0;
      let acked = 0;
      let pendingBytes = 0;
      const pending = new Set<Promise<void>>();
      let failure: unknown;
      // Requests no longer than the server takes (ssh2 would send the rest only after the answer).
      const maxRequest = Math.min(maxWriteLength(sftp), 256 * 1024);
      for await (const chunk of chunksOf(body)) {
        if (opts.signal?.aborted) throw canceled();
        if (failure) throw failure;
        const data = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
        let parts = Math.ceil(data.length / maxRequest);
        for (let off = 0; off < data.length; off += maxRequest) {
          const piece = off === 0 && data.length <= maxRequest ? data : data.subarray(off, off + maxRequest);
          // Wait for an answer rather than have ssh2 copy the request into its queue.
          await untilWindow(sftp, h, piece.length, pending);
          if (failure) throw failure;
          pendingBytes += piece.length;
          const w: Promise<void> = writeRequest(sftp, h, piece, pos).then(
            () => {
              pending.delete(w);
              pendingBytes -= piece.length;
              acked += piece.length;
              // Every piece acknowledged: the chunk's buffer can be read into again (recycle.ts).
              if (--parts === 0) recycle(chunk);
              opts.onProgress?.(acked);
            },
            (err: unknown) => {
              pending.delete(w);
              pendingBytes -= piece.length;
              failure ??= err;
            },
          );
          pending.add(w);
          pos += piece.length;
        }
        // A bounded window of bytes in flight: enough to keep the channel's window full, no more
        // (ssh2 queues a copy of everything beyond the server's window).
        while (pendingBytes >= this.writeWindow && pending.size > 0) await Promise.race(pending);
      }
      await Promise.all(pending);
      if (failure) throw failure;
      if (opts.signal?.aborted) throw canceled();
      if (src.size >= 0 && pos !== src.size) {
        throw new ProviderError('corrupted', `size mismatch writing ${p}: expected ${src.size}, got ${pos}`);
      }
      // Times, the size written and the close in one round trip (the requests go out together and
      // a server answers one channel's requests in order). Some servers apply times only on a
      // closed file: set them again by path after the close.
      const modTime = src.modTime;
      const times = modTime ? sftpCall.futimes(sftp, h, new Date(), modTime).catch(() => undefined) : undefined;
      const fstat = sftpCall.fstat(sftp, h).catch(() => undefined);
      handle = undefined;
      const closed = sftpCall.close(sftp, h);
      const retimed = modTime
        ? sftpCall.setstat(sftp, tmpRemote, { atime: new Date(), mtime: modTime }).catch(() => undefined)
        : undefined;
      await Promise.all([times, closed, retimed]);
      written = await fstat;
      try {
        await this.publish(conn, tmpRemote, p);
      } catch (err) {
        // Renaming onto a folder fails on every server; say why.
        await this.refuseDirTarget(conn, p);
        throw err;
      }
      published = true;
    } catch (err) {
      body.destroy();
      if (handle) await sftpCall.close(sftp, handle).catch(() => undefined);
      if (!published) await sftpCall.unlink(sftp, tmpRemote).catch(() => undefined);
      if (opts.signal?.aborted) throw canceled();
      throw sftpError(err, p);
    } finally {
      activeTemps.delete(tmpKey);
      opts.signal?.removeEventListener('abort', onAbort);
      release();
    }
    this.snapshots.delete(parentPath(p));
    // What the server said of the file just before closing it, unless its times do not show yet
    // what was set (a server that answered out of order): then ask again.
    const sameTime = !src.modTime || Math.floor(src.modTime.getTime() / 1000) === written?.mtime;
    if (written && this.kindOf(written) === 'file' && sameTime) return this.entryOf(p, written, 'file');
    return this.stat(p);
  }

  /**
   * Parallel chunks into one temporary file, spread over up to `concurrency` channels (each with
   * its own flow-control window and server process), so one large file is not held to a single
   * channel's window per round trip. The first channel creates the file; the others open it for writing.
   */
  async openChunkWriter(path: string, src: SrcInfo, opts: TempWriteOptions = {}): Promise<ChunkWriter> {
    const p = cleanPath(path);
    this.checkWritable(p);
    await this.ensureDir(parentPath(p));
    if (!(await this.takesWritesOutOfOrder(parentPath(p)))) {
      // The caller streams the file through `put` instead: one write after another, in order.
      throw new ProviderError('not_supported', 'this SFTP server takes writes only in order');
    }
    const first = await this.pool.hold(true);
    const conn = first.conn;
    const sftp = conn.sftp;
    const tmpRemote = this.remote(joinPath(parentPath(p), tempName(opts.tempTag)));
    const tmpKey = `${this.accountKey}|${tmpRemote}`;
    let handle: Buffer;
    try {
      await this.refuseDirTarget(conn, p);
      await this.sweepBeforeWrite(conn, parentPath(p));
      activeTemps.add(tmpKey);
      handle = await sftpCall.open(sftp, tmpRemote, 'w');
    } catch (err) {
      activeTemps.delete(tmpKey);
      first.release();
      throw sftpError(err, p);
    }
    const lanes: { conn: SftpConnection; handle: Buffer; release: () => void }[] = [
      { conn, handle, release: first.release },
    ];
    const extra = await Promise.all(
      Array.from({ length: Math.max(0, this.concurrency - 1) }, async () => {
        const held = await this.pool.hold(true).catch(() => undefined);
        if (!held) return undefined;
        if (held.conn === conn || lanes.some((l) => l.conn === held.conn)) {
          held.release();
          return undefined;
        }
        const h = await sftpCall.open(held.conn.sftp, tmpRemote, 'r+').catch(() => undefined);
        if (!h) {
          held.release();
          return undefined;
        }
        return { conn: held.conn, handle: h, release: held.release };
      }),
    );
    for (const l of extra) {
      if (l && !lanes.some((x) => x.conn === l.conn)) lanes.push(l);
      else if (l) {
        await sftpCall.close(l.conn.sftp, l.handle).catch(() => undefined);
        l.release();
      }
    }
    const h = handle;
    let finished = false;
    const chunkSize = this.chunkSize;
    const closeExtra = async () => {
      for (const l of lanes.slice(1)) {
        await sftpCall.close(l.conn.sftp, l.handle).catch(() => undefined);
        l.release();
      }
    };
    const discard = async () => {
      await closeExtra();
      await sftpCall.close(sftp, h).catch(() => undefined);
      await sftpCall.unlink(sftp, tmpRemote).catch(() => undefined);
      activeTemps.delete(tmpKey);
      first.release();
    };
    return {
      chunkSize,
      concurrency: this.concurrency,
      doneWithDataWhenSettled: true,
      writeChunk: async (index, data, signal) => {
        if (finished) throw new ProviderError('canceled', 'chunk writer is closed');
        if (signal?.aborted || opts.signal?.aborted) throw canceled();
        const lane = lanes[index % lanes.length] as (typeof lanes)[number];
        const requestSize = Math.min(maxWriteLength(lane.conn.sftp), 256 * 1024);
        const base = index * chunkSize;
        const inFlight = new Set<Promise<void>>();
        let failure: unknown;
        for (let off = 0; off < data.length && failure === undefined; off += requestSize) {
          const piece = data.subarray(off, off + requestSize);
          // Wait for an answer rather than have ssh2 copy the request into its queue.
          await untilWindow(lane.conn.sftp, lane.handle, piece.length, inFlight);
          const w: Promise<void> = writeRequest(lane.conn.sftp, lane.handle, piece, base + off).then(
            () => void inFlight.delete(w),
            (err: unknown) => {
              inFlight.delete(w);
              failure ??= err;
            },
          );
          inFlight.add(w);
        }
        await Promise.all(inFlight);
        if (failure !== undefined) throw sftpError(failure, p);
      },
      close: async () => {
        if (finished) throw new ProviderError('canceled', 'chunk writer is closed');
        finished = true;
        try {
          if (opts.signal?.aborted) throw canceled();
          await closeExtra();
          lanes.length = 1;
          const st = await sftpCall.fstat(sftp, h);
          if (src.size >= 0 && st.size !== src.size) {
            throw new ProviderError('corrupted', `size mismatch writing ${p}: expected ${src.size}, got ${st.size}`);
          }
          if (src.modTime) await sftpCall.futimes(sftp, h, new Date(), src.modTime).catch(() => undefined);
          await sftpCall.close(sftp, h);
          if (src.modTime) {
            await sftpCall.setstat(sftp, tmpRemote, { atime: new Date(), mtime: src.modTime }).catch(() => undefined);
          }
          await this.publish(conn, tmpRemote, p);
        } catch (err) {
          await discard();
          throw sftpError(err, p);
        }
        activeTemps.delete(tmpKey);
        first.release();
        this.snapshots.delete(parentPath(p));
        return this.stat(p);
      },
      abort: async () => {
        if (finished) return;
        finished = true;
        await discard();
      },
    };
  }

  /**
   * Whether the server takes a write beyond the end of a new file (the chunk writer's writes land
   * in any order): asked once per account and process, with one byte written at offset 1 of a
   * temporary file in folder `dir`, which is removed again. A server that refuses it (`rclone serve
   * sftp` on its defaults fails it with "Illegal seek" after waiting a second for the gap to fill)
   * gets its large files through `put`, whose writes go out in order.
   */
  private takesWritesOutOfOrder(dir: string): Promise<boolean> {
    let known = sequentialOnly.get(this.accountKey);
    if (!known) {
      known = this.pool
        .use(async (c) => {
          const probe = this.remote(joinPath(dir, tempName()));
          const key = `${this.accountKey}|${probe}`;
          activeTemps.add(key);
          try {
            const h = await sftpCall.open(c.sftp, probe, 'w');
            const wrote = await writeRequest(c.sftp, h, Buffer.from([0]), 1).then(
              () => true,
              () => false,
            );
            await sftpCall.close(c.sftp, h).catch(() => undefined);
            return !wrote;
          } finally {
            await sftpCall.unlink(c.sftp, probe).catch(() => undefined);
            activeTemps.delete(key);
          }
        })
        .catch(() => false);
      sequentialOnly.set(this.accountKey, known);
    }
    return known.then((sequential) => !sequential);
  }

  async removeTemps(dir: string, tag: string, opts: { signal?: AbortSignal } = {}): Promise<number> {
    const d = cleanPath(dir);
    if (opts.signal?.aborted) throw canceled();
    return this.pool
      .use(async (c) => {
        let list: FileEntry[];
        try {
          list = await sftpCall.readdir(c.sftp, this.remote(d));
        } catch (err) {
          const e = sftpError(err, d);
          if (e.code === 'not_found' || e.code === 'not_dir') return 0;
          throw e;
        }
        let removed = 0;
        for (const f of list) {
          if (!isTaggedTemp(f.filename, tag) || (f.attrs.mode & S_IFMT) !== S_IFREG) continue;
          const remote = this.remote(joinPath(d, f.filename));
          if (activeTemps.has(`${this.accountKey}|${remote}`)) continue;
          await sftpCall.unlink(c.sftp, remote).then(
            () => void removed++,
            (err: unknown) => {
              if (sftpError(err, d).code !== 'not_found') throw err;
            },
          );
        }
        return removed;
      })
      .catch((err: unknown) => {
        throw sftpError(err, d);
      });
  }

  async remove(path: string): Promise<void> {
    const p = cleanPath(path);
    if (p === '/') throw new ProviderError('is_dir', 'is a folder: /');
    if (hidden(p)) throw new ProviderError('not_found', `not found: ${p}`);
    await this.pool
      .use(async (c) => {
        const st = await sftpCall.lstat(c.sftp, this.remote(p));
        if (this.kindOf(st) === 'dir') throw new ProviderError('is_dir', `is a folder: ${p}`);
        await sftpCall.unlink(c.sftp, this.remote(p));
      })
      .catch((err: unknown) => {
        throw sftpError(err, p);
      });
    this.snapshots.delete(parentPath(p));
  }

  /** Deletes a remote tree depth-first, several requests at a time. */
  private async removeTree(c: SftpConnection, remote: string): Promise<void> {
    const list = await sftpCall.readdir(c.sftp, remote);
    const items = list.filter((f) => f.filename !== '.' && f.filename !== '..');
    for (let i = 0; i < items.length; i += 32) {
      await Promise.all(
        items.slice(i, i + 32).map(async (f) => {
          const child = `${remote}/${f.filename}`;
          if ((f.attrs.mode & S_IFMT) === S_IFDIR) await this.removeTree(c, child);
          else await sftpCall.unlink(c.sftp, child);
        }),
      );
    }
    await sftpCall.rmdir(c.sftp, remote);
  }

  private forget(path: string): void {
    for (const d of [...this.knownDirs]) if (d !== '/' && isWithin(path, d)) this.knownDirs.delete(d);
    this.snapshots.clear();
  }

  async rmdir(path: string): Promise<void> {
    const p = cleanPath(path);
    if (p === '/') throw new ProviderError('permission', 'refusing to remove the root folder');
    if (hidden(p)) throw new ProviderError('not_found', `not found: ${p}`);
    await this.pool
      .use(async (c) => {
        const st = await sftpCall.lstat(c.sftp, this.remote(p));
        if (this.kindOf(st) !== 'dir') throw new ProviderError('not_dir', `not a folder: ${p}`);
        await this.removeTree(c, this.remote(p));
      })
      .catch((err: unknown) => {
        throw sftpError(err, p);
      });
    this.forget(p);
  }

  private async moveInside(from: string, to: string, replaceFile: boolean): Promise<void> {
    if (hidden(from)) throw new ProviderError('not_found', `not found: ${from}`);
    if (from === '/' || to === '/') throw new ProviderError('invalid_name', `cannot move ${from} to ${to}`);
    if (to.startsWith(from + '/')) throw new ProviderError('invalid_name', `cannot move ${from} into itself`);
    checkName(baseName(to));
    await this.ensureDir(parentPath(to));
    await this.pool
      .use(async (c) => {
        const srcSt = await sftpCall.lstat(c.sftp, this.remote(from));
        const dstSt = await sftpCall.lstat(c.sftp, this.remote(to)).catch(() => undefined);
        const srcIsDir = this.kindOf(srcSt) === 'dir';
        if (dstSt) {
          if (!replaceFile || srcIsDir || this.kindOf(dstSt) === 'dir') {
            throw new ProviderError('exists', `already exists: ${to}`);
          }
          await this.publish(c, this.remote(from), to);
        } else {
          await sftpCall.rename(c.sftp, this.remote(from), this.remote(to));
        }
        if (srcIsDir) this.forget(from);
      })
      .catch((err: unknown) => {
        throw sftpError(err, from);
      });
    this.snapshots.clear();
  }

  async rename(path: string, newName: string): Promise<Entry> {
    const p = cleanPath(path);
    checkName(newName);
    if (p === '/') throw new ProviderError('permission', 'cannot rename the root folder');
    const dst = joinPath(parentPath(p), newName);
    if (dst === p) return this.stat(p);
    await this.moveInside(p, dst, false);
    return this.stat(dst);
  }

  async move(src: Entry, dst: string): Promise<Entry> {
    const from = cleanPath(src.path);
    const to = cleanPath(dst);
    if (from === to) return this.stat(to);
    await this.moveInside(from, to, src.kind === 'file');
    return this.stat(to);
  }

  private async copyData(src: Entry, dst: string, opts: TempWriteOptions = {}): Promise<Entry> {
    const from = cleanPath(src.path);
    const to = cleanPath(dst);
    if (src.kind === 'dir') throw new ProviderError('is_dir', `is a folder: ${from}`);
    this.checkWritable(to);
    if (from === to) return this.stat(to);
    await this.ensureDir(parentPath(to));
    const tmpRemote = this.remote(joinPath(parentPath(to), tempName(opts.tempTag)));
    const tmpKey = `${this.accountKey}|${tmpRemote}`;
    activeTemps.add(tmpKey);
    await this.pool
      .use(async (c) => {
        await this.refuseDirTarget(c, to);
        const srcSt = await sftpCall.stat(c.sftp, this.remote(from));
        if (this.kindOf(srcSt) === 'dir') throw new ProviderError('is_dir', `is a folder: ${from}`);
        const rh = await sftpCall.open(c.sftp, this.remote(from), 'r');
        let wh: Buffer | undefined;
        try {
          wh = await sftpCall.open(c.sftp, tmpRemote, 'w');
          if (opts.signal?.aborted) throw canceled();
          await sftpCall.copyData(c.sftp, rh, wh);
          await sftpCall.futimes(c.sftp, wh, new Date(), new Date(srcSt.mtime * 1000)).catch(() => undefined);
          await sftpCall.close(c.sftp, wh);
          wh = undefined;
          await this.publish(c, tmpRemote, to);
        } catch (err) {
          if (wh) await sftpCall.close(c.sftp, wh).catch(() => undefined);
          await sftpCall.unlink(c.sftp, tmpRemote).catch(() => undefined);
          throw err;
        } finally {
          await sftpCall.close(c.sftp, rh).catch(() => undefined);
        }
      })
      .catch((err: unknown) => {
        throw sftpError(err, from);
      })
      .finally(() => activeTemps.delete(tmpKey));
    this.snapshots.delete(parentPath(to));
    return this.stat(to);
  }

  private async diskUsage(): Promise<About> {
    const info = await this.pool
      .use((c) => sftpCall.statvfs(c.sftp, this.remote('/')))
      .catch((err: unknown) => {
        throw sftpError(err, '/');
      });
    const unit = info.f_frsize || info.f_bsize;
    return {
      total: info.f_blocks * unit,
      used: (info.f_blocks - info.f_bfree) * unit,
      free: info.f_bavail * unit,
    };
  }

  /** Open SFTP channels and SSH connections (diagnostics). */
  poolCounts(): { channels: number; connections: number } {
    return this.pool.counts();
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}

function str(credentials: Record<string, unknown>, key: string): string | undefined {
  const v = credentials[key];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/**
 * Opens an SFTP cloud. Credentials: `host`, `port` (default 22), `username`, and `password` or
 * `private_key` (OpenSSH or PEM, with `passphrase` when encrypted); optional `root` (the remote
 * folder shown as "/", default the login's start folder). The server's host key is recorded in
 * `ctx.state.host_key` at the first connect and every later connection must present the same key.
 */
export async function openSftp(
  credentials: Record<string, unknown>,
  ctx: ProviderContext = {},
  opts: SftpOptions = {},
): Promise<SftpProvider> {
  const host = str(credentials, 'host');
  if (!host) throw new ProviderError('invalid_name', 'an SFTP host is required', { retry: 'fatal' });
  // Forms send an empty port when the default is meant.
  const rawPort = credentials.port;
  const port = rawPort === undefined || rawPort === null || rawPort === '' ? 22 : Number(rawPort);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new ProviderError('invalid_name', `bad port: ${String(credentials.port)}`, { retry: 'fatal' });
  }
  const username = str(credentials, 'username');
  if (!username) throw new ProviderError('invalid_name', 'an SFTP username is required', { retry: 'fatal' });
  const password = typeof credentials.password === 'string' ? credentials.password : undefined;
  const privateKey = str(credentials, 'private_key');
  if (password === undefined && !privateKey) {
    throw new ProviderError('auth_invalid', 'a password or a private key is required');
  }
  const known = ctx.state?.host_key;
  const login: SftpLogin = { host, port, username };
  if (password !== undefined) login.password = password;
  if (privateKey) login.privateKey = privateKey;
  const passphrase = str(credentials, 'passphrase');
  if (passphrase) login.passphrase = passphrase;
  if (typeof known === 'string' && known) login.knownHostKey = known;
  if (ctx.outbound) login.guard = ctx.outbound;
  if (ctx.timeoutMs !== undefined) login.readyTimeoutMs = login.idleTimeoutMs = ctx.timeoutMs;
  const first = await connectSftp(login);
  try {
    if (!login.knownHostKey) await ctx.saveState?.({ ...(ctx.state ?? {}), host_key: first.hostKey });
    const wanted = str(credentials, 'root');
    const root = await sftpCall.realpath(first.sftp, wanted ?? '.').catch((err: unknown) => {
      throw sftpError(err, wanted ?? '.');
    });
    const st = await sftpCall.stat(first.sftp, root).catch((err: unknown) => {
      throw sftpError(err, root);
    });
    if ((st.mode & S_IFMT) !== S_IFDIR) throw new ProviderError('not_dir', `not a folder: ${root}`, { retry: 'fatal' });
    // Some servers announce statvfs@openssh.com but answer "unsupported": try it once.
    const hasStatvfs =
      first.extensions['statvfs@openssh.com'] === '2' &&
      (await sftpCall.statvfs(first.sftp, root).then(
        () => true,
        () => false,
      ));
    const accountKey = `sftp:${username}@${host}:${port}${root}`;
    const pacer = pacerFor(accountKey, {
      rateLimitPerSecond: ctx.rateLimitPerSecond,
      mapError: (err) => sftpError(err, root),
    });
    const maxConnections = Math.max(1, opts.maxConnections ?? 4);
    const pool = new SftpPool(login, maxConnections, pacer, Math.max(maxConnections, opts.maxChannels ?? 8));
    pool.adopt(first);
    return new SftpProvider(pool, first, root, accountKey, hasStatvfs, opts);
  } catch (err) {
    first.client.end();
    throw err;
  }
}
