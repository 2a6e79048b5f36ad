import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  futimesSync,
  lstatSync,
  openSync,
  readSync,
  realpathSync,
  renameSync,
  unlinkSync,
  writeSync,
  type Stats,
} from 'node:fs';
import {
  copyFile,
  lstat,
  mkdir,
  open,
  readFile,
  readdir,
  realpath,
  rename,
  rm,
  stat,
  statfs,
  unlink,
  utimes,
  writeFile,
  type FileHandle,
} from 'node:fs/promises';
import { isAbsolute, join, sep } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ProviderError, canceled, toProviderError } from '../../api/errors.ts';
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
  TrashEntry,
  TrashPage,
  WriteOptions,
} from '../../api/types.ts';
import { hashFile } from '../../hashing.ts';
import { baseName, checkName, cleanPath, joinPath, parentPath, pathSegments, restoredName } from '../../path.ts';
import { fsError } from './errors.ts';
import { HashFsError, hashPool, type HashScope } from './hash-pool.ts';
import { RealFolders } from './real-folders.ts';
import { mapLimit } from '../../map-limit.ts';
import { SMALL_FILE_READ_SIZE, fileReadRing, fileReadStream, fileWriteStream, recycle } from '../../recycle.ts';
import {
  STALE_TEMP_MS,
  TEMP_NAME,
  TEMP_PREFIX,
  activeTemps,
  isTaggedTemp,
  isTempName,
  markSwept,
  sweepDue,
  tempName,
} from '../../temp-files.ts';

/** Prefix and exact name of in-progress writes (temp-files.ts); hidden from listings, never returned by stat. */
export const LOCAL_TEMP_PREFIX = TEMP_PREFIX;
export const LOCAL_TEMP_NAME = TEMP_NAME;
/** Age from which a temporary file a cut-off write left is removed (temp-files.ts). */
export const LOCAL_STALE_TEMP_MS = STALE_TEMP_MS;
/** Folder at the top of the root holding trashed items; hidden from listings. */
export const LOCAL_TRASH_DIR = '.skyferry-trash';
/** Beside each trashed item: where it was and when it went (as freedesktop's trash keeps an info file). */
const TRASH_INFO = '.skyferry-trashinfo.json';
/** The name of one trashed item's folder in the trash (a time and a random tag). */
const TRASH_STAMP = /^[0-9A-Za-z-]{8,64}$/;

const DEFAULT_PAGE_SIZE = 1000;
const STAT_CONCURRENCY = 32;
/** Names stated synchronously between two looks at whether the event loop is due a turn. */
const STAT_SLICE = 64;
/**
 * Files up to this size are hashed from one synchronous realpath, open, stat, read and close (a few
 * microseconds each from the page cache) instead of a stream through libuv's thread pool (seven
 * trips of about 25 µs each here), holding the event loop for a fraction of a millisecond. Small
 * files are read whole (`readSmall`) and written whole (`putSmall`, `copy`) the same way. A disk
 * that makes half of such calls slow (over `syncHashBudgetMs`: a network or spinning disk, a cold
 * cache; see SyncDisk) gets the streamed ways for a while, so the event loop stays free.
 */
const SMALL_HASH_MAX = 128 * 1024;
/** The first pause of synchronous calls after they were found slow; it doubles while they stay slow, up to the longest. */
const SLOW_DISK_FIRST_PAUSE_MS = 1000;
const SLOW_DISK_LONGEST_PAUSE_MS = 60_000;
/** This many calls after a pause without finding the disk slow again: the next pause is the first again. */
const SYNC_CALLS_TO_FORGIVE = 256;
/** The buffer of those reads (one at a time: they are synchronous). */
let smallHashBuffer: Buffer | undefined;
/** Files read whole are at most this large: one byte less than the ring's buffers, so growth shows. */
const SMALL_READ_MAX = SMALL_FILE_READ_SIZE - 1;

/** Back-to-back synchronous disk work holds the event loop at most this long before it gets a turn. */
const SYNC_SLICE_MS = 5;
let sliceStarted = 0;

/** Callers waiting for the next turn, in order; and those a turn resumed whose slice others had used, first. */
let waiting: Array<() => void> = [];
let passedOver: Array<() => void> = [];
let turnScheduled = false;

function turnCame(): void {
  turnScheduled = false;
  sliceStarted = performance.now();
  const all = passedOver.concat(waiting);
  passedOver = [];
  waiting = [];
  for (const resume of all) resume();
}

/**
 * A turn for the event loop once synchronous disk work has held it for a slice: small files whose
 * every step completes at once would otherwise follow one another in microtasks, and timers,
 * sockets and requests would wait until the whole run is done. Undefined when no turn is due.
 * Every caller waits for the same turn, and the slice starts once, when it comes. Callers check
 * again where they go on, just before the work (`for (let t = turnDue(); t; t = turnDue(true))
 * await t;`): the files in flight resume together, and those that find the slice used up by the
 * ones before them (`resumed`) wait for the next turn ahead of the others, so one slice bounds
 * them all and each gets its share.
 */
export function turnDue(resumed = false): Promise<void> | undefined {
  if (!turnScheduled && performance.now() - sliceStarted < SYNC_SLICE_MS) return undefined;
  return new Promise((resolve) => {
    (resumed ? passedOver : waiting).push(resolve);
    if (!turnScheduled) {
      turnScheduled = true;
      setImmediate(turnCame);
    }
  });
}

/** How many of the latest synchronous calls SyncDisk weighs, and how many of them slow make a slow disk. */
const SYNC_WINDOW = 16;
const SYNC_SLOW_OF_WINDOW = 8;

/**
 * Whether this disk answers synchronous calls quickly (see SMALL_HASH_MAX): a slow disk is one where
 * half of the latest calls took longer than the budget. A few slow calls among fast ones, even in
 * a row, are this process waiting for a core on a busy machine (or a collection), not the disk. A
 * burst of slow calls (another program flushing its writes) pauses the synchronous calls for a
 * second; a disk that stays slow is tried again after pauses that double up to a minute.
 */
export class SyncDisk {
  private readonly budgetMs: number;
  private until = 0;
  private pauseMs: number;
  private readonly firstPauseMs: number;
  /** The latest calls, slow (1) or not (0), as a ring. */
  private readonly window = new Uint8Array(SYNC_WINDOW);
  private at = 0;
  private slow = 0;
  private calls = 0;
  constructor(budgetMs: number, firstPauseMs = SLOW_DISK_FIRST_PAUSE_MS) {
    this.budgetMs = budgetMs;
    this.firstPauseMs = firstPauseMs;
    this.pauseMs = firstPauseMs;
  }
  usable(): boolean {
    return this.until === 0 || Date.now() >= this.until;
  }
  /** How long one synchronous call took (`started` from performance.now()). */
  took(started: number): void {
    const slow = performance.now() - started > this.budgetMs ? 1 : 0;
    this.slow += slow - (this.window[this.at] as number);
    this.window[this.at] = slow;
    this.at = (this.at + 1) % SYNC_WINDOW;
    if (++this.calls === SYNC_CALLS_TO_FORGIVE) this.pauseMs = this.firstPauseMs;
    if (this.slow >= SYNC_SLOW_OF_WINDOW) {
      this.window.fill(0);
      this.slow = 0;
      this.calls = 0;
      this.until = Date.now() + this.pauseMs;
      this.pauseMs = Math.min(this.pauseMs * 2, SLOW_DISK_LONGEST_PAUSE_MS);
    }
  }
}

/** The source changed while it was read (never retried: the next run copies the new version). */
function changedWhileRead(p: string): ProviderError {
  return new ProviderError('corrupted', `${p} changed while it was read`, {
    retry: 'no_retry',
    serviceCode: 'source_changed',
  });
}

/** A path that cannot be resolved: a file standing where a folder should, or a loop of links, is not found. */
function resolveError(err: unknown, path: string): ProviderError {
  const code = (err as { code?: string }).code;
  if (code === 'ENOTDIR' || code === 'ELOOP') return new ProviderError('not_found', `not found: ${path}`);
  return fsError(err, path);
}

/** For each signal waited on: its one abort listener's callers (a listener each would cost more than the hash of a small file). */
const abortWaiters = new WeakMap<AbortSignal, Set<() => void>>();

/** `work`'s answer, or a rejection as soon as `signal` aborts (the work itself runs on). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(canceled());
    if (signal.aborted) return onAbort();
    let waiters = abortWaiters.get(signal);
    if (!waiters) {
      const all = new Set<() => void>();
      abortWaiters.set(signal, (waiters = all));
      signal.addEventListener(
        'abort',
        () => {
          for (const f of all) f();
          all.clear();
        },
        { once: true },
      );
    }
    const set = waiters;
    set.add(onAbort);
    work.then(
      (v) => {
        set.delete(onAbort);
        resolve(v);
      },
      (e: unknown) => {
        set.delete(onAbort);
        reject(e as Error);
      },
    );
  });
}

/**
 * A small file's hash (md5, sha1 or sha256, as hex) from one synchronous open-stat-read-close, or
 * undefined when it is larger than SMALL_HASH_MAX (it is then streamed). Throws the file system's
 * error, or is_dir.
 */
function hashSmallSync(real: string, p: string, type: 'md5' | 'sha1' | 'sha256'): string | undefined {
  // Not blocking: a named pipe put where a file was listed opens at once, and is refused.
  const fd = openSync(real, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    if (st.isDirectory()) throw new ProviderError('is_dir', `is a folder: ${p}`);
    if (!st.isFile()) throw new ProviderError('not_supported', `not a regular file: ${p}`);
    if (st.size > SMALL_HASH_MAX) return undefined;
    const buf = (smallHashBuffer ??= Buffer.allocUnsafe(SMALL_HASH_MAX + 1));
    let got = 0;
    for (;;) {
      const n = readSync(fd, buf, got, buf.length - got, got);
      if (n === 0) break;
      got += n;
      // Grown past the limit since the stat: streamed instead.
      if (got > SMALL_HASH_MAX) return undefined;
    }
    return createHash(type).update(buf.subarray(0, got)).digest('hex');
  } finally {
    closeSync(fd);
  }
}

export interface LocalOptions {
  /** Names differing only in case are one file here (detected at open when not given). */
  caseInsensitive?: boolean;
  /** Chunk size of the chunk writer (bytes). */
  chunkSize?: number;
  /** Age from which a leftover temporary file is removed (default LOCAL_STALE_TEMP_MS). */
  staleTempMs?: number;
  /** How many chunks the engine may write at once. */
  concurrency?: number;
  /** Half of the latest synchronous small-file calls (hash, read, write) slower than this (ms) make them stream for a while. Default 5. */
  syncHashBudgetMs?: number;
  /** Hash on worker threads where the machine has more than one CPU (default true; false: on the event loop's thread). */
  hashThreads?: boolean;
  /** Real paths never served even inside the root (the server's own files): refused as outside it. */
  protectedPaths?: readonly string[];
}

function isHidden(name: string, atRoot: boolean): boolean {
  return isTempName(name) || (atRoot && name === LOCAL_TRASH_DIR);
}

function within(root: string, real: string): boolean {
  return root === sep || real === root || real.startsWith(root + sep);
}

/**
 * A folder on the server's own disk, confined to one root: every path is resolved to its real path
 * (following links) and refused with `permission` when it lands outside the root. Writes go to a
 * hidden temporary file in the target folder and are renamed into place only when complete.
 */
export class LocalProvider implements Provider {
  readonly kind = 'local';
  readonly accountKey: string;
  readonly features: Features = {
    copy: true,
    move: true,
    trash: true,
    about: true,
    chunkWriter: true,
    listRecursive: true,
    setModTime: true,
    // Times are read and set as JavaScript dates: to the millisecond.
    modTimePrecisionMs: 1,
    caseInsensitive: false,
    bucketBased: false,
    needsSize: false,
    nameLimit: { max: 255, unit: 'bytes' },
  };
  readonly hashes: ReadonlySet<HashType> = new Set<HashType>(['md5', 'sha1', 'sha256']);
  /** Files a comparison of folders asks hashes of at once: enough for batches of 64 and more per thread (hash-pool.ts). */
  readonly hashesAtOnce = 256;
  /** The real path of the root folder. */
  readonly root: string;
  readonly chunkSize: number;
  readonly concurrency: number;
  readonly staleTempMs: number;
  private readonly protectedPaths: readonly string[];
  /** Whether small files are read, written and hashed with synchronous calls. */
  private readonly syncDisk: SyncDisk;
  private readonly hashThreads: boolean;
  /** What the hashing threads may open: the root, without the protected paths. */
  private readonly hashScope: HashScope;
  /** Folders' real paths for the small-file calls (one per file otherwise). */
  private readonly folders = new RealFolders();

  constructor(realRoot: string, opts: LocalOptions = {}) {
    this.root = realRoot;
    this.accountKey = `local:${realRoot}`;
    this.staleTempMs = opts.staleTempMs ?? LOCAL_STALE_TEMP_MS;
    this.syncDisk = new SyncDisk(opts.syncHashBudgetMs ?? 5);
    this.hashThreads = opts.hashThreads ?? true;
    this.protectedPaths = opts.protectedPaths ?? [];
    this.hashScope = { root: realRoot, shut: this.protectedPaths };
    this.chunkSize = opts.chunkSize ?? 8 * 1024 * 1024;
    this.concurrency = opts.concurrency ?? 4;
    this.features.caseInsensitive = opts.caseInsensitive ?? false;
  }

  /**
   * The real path for a cloud path whose parents exist; throws `permission` when outside the root.
   * `follow` false: the item itself, not what a link there points to; `deleting` also refuses a
   * path that passes through a link (what is deleted is never reached through one).
   */
  private async realOf(path: string, follow = true, deleting = false): Promise<string> {
    const segs = pathSegments(path);
    if (segs.length === 0) return this.root;
    const lexical = join(this.root, ...segs);
    let real: string;
    try {
      if (follow) {
        real = await realpath(lexical);
      } else {
        // The item itself (not what a link points to) inside its real parent folder.
        const parentLexical = join(this.root, ...segs.slice(0, -1));
        const parentReal = await realpath(parentLexical);
        // The root is a real path: a parent that resolves elsewhere is reached through a link.
        if (deleting && parentReal !== parentLexical) {
          throw new ProviderError('permission', `refusing to delete through a symbolic link: ${path}`);
        }
        real = join(parentReal, segs[segs.length - 1] as string);
        // Items that links lead out of the root are invisible and untouchable, like everything outside.
        this.confine(await realpath(real), path);
      }
    } catch (err) {
      if (err instanceof ProviderError) throw err;
      throw resolveError(err, path);
    }
    this.confine(real, path);
    return real;
  }

  /**
   * `realOf` (following links) without a trip through the thread pool, for the small-file calls:
   * the folder's real path (`folders`), and the file's own only when it is a link.
   */
  private realOfSync(path: string): string {
    const segs = pathSegments(path);
    if (segs.length === 0) return this.root;
    let real: string;
    try {
      const name = segs.pop() as string;
      real = join(segs.length === 0 ? this.root : this.folders.resolve(join(this.root, ...segs)), name);
      if (lstatSync(real).isSymbolicLink()) real = realpathSync.native(real);
    } catch (err) {
      throw resolveError(err, path);
    }
    this.confine(real, path);
    return real;
  }

  private confine(real: string, path: string): void {
    if (!within(this.root, real) || this.isProtected(real)) {
      throw new ProviderError('permission', `outside the allowed folder: ${path}`);
    }
  }

  private isProtected(real: string): boolean {
    return this.protectedPaths.some((p) => real === p || real.startsWith(p + sep));
  }

  /** Removing or moving a folder that holds a protected path would take it along: refused. */
  private confineTree(real: string, path: string): void {
    this.confine(real, path);
    if (this.protectedPaths.some((p) => p.startsWith(real + sep))) {
      throw new ProviderError('permission', `holds a folder the server keeps: ${path}`);
    }
  }

  /** Creates the folders of `path` as needed and returns the real path of the last one. */
  private async mkdirp(path: string): Promise<string> {
    let cur = this.root;
    const done: string[] = [];
    for (const seg of pathSegments(path)) {
      done.push(seg);
      const cloudPath = '/' + done.join('/');
      if (done.length === 1 && seg === LOCAL_TRASH_DIR) {
        throw new ProviderError('invalid_name', `reserved name: ${seg}`);
      }
      const next = join(cur, seg);
      let st: Stats | undefined;
      try {
        st = await lstat(next);
      } catch (err) {
        if ((err as { code?: string }).code !== 'ENOENT') throw fsError(err, cloudPath);
      }
      if (!st) {
        try {
          await mkdir(next);
        } catch (err) {
          if ((err as { code?: string }).code !== 'EEXIST') throw fsError(err, cloudPath);
        }
        st = await lstat(next).catch((err: unknown) => {
          throw fsError(err, cloudPath);
        });
      }
      if (st.isSymbolicLink()) {
        const real = await realpath(next).catch((err: unknown) => {
          throw fsError(err, cloudPath);
        });
        this.confine(real, cloudPath);
        st = await stat(real);
        cur = real;
      } else {
        this.confine(next, cloudPath);
        cur = next;
      }
      if (!st.isDirectory()) throw new ProviderError('not_dir', `not a folder: ${cloudPath}`);
    }
    return cur;
  }

  /**
   * Removes the temporary files a cut-off write left in a folder: only regular files named exactly
   * as this backend names them, untouched for `staleTempMs`, and not a write of this process.
   * `names` is the folder's listing when the caller has read it; without it the folder is read,
   * at most once every ten minutes. Never fails: a file it cannot remove stays hidden.
   */
  private async sweepStaleTemps(dirReal: string, names?: readonly string[]): Promise<void> {
    const now = Date.now();
    if (!names && !sweepDue(dirReal, now)) return;
    markSwept(dirReal, now);
    const all = names ?? (await readdir(dirReal).catch(() => [] as string[]));
    const cutoff = now - this.staleTempMs;
    await Promise.all(
      all
        .filter((n) => LOCAL_TEMP_NAME.test(n))
        .map(async (n) => {
          const full = join(dirReal, n);
          if (activeTemps.has(full)) return;
          try {
            const st = await lstat(full);
            if (st.isFile() && st.mtimeMs < cutoff) await unlink(full);
          } catch {
            // Gone meanwhile, or not ours to remove.
          }
        }),
    );
  }

  private entryOf(path: string, st: Stats): Entry {
    const p = cleanPath(path);
    const dir = st.isDirectory();
    return {
      path: p,
      name: baseName(p),
      kind: dir ? 'dir' : 'file',
      size: dir ? 0 : st.size,
      modTime: new Date(Math.floor(st.mtimeMs)),
    };
  }

  async stat(path: string): Promise<Entry> {
    const p = cleanPath(path);
    if (this.isHiddenPath(p)) throw new ProviderError('not_found', `not found: ${p}`);
    const real = await this.realOf(p);
    const st = await stat(real).catch((err: unknown) => {
      throw fsError(err, p);
    });
    return this.entryOf(p, st);
  }

  private isHiddenPath(p: string): boolean {
    const segs = pathSegments(p);
    return segs.some((s, i) => isHidden(s, i === 0));
  }

  async list(dir: string, opts: ListOptions = {}): Promise<Page> {
    const d = cleanPath(dir);
    if (this.isHiddenPath(d)) throw new ProviderError('not_found', `not found: ${d}`);
    const real = await this.realOf(d);
    const st = await stat(real).catch((err: unknown) => {
      throw fsError(err, d);
    });
    if (!st.isDirectory()) throw new ProviderError('not_dir', `not a folder: ${d}`);
    if (opts.signal?.aborted) throw canceled();
    let names: string[];
    try {
      names = await readdir(real);
    } catch (err) {
      throw fsError(err, d);
    }
    if (!opts.pageToken) await this.sweepStaleTemps(real, names);
    const atRoot = d === '/';
    names = names.filter((n) => !isHidden(n, atRoot)).sort();
    // The page token is the last name returned: stable when entries are added or removed meanwhile.
    const after = opts.pageToken;
    const start = after === undefined ? 0 : names.findIndex((n) => n > after);
    const size = Math.max(1, opts.pageSize ?? DEFAULT_PAGE_SIZE);
    const slice = start < 0 ? [] : names.slice(start, start + size);
    const unlisted: NonNullable<Page['unlisted']> = [];
    type Stated = { st: Stats; link: EntryLink | undefined } | undefined;
    const stats: Stated[] = new Array<Stated>(slice.length);
    // What the synchronous lstat did not settle (links, errors, a slow disk) is stated here.
    const rest: number[] = [];
    const known = await this.lstatSlices(real, slice);
    // Every index, not `forEach`: the names no slice reached are holes in `known`, which it skips.
    for (let i = 0; i < slice.length; i++) {
      const st = known[i];
      if (!st || st.isSymbolicLink()) rest.push(i);
      else if (!this.isProtected(join(real, slice[i] as string))) stats[i] = { st, link: undefined };
    }
    await mapLimit(rest, STAT_CONCURRENCY, async (i) => {
      stats[i] = await this.statListed(real, d, slice[i] as string, unlisted);
    });
    if (opts.signal?.aborted) throw canceled();
    const entries: Entry[] = [];
    slice.forEach((name, i) => {
      const s = stats[i];
      if (!s) return;
      if (s.link) {
        // A link that leads nowhere here is listed as a file of its own (nothing to list inside).
        const e = s.link.broken
          ? { ...this.entryOf(joinPath(d, name), s.st), kind: 'file' as const, size: 0 }
          : this.entryOf(joinPath(d, name), s.st);
        if (s.link.broken || s.st.isFile() || s.st.isDirectory()) entries.push({ ...e, link: s.link });
      } else if (s.st.isFile() || s.st.isDirectory()) entries.push(this.entryOf(joinPath(d, name), s.st));
    });
    const last = slice[slice.length - 1];
    const more = start >= 0 && start + size < names.length;
    const page: Page = more && last !== undefined ? { entries, nextPageToken: last } : { entries };
    if (unlisted.length > 0) page.unlisted = unlisted;
    return page;
  }

  /** One listed name's lstat (and where a link leads), or undefined: vanished, or not to be shown. */
  private async statListed(
    real: string,
    d: string,
    name: string,
    unlisted: NonNullable<Page['unlisted']>,
  ): Promise<{ st: Stats; link: EntryLink | undefined } | undefined> {
    const full = join(real, name);
    try {
      const ls = await lstat(full);
      if (!ls.isSymbolicLink()) return this.isProtected(full) ? undefined : { st: ls, link: undefined };
      // A link to the server's own files is not shown at all: its name would say where they are.
      if (this.isProtected(await realpath(full).catch(() => full))) return undefined;
      return await this.linkOf(full, ls);
    } catch {
      // A name that is not valid UTF-8 reads back with U+FFFD in it and cannot be found so: it
      // is reported, not left out unseen.
      if (name.includes('\uFFFD'))
        unlisted.push({ name, message: `a name that is not valid UTF-8: ${joinPath(d, name)}` });
      return undefined; // vanished meanwhile
    }
  }

  /**
   * Each name's lstat from synchronous calls, in slices of STAT_SLICE that share the event loop as
   * the small-file calls do (see turnDue), on a disk that answers them quickly (about 2 µs each
   * from the kernel's cache, against a promise and two thread hops each through libuv's pool). A
   * name left undefined (vanished, unreadable, or the disk found slow) is stated the async way.
   */
  private async lstatSlices(real: string, names: readonly string[]): Promise<(Stats | undefined)[]> {
    const out: (Stats | undefined)[] = new Array<Stats | undefined>(names.length);
    for (let at = 0; at < names.length && this.syncDisk.usable(); at += STAT_SLICE) {
      for (let t = turnDue(); t; t = turnDue(true)) await t;
      const started = performance.now();
      const end = Math.min(names.length, at + STAT_SLICE);
      for (let i = at; i < end; i++) {
        try {
          out[i] = lstatSync(join(real, names[i] as string), { throwIfNoEntry: false });
        } catch {
          // Left to the async lstat, which reports it.
        }
      }
      // The slice counts as one call against the budget for one call: a slow disk shows the same.
      this.syncDisk.took(started);
    }
    return out;
  }

  /** A link as a listing shows it: what it resolves to inside the root, or why it does not. */
  private async linkOf(full: string, ls: Stats): Promise<{ st: Stats; link: EntryLink }> {
    let target: string;
    try {
      target = await realpath(full);
    } catch (err) {
      const broken = (err as { code?: string }).code === 'ELOOP' ? 'loop' : 'dangling';
      return { st: ls, link: { broken } };
    }
    if (!within(this.root, target)) return { st: ls, link: { broken: 'outside' } };
    try {
      const st = await stat(target);
      const rel =
        target === this.root
          ? '/'
          : '/' +
            target
              .slice(this.root.length + 1)
              .split(sep)
              .join('/');
      return { st, link: { target: rel } };
    } catch {
      return { st: ls, link: { broken: 'dangling' } };
    }
  }

  async *listRecursive(dir: string, opts: { signal?: AbortSignal } = {}): AsyncIterable<Entry[]> {
    const queue = [cleanPath(dir)];
    while (queue.length > 0) {
      const d = queue.shift() as string;
      let pageToken: string | undefined;
      do {
        const page = await this.list(d, { signal: opts.signal, pageToken });
        for (const e of page.entries) if (e.kind === 'dir' && !e.link) queue.push(e.path);
        if (page.entries.length > 0) yield page.entries;
        pageToken = page.nextPageToken;
      } while (pageToken !== undefined);
    }
  }

  async openRead(path: string, opts: ReadOptions = {}): Promise<Readable> {
    const p = cleanPath(path);
    if (this.isHiddenPath(p)) throw new ProviderError('not_found', `not found: ${p}`);
    const real = await this.realOf(p);
    let fh: FileHandle;
    try {
      fh = await open(real, 'r');
    } catch (err) {
      throw fsError(err, p);
    }
    const st = await fh.stat();
    if (st.isDirectory()) {
      await fh.close();
      throw new ProviderError('is_dir', `is a folder: ${p}`);
    }
    const start = opts.range?.start ?? 0;
    const end = opts.range?.end;
    if (start >= st.size || (end !== undefined && end < start)) {
      await fh.close();
      return Readable.from([]);
    }
    const last = Math.min(end ?? Infinity, st.size - 1);
    // A file written to while it was read is not what its listing described: say so (never retried).
    const atEnd = async () => {
      const now = await fh.stat();
      if (now.size !== st.size || now.mtimeMs !== st.mtimeMs) {
        throw new ProviderError('corrupted', `${p} changed while it was read`, {
          retry: 'no_retry',
          serviceCode: 'source_changed',
        });
      }
    };
    return fileReadStream(
      fh,
      { start, ...(end !== undefined ? { end } : {}), signal: opts.signal, atEnd },
      fileReadRing(last - start + 1),
    );
  }

  /**
   * A small file's bytes and stat from synchronous calls (see SMALL_HASH_MAX), read into a buffer
   * of the shared small-file ring; undefined when it is larger than `max`.
   */
  private readSmallSync(p: string, max: number): { data: Buffer; st: Stats } | undefined {
    const real = this.realOfSync(p);
    const ring = fileReadRing(SMALL_FILE_READ_SIZE);
    const buffer = ring.take();
    let fd: number | undefined;
    let lent = false;
    try {
      fd = openSync(real, 'r');
      const st = fstatSync(fd);
      if (st.isDirectory()) throw new ProviderError('is_dir', `is a folder: ${p}`);
      if (st.size > Math.min(max, SMALL_READ_MAX)) return undefined;
      let got = 0;
      for (;;) {
        const n = readSync(fd, buffer, got, buffer.length - got, got);
        if (n === 0) break;
        got += n;
        if (got === buffer.length) break;
      }
      // Written to since the stat (the buffer has room for one byte more than the largest file read so).
      if (got !== st.size) throw changedWhileRead(p);
      lent = true;
      return { data: ring.lend(buffer, got), st };
    } catch (err) {
      throw fsError(err, p);
    } finally {
      if (!lent) ring.putBack(buffer);
      if (fd !== undefined) closeSync(fd);
    }
  }

  /**
   * Reads a small file whole, from synchronous calls on a disk that answers them quickly: one call
   * instead of a stream's open, stat, reads, stat and close through the thread pool. Undefined when
   * the file is larger than `max` (or than SMALL_READ_MAX), or the disk was found slow: stream it.
   */
  async readSmall(path: string, max: number, opts: ReadOptions = {}): Promise<Buffer | undefined> {
    if (opts.signal?.aborted) throw canceled();
    const p = cleanPath(path);
    if (this.isHiddenPath(p)) throw new ProviderError('not_found', `not found: ${p}`);
    if (!this.syncDisk.usable()) return undefined;
    for (let t = turnDue(); t; t = turnDue(true)) await t;
    const started = performance.now();
    try {
      return this.readSmallSync(p, max)?.data;
    } finally {
      this.syncDisk.took(started);
    }
  }

  /** The real path of an existing folder, from synchronous calls; undefined when it is not there (yet). */
  private folderSync(path: string): string | undefined {
    const segs = pathSegments(path);
    if (segs.length === 0) return this.root;
    let real: string;
    try {
      real = this.folders.resolve(join(this.root, ...segs));
    } catch {
      return undefined; // made, or its error told, by mkdirp
    }
    if (segs[0] === LOCAL_TRASH_DIR) return undefined;
    this.confine(real, path);
    return real;
  }

  /** `putSmall`'s synchronous part: the temporary file written, timed, checked and renamed into place. */
  private writeSmallSync(p: string, dirReal: string, data: Buffer, modTime: Date | undefined, tag?: string): Stats {
    const target = join(dirReal, baseName(p));
    this.confine(target, p);
    const tmp = join(dirReal, tempName(tag));
    activeTemps.add(tmp);
    try {
      const fd = openSync(tmp, 'wx');
      let st: Stats;
      try {
        for (let off = 0; off < data.length;) off += writeSync(fd, data, off, data.length - off);
        if (modTime) futimesSync(fd, new Date(), modTime);
        st = fstatSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(tmp, target);
      return st;
    } catch (err) {
      try {
        unlinkSync(tmp);
      } catch {
        // not made, or gone
      }
      // A file cannot take a folder's place (rename says EISDIR here, EPERM elsewhere).
      if (lstatSync(target, { throwIfNoEntry: false })?.isDirectory()) {
        throw new ProviderError('is_dir', `is a folder: ${p}`);
      }
      throw fsError(err, p);
    } finally {
      activeTemps.delete(tmp);
    }
  }

  /**
   * Writes a small file from memory, as `put` does from a stream, with synchronous calls on a
   * disk that answers them quickly (a temporary file opened, written, timed, stated, closed and
   * renamed, all at once: no thread-pool trips, no stream). Gives `data` back to its ring.
   */
  async putSmall(path: string, data: Buffer, src: SrcInfo, opts: WriteOptions = {}): Promise<Entry> {
    if (!this.syncDisk.usable() || data.length > SMALL_HASH_MAX) {
      return this.put(path, Readable.from([data], { objectMode: false }), src, opts);
    }
    const p = cleanPath(path);
    if (p === '/') throw new ProviderError('is_dir', 'is a folder: /');
    checkName(baseName(p));
    if (opts.signal?.aborted) throw canceled();
    if (src.size >= 0 && data.length !== src.size) {
      throw new ProviderError('corrupted', `size mismatch writing ${p}: expected ${src.size}, got ${data.length}`);
    }
    for (let t = turnDue(); t; t = turnDue(true)) await t;
    const dir = parentPath(p);
    const dirReal = this.folderSync(dir) ?? (await this.mkdirp(dir));
    if (sweepDue(dirReal)) await this.sweepStaleTemps(dirReal);
    const started = performance.now();
    let st: Stats;
    try {
      st = this.writeSmallSync(p, dirReal, data, src.modTime, opts.tempTag);
    } finally {
      this.syncDisk.took(started);
    }
    opts.onProgress?.(data.length);
    recycle(data);
    return this.entryOf(p, st);
  }

  async put(path: string, body: Readable, src: SrcInfo, opts: WriteOptions = {}): Promise<Entry> {
    const p = cleanPath(path);
    const name = baseName(p);
    if (p === '/') throw new ProviderError('is_dir', 'is a folder: /');
    checkName(name);
    if (opts.signal?.aborted) {
      body.destroy();
      throw canceled();
    }
    const dirReal = await this.mkdirp(parentPath(p));
    const target = join(dirReal, name);
    this.confine(target, p);
    await this.refuseDirTarget(target, p);
    await this.sweepStaleTemps(dirReal);
    const tmp = join(dirReal, tempName(opts.tempTag));
    activeTemps.add(tmp);
    let written = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        written += chunk.length;
        opts.onProgress?.(written);
        cb(null, chunk);
      },
    });
    try {
      const fh = await open(tmp, 'wx');
      await pipeline(body, counter, fileWriteStream(fh), { signal: opts.signal });
      if (src.size >= 0 && written !== src.size) {
        throw new ProviderError('corrupted', `size mismatch writing ${p}: expected ${src.size}, got ${written}`);
      }
      if (src.modTime) await utimes(tmp, new Date(), src.modTime);
      await rename(tmp, target);
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      body.destroy();
      if (opts.signal?.aborted) throw canceled();
      throw fsError(err, p);
    } finally {
      activeTemps.delete(tmp);
    }
    return this.stat(p);
  }

  private async refuseDirTarget(target: string, p: string): Promise<void> {
    try {
      const st = await lstat(target);
      if (st.isDirectory()) throw new ProviderError('is_dir', `is a folder: ${p}`);
    } catch (err) {
      if (err instanceof ProviderError) throw err;
      if ((err as { code?: string }).code !== 'ENOENT') throw fsError(err, p);
    }
  }

  async mkdir(path: string): Promise<void> {
    const p = cleanPath(path);
    try {
      await this.mkdirp(p);
    } catch (err) {
      // A file where the last folder should be is an `exists` conflict, not a broken parent.
      if (ProviderError.is(err, 'not_dir') && err.message === `not a folder: ${p}`) {
        throw new ProviderError('exists', `a file exists at ${p}`);
      }
      throw err;
    }
  }

  async remove(path: string): Promise<void> {
    const p = cleanPath(path);
    if (this.isHiddenPath(p) || p === '/') throw new ProviderError('not_found', `not found: ${p}`);
    const real = await this.realOf(p, false, true);
    const st = await lstat(real).catch((err: unknown) => {
      throw fsError(err, p);
    });
    if (st.isDirectory()) throw new ProviderError('is_dir', `is a folder: ${p}`);
    await unlink(real).catch((err: unknown) => {
      throw fsError(err, p);
    });
  }

  async rmdir(path: string): Promise<void> {
    const p = cleanPath(path);
    if (p === '/') throw new ProviderError('permission', 'refusing to remove the root folder');
    if (this.isHiddenPath(p)) throw new ProviderError('not_found', `not found: ${p}`);
    const real = await this.realOf(p, false, true);
    this.confineTree(real, p);
    const st = await stat(real).catch((err: unknown) => {
      throw fsError(err, p);
    });
    if (!st.isDirectory()) throw new ProviderError('not_dir', `not a folder: ${p}`);
    // rm never follows links inside the tree: a link to elsewhere is removed, not what it points to.
    await rm(real, { recursive: true, force: false }).catch((err: unknown) => {
      throw fsError(err, p);
    });
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
    const d = cleanPath(dst);
    await this.moveInside(cleanPath(src.path), d, src.kind === 'file');
    return this.stat(d);
  }

  private async moveInside(from: string, to: string, replaceFile: boolean): Promise<void> {
    if (this.isHiddenPath(from)) throw new ProviderError('not_found', `not found: ${from}`);
    if (to === '/' || from === '/') throw new ProviderError('invalid_name', `cannot move ${from} to ${to}`);
    if (to.startsWith(from + '/')) throw new ProviderError('invalid_name', `cannot move ${from} into itself`);
    const real = await this.realOf(from, false);
    this.confineTree(real, from);
    const srcSt = await lstat(real);
    const dirReal = await this.mkdirp(parentPath(to));
    const target = join(dirReal, baseName(to));
    this.confine(target, to);
    checkName(baseName(to));
    try {
      const dstSt = await lstat(target);
      const sameItem = dstSt.ino === srcSt.ino && dstSt.dev === srcSt.dev; // a change of case only
      if (!sameItem && !(replaceFile && dstSt.isFile() && !srcSt.isDirectory())) {
        throw new ProviderError('exists', `already exists: ${to}`);
      }
    } catch (err) {
      if (err instanceof ProviderError) throw err;
      if ((err as { code?: string }).code !== 'ENOENT') throw fsError(err, to);
    }
    await rename(real, target).catch((err: unknown) => {
      throw fsError(err, to);
    });
  }

  async copy(src: Entry, dst: string, opts: TempWriteOptions = {}): Promise<Entry> {
    const from = cleanPath(src.path);
    const d = cleanPath(dst);
    if (this.isHiddenPath(from)) throw new ProviderError('not_found', `not found: ${from}`);
    // A small file goes whole through memory, with synchronous calls (see putSmall).
    if (src.kind === 'file' && src.size >= 0 && src.size <= SMALL_READ_MAX && this.syncDisk.usable()) {
      for (let t = turnDue(); t; t = turnDue(true)) await t;
      const started = performance.now();
      let small: { data: Buffer; st: Stats } | undefined;
      try {
        small = this.readSmallSync(from, SMALL_READ_MAX);
      } finally {
        this.syncDisk.took(started);
      }
      if (small) return this.putSmall(d, small.data, { size: small.data.length, modTime: small.st.mtime }, opts);
    }
    const real = await this.realOf(from);
    const st = await stat(real).catch((err: unknown) => {
      throw fsError(err, from);
    });
    if (st.isDirectory()) throw new ProviderError('is_dir', `is a folder: ${from}`);
    if (opts.signal?.aborted) throw canceled();
    const dirReal = await this.mkdirp(parentPath(d));
    const target = join(dirReal, checkName(baseName(d)));
    this.confine(target, d);
    await this.refuseDirTarget(target, d);
    const tmp = join(dirReal, tempName(opts.tempTag));
    try {
      await copyFile(real, tmp, constants.COPYFILE_FICLONE);
      await utimes(tmp, new Date(), st.mtime);
      if (opts.signal?.aborted) throw canceled();
      await rename(tmp, target);
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      throw fsError(err, d);
    }
    return this.stat(d);
  }

  async about(): Promise<About> {
    const s = await statfs(this.root);
    const total = s.blocks * s.bsize;
    const free = s.bavail * s.bsize;
    return { total, free, used: total - s.bfree * s.bsize };
  }

  /**
   * Moves an item into `<root>/.skyferry-trash/<time>-<random>/<its path>`, with a note of where it
   * was and when (listTrash, restoreTrash).
   */
  async trash(path: string): Promise<void> {
    const p = cleanPath(path);
    if (p === '/') throw new ProviderError('permission', 'refusing to trash the root folder');
    if (this.isHiddenPath(p)) throw new ProviderError('not_found', `not found: ${p}`);
    const real = await this.realOf(p, false, true);
    this.confineTree(real, p);
    const stamp = new Date().toISOString().replace(/[:.]/g, '-') + '-' + randomBytes(3).toString('hex');
    const trashRoot = await this.trashRoot(true);
    const bin = join(trashRoot, stamp, ...pathSegments(parentPath(p)));
    await mkdir(bin, { recursive: true });
    await writeFile(join(trashRoot, stamp, TRASH_INFO), JSON.stringify({ path: p, deleted_at: Date.now() }));
    await rename(real, join(bin, baseName(p))).catch(async (err: unknown) => {
      await rm(join(trashRoot, stamp), { recursive: true, force: true }).catch(() => undefined);
      throw fsError(err, p);
    });
  }

  /** The real path of the trash folder (made when `create`); undefined when there is none. */
  private async trashRoot(create = false): Promise<string> {
    const dir = join(this.root, LOCAL_TRASH_DIR);
    if (create) await mkdir(dir, { recursive: true });
    const st = await lstat(dir).catch((err: unknown) => {
      if ((err as { code?: string }).code === 'ENOENT') return undefined;
      throw fsError(err, `/${LOCAL_TRASH_DIR}`);
    });
    if (!st) throw new ProviderError('not_found', 'the trash is empty');
    // The trash is a folder of the root itself, never a link to elsewhere.
    if (!st.isDirectory()) throw new ProviderError('permission', `${LOCAL_TRASH_DIR} is not a folder`);
    this.confineTree(dir, `/${LOCAL_TRASH_DIR}`);
    return dir;
  }

  /** One trashed item: its stamp folder's note, or (trashed without one) the single path inside it. */
  private async trashItem(trashRoot: string, stamp: string): Promise<(TrashEntry & { real: string }) | undefined> {
    if (!TRASH_STAMP.test(stamp)) return undefined;
    const folder = join(trashRoot, stamp);
    let original: string | undefined;
    let deletedAt: Date | undefined;
    try {
      const note = JSON.parse(await readFile(join(folder, TRASH_INFO), 'utf8')) as {
        path?: unknown;
        deleted_at?: unknown;
      };
      if (typeof note.path === 'string') original = cleanPath(note.path);
      if (typeof note.deleted_at === 'number') deletedAt = new Date(note.deleted_at);
    } catch {
      // Trashed before notes were kept: the item is the end of the chain of single folders.
      const segs: string[] = [];
      for (let cur = folder; ;) {
        const names = (await readdir(cur).catch(() => [] as string[])).filter((n) => n !== TRASH_INFO);
        if (names.length !== 1) break;
        const name = names[0] as string;
        segs.push(name);
        cur = join(cur, name);
        const st = await lstat(cur).catch(() => undefined);
        if (!st?.isDirectory()) break;
      }
      if (segs.length > 0) original = '/' + segs.join('/');
    }
    if (!original || original === '/') return undefined;
    const real = join(folder, ...pathSegments(original));
    const st = await lstat(real).catch(() => undefined);
    if (!st) return undefined;
    const kind = st.isDirectory() ? 'dir' : 'file';
    return {
      id: stamp,
      name: baseName(original),
      originalPath: original,
      kind,
      size: kind === 'dir' ? 0 : st.size,
      deletedAt: deletedAt ?? new Date(Math.floor(st.ctimeMs)),
      real,
    };
  }

  async listTrash(): Promise<TrashPage> {
    let trashRoot: string;
    try {
      trashRoot = await this.trashRoot();
    } catch (err) {
      if (ProviderError.is(err, 'not_found')) return { entries: [] };
      throw err;
    }
    const stamps = await readdir(trashRoot).catch((err: unknown) => {
      throw fsError(err, `/${LOCAL_TRASH_DIR}`);
    });
    const items = await mapLimit(stamps, STAT_CONCURRENCY, (stamp) => this.trashItem(trashRoot, stamp));
    const entries: TrashEntry[] = [];
    for (const item of items) {
      if (!item) continue;
      const { real: _real, ...entry } = item;
      entries.push(entry);
    }
    entries.sort((a, b) => (b.deletedAt?.getTime() ?? 0) - (a.deletedAt?.getTime() ?? 0));
    return { entries };
  }

  async restoreTrash(id: string): Promise<Entry> {
    const trashRoot = await this.trashRoot().catch((err: unknown) => {
      throw ProviderError.is(err, 'not_found') ? new ProviderError('not_found', `not in the trash: ${id}`) : err;
    });
    const item = await this.trashItem(trashRoot, id);
    if (!item?.originalPath) throw new ProviderError('not_found', `not in the trash: ${id}`);
    const original = item.originalPath;
    // Back where it was, or beside it under "name (restored)" when that name is taken again.
    let target = original;
    for (let n = 1; await this.exists(target); n++) {
      target = joinPath(parentPath(original), restoredName(item.name, item.kind, n));
    }
    const dirReal = await this.mkdirp(parentPath(target));
    const targetReal = join(dirReal, baseName(target));
    this.confine(targetReal, target);
    await rename(item.real, targetReal).catch((err: unknown) => {
      throw fsError(err, target);
    });
    await rm(join(trashRoot, id), { recursive: true, force: true });
    return this.stat(target);
  }

  private async exists(path: string): Promise<boolean> {
    try {
      await this.stat(path);
      return true;
    } catch (err) {
      if (ProviderError.is(err, 'not_found') || ProviderError.is(err, 'not_dir')) return false;
      throw err;
    }
  }

  async purgeTrash(id: string): Promise<void> {
    if (!TRASH_STAMP.test(id)) throw new ProviderError('not_found', `not in the trash: ${id}`);
    const trashRoot = await this.trashRoot();
    const folder = join(trashRoot, id);
    if (!(await lstat(folder).catch(() => undefined))) throw new ProviderError('not_found', `not in the trash: ${id}`);
    await rm(folder, { recursive: true, force: true }).catch((err: unknown) => {
      throw fsError(err, `/${LOCAL_TRASH_DIR}/${id}`);
    });
  }

  async emptyTrash(): Promise<void> {
    let trashRoot: string;
    try {
      trashRoot = await this.trashRoot();
    } catch (err) {
      if (ProviderError.is(err, 'not_found')) return;
      throw err;
    }
    for (const name of await readdir(trashRoot)) {
      await rm(join(trashRoot, name), { recursive: true, force: true }).catch((err: unknown) => {
        throw fsError(err, `/${LOCAL_TRASH_DIR}/${name}`);
      });
    }
  }

  async removeTemps(dir: string, tag: string): Promise<number> {
    const d = cleanPath(dir);
    let dirReal: string;
    let names: string[];
    try {
      dirReal = await this.realOf(d);
      names = await readdir(dirReal);
    } catch (err) {
      const e = fsError(err, d);
      if (e.code === 'not_found' || e.code === 'not_dir') return 0;
      throw e;
    }
    let removed = 0;
    for (const n of names) {
      const full = join(dirReal, n);
      if (!isTaggedTemp(n, tag) || activeTemps.has(full)) continue;
      const st = await lstat(full).catch(() => undefined);
      if (!st?.isFile()) continue;
      try {
        await unlink(full);
        removed++;
      } catch (err) {
        if ((err as { code?: string }).code !== 'ENOENT') throw fsError(err, joinPath(d, n));
      }
    }
    return removed;
  }

  /** Computes a hash of a file's content (local files carry no stored hashes). */
  async hash(path: string, type: HashType, opts: { signal?: AbortSignal } = {}): Promise<string | undefined> {
    if (!this.hashes.has(type)) return undefined;
    if (opts.signal?.aborted) throw canceled();
    const p = cleanPath(path);
    if (this.isHiddenPath(p)) throw new ProviderError('not_found', `not found: ${p}`);
    const pool = this.hashThreads ? hashPool() : null;
    if (pool) {
      // The worker resolves the path itself and refuses what lies outside (see hash-pool.ts).
      const lexical = sep === '/' && this.root !== sep ? this.root + (p === '/' ? '' : p) : join(this.root, p);
      try {
        return await untilAborted(pool.hash(this.hashScope, lexical, type as 'md5' | 'sha1' | 'sha256'), opts.signal);
      } catch (err) {
        if (opts.signal?.aborted) throw canceled();
        if (!(err instanceof HashFsError)) throw err;
        if (err.code === 'EOUTSIDE') throw new ProviderError('permission', `outside the allowed folder: ${p}`);
        if (err.code === 'ENOTREG') throw new ProviderError('not_supported', `not a regular file: ${p}`);
        throw resolveError(err, p);
      }
    }
    if (this.syncDisk.usable()) {
      for (let t = turnDue(); t; t = turnDue(true)) await t;
      const started = performance.now();
      const real = this.realOfSync(p);
      let small: string | undefined;
      try {
        small = hashSmallSync(real, p, type as 'md5' | 'sha1' | 'sha256');
      } catch (err) {
        throw fsError(err, p);
      } finally {
        this.syncDisk.took(started);
      }
      if (small !== undefined) return small;
    }
    try {
      return await hashFile(await this.openRead(path, { signal: opts.signal }), type);
    } catch (err) {
      // A cancel reaches the reading as the stream's AbortError.
      if (opts.signal?.aborted) throw canceled();
      throw err;
    }
  }

  async openChunkWriter(path: string, src: SrcInfo, opts: TempWriteOptions = {}): Promise<ChunkWriter> {
    const p = cleanPath(path);
    const name = checkName(baseName(p));
    if (opts.signal?.aborted) throw canceled();
    const dirReal = await this.mkdirp(parentPath(p));
    const target = join(dirReal, name);
    this.confine(target, p);
    await this.refuseDirTarget(target, p);
    await this.sweepStaleTemps(dirReal);
    const tmp = join(dirReal, tempName(opts.tempTag));
    const fh = await open(tmp, 'wx').catch((err: unknown) => {
      throw fsError(err, p);
    });
    activeTemps.add(tmp);
    const chunkSize = this.chunkSize;
    let finished = false;
    const discard = async () => {
      if (finished) return;
      finished = true;
      activeTemps.delete(tmp);
      await fh.close().catch(() => undefined);
      await unlink(tmp).catch(() => undefined);
    };
    return {
      chunkSize,
      concurrency: this.concurrency,
      doneWithDataWhenSettled: true,
      writeChunk: async (index, data, signal) => {
        if (finished) throw new ProviderError('canceled', 'chunk writer is closed');
        if (signal?.aborted || opts.signal?.aborted) throw canceled();
        try {
          let off = 0;
          while (off < data.length) {
            const { bytesWritten } = await fh.write(data, off, data.length - off, index * chunkSize + off);
            off += bytesWritten;
          }
        } catch (err) {
          throw fsError(err, p);
        }
      },
      close: async () => {
        if (finished) throw new ProviderError('canceled', 'chunk writer is closed');
        try {
          const st = await fh.stat();
          if (src.size >= 0 && st.size !== src.size) {
            throw new ProviderError('corrupted', `size mismatch writing ${p}: expected ${src.size}, got ${st.size}`);
          }
          await fh.close();
          finished = true;
          if (src.modTime) await utimes(tmp, new Date(), src.modTime);
          await rename(tmp, target);
          activeTemps.delete(tmp);
        } catch (err) {
          finished = false;
          await discard();
          throw fsError(err, p);
        }
        return this.stat(p);
      },
      abort: discard,
    };
  }
}

function credentialPath(credentials: Record<string, unknown>): string {
  const path = credentials.path;
  if (typeof path !== 'string' || path.trim() === '') {
    throw new ProviderError('invalid_name', 'a folder path is required', { retry: 'fatal' });
  }
  if (!isAbsolute(path)) throw new ProviderError('invalid_name', `not an absolute path: ${path}`, { retry: 'fatal' });
  return path;
}

/** Opens a local folder after checking that its real path lies inside one of the operator's roots. */
export async function openLocal(
  credentials: Record<string, unknown>,
  ctx: ProviderContext,
  opts: LocalOptions = {},
): Promise<LocalProvider> {
  const path = credentialPath(credentials);
  const roots = ctx.localRoots ?? [];
  if (roots.length === 0) {
    throw new ProviderError('permission', 'local folders are not enabled on this server', { retry: 'fatal' });
  }
  let real: string;
  try {
    real = await realpath(path);
  } catch (err) {
    throw toProviderError(fsError(err, path));
  }
  const st = await stat(real);
  if (!st.isDirectory()) throw new ProviderError('not_dir', `not a folder: ${path}`, { retry: 'fatal' });
  const realRoots = await Promise.all(roots.map((r) => realpath(r).catch(() => undefined)));
  const protectedPaths = ctx.localProtected ?? [];
  if (
    !realRoots.some((r) => r !== undefined && within(r, real)) ||
    protectedPaths.some((p) => real === p || real.startsWith(p + sep))
  ) {
    throw new ProviderError('permission', `outside the allowed folders: ${path}`, { retry: 'fatal' });
  }
  return new LocalProvider(real, {
    ...opts,
    protectedPaths,
    caseInsensitive: opts.caseInsensitive ?? (await isCaseInsensitive(real)),
  });
}

/** Whether the disk holding `dir` ignores case (macOS and Windows by default): the same folder under flipped case. */
async function isCaseInsensitive(dir: string): Promise<boolean> {
  const flipped = dir.replace(/[a-zA-Z]/g, (c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()));
  if (flipped === dir) return false;
  try {
    const [a, b] = await Promise.all([stat(dir), stat(flipped)]);
    return a.ino === b.ino && a.dev === b.dev;
  } catch {
    return false;
  }
}
