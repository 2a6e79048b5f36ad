import type { Readable } from 'node:stream';

/** Hash kinds a service may report or accept. */
export type HashType = 'md5' | 'sha1' | 'sha256' | 'crc32' | 'quickxor' | 'dropbox';
export type Hashes = Partial<Record<HashType, string>>;

export type EntryKind = 'file' | 'dir';

/** A file or folder in a cloud. Paths are POSIX-style and absolute inside the cloud ("/a/b.txt"). */
export interface Entry {
  path: string;
  name: string;
  kind: EntryKind;
  /** Bytes; 0 for folders. */
  size: number;
  /** The service's own id where it has one (ID-based services). */
  id?: string;
  modTime?: Date;
  mimeType?: string;
  /** Hashes the service reports, lower-case hex (base64 for quickxor, as services print it). */
  hashes?: Hashes;
  /**
   * What may be the file's MD5 but is not sure to be (an S3-compatible service's ETag of a large
   * object, which a multipart upload can leave without its "-N" suffix). Never compared as a hash:
   * a writer may send it for the service to check (S3's Content-MD5), and learns from a refusal.
   */
  md5Hint?: string;
  /**
   * Set on a symbolic link (local disk, SFTP, FTP). A listing shows a link as itself and never
   * follows it: `kind`, `size` and `modTime` describe what it points to when that resolves inside
   * this cloud's root, and `link.target` is that item's path here; otherwise `link.broken` says why
   * not. Paths through a link still resolve for reading; deletions never go through one.
   */
  link?: EntryLink;
}

/** What a symbolic link leads to (see `Entry.link`). */
export interface EntryLink {
  /** The path (in this cloud) of the item the link resolves to. */
  target?: string;
  /** Why it does not resolve: nothing there, a loop of links, or outside this cloud's root. */
  broken?: 'dangling' | 'loop' | 'outside';
}

export interface Page {
  entries: Entry[];
  /**
   * Names the folder holds that the service could not show as entries (a local name that is not
   * valid UTF-8), with why: callers report them instead of leaving them out unseen.
   */
  unlisted?: { name: string; message: string }[];
  /** Present when more entries follow; pass it back to `list`. */
  nextPageToken?: string;
}

/** What the source knows about a file being written. `size` is -1 when unknown. */
export interface SrcInfo {
  size: number;
  modTime?: Date;
  hashes?: Hashes;
  mimeType?: string;
  /** The source's `Entry.md5Hint`. */
  md5Hint?: string;
}

export interface ReadOptions {
  /** Inclusive start and inclusive end, as in HTTP ranges; end omitted reads to the end. */
  range?: { start: number; end?: number };
  signal?: AbortSignal;
}

export interface WriteOptions {
  signal?: AbortSignal;
  /** Called with the running total of bytes sent. */
  onProgress?: (bytes: number) => void;
  /**
   * Eight lower-case hex digits naming the caller's run (`TEMP_TAG`): a write through a temporary
   * file names it `.skyferry-tmp-<tag><8 random hex digits>`, so the run can find and remove what
   * its cut-off writes left (`removeTemps`) without touching anyone else's.
   */
  tempTag?: string;
}

/** Options of writes other than `put` (chunk writers, server-side copies). */
export interface TempWriteOptions {
  signal?: AbortSignal;
  /** As `WriteOptions.tempTag`. */
  tempTag?: string;
}

export interface StatOptions {
  signal?: AbortSignal;
  /**
   * The caller expects a folder (a transfer's root folders). A service that needs more than one
   * request to tell a file from a folder (S3: a HEAD for an object, then a listing for a folder)
   * sends them together instead of one after the other: one round trip less, one request more
   * when the path is a file. The answer is the same either way.
   */
  expectFolder?: boolean;
}

export interface ListOptions {
  signal?: AbortSignal;
  pageToken?: string;
  /** A hint; backends may return fewer or more. */
  pageSize?: number;
}

export interface About {
  total?: number;
  used?: number;
  free?: number;
  trashed?: number;
}

/** An item in a cloud's trash (Skyferry's own on a local folder, or the service's). */
export interface TrashEntry {
  /** How the backend names it for restoreTrash and purgeTrash. */
  id: string;
  name: string;
  /** Where it was before it went (a path in this cloud), when the service says. */
  originalPath?: string;
  kind: EntryKind;
  /** Bytes (0 for folders, and when the service does not say). */
  size: number;
  deletedAt?: Date;
}

export interface TrashPage {
  entries: TrashEntry[];
  /** Present when more entries follow; pass it back to `listTrash`. */
  nextPageToken?: string;
}

/**
 * Parallel multipart upload of one large file: chunks of `chunkSize` bytes (the last may be
 * shorter) written in any order, `concurrency` at a time, then closed to publish the file.
 * Nothing is visible at the path until `close` succeeds; `abort` discards every chunk.
 * A writer keeps no reference to a chunk's buffer once `writeChunk` has resolved (callers reuse it).
 */
export interface ChunkWriter {
  readonly chunkSize: number;
  readonly concurrency: number;
  writeChunk(index: number, data: Buffer, signal?: AbortSignal): Promise<void>;
  /**
   * writeChunk is done with `data` once it settles, so the caller may read the next chunk into the
   * same buffer. Writers that hold chunks until later (to send them in order, or at close) leave
   * this unset.
   */
  readonly doneWithDataWhenSettled?: boolean;
  /**
   * Writers that place bytes by offset (WebDAV ranged writes) also take a range as a stream of
   * exactly `length` bytes, so a caller may read several ranges of the source at once and send each
   * as it comes, without gathering chunks in memory. Ranges may have any size and order; together
   * they must cover the file once.
   */
  writeRange?(offset: number, length: number, body: Readable, signal?: AbortSignal): Promise<void>;
  close(): Promise<Entry>;
  abort(): Promise<void>;
}

/** Optional capabilities, discovered from what a backend implements plus flags it declares. */
/** How long a name may be on a backend: in UTF-8 bytes (disks, SFTP, FTP) or characters (UTF-16 code units). */
export interface NameLimit {
  max: number;
  unit: 'bytes' | 'chars';
}
/** The limit of a backend that declares none: 255 bytes, what most disks take. */
export const DEFAULT_NAME_LIMIT: NameLimit = { max: 255, unit: 'bytes' };

export interface Features {
  /** Server-side copy within one account. */
  copy: boolean;
  move: boolean;
  trash: boolean;
  about: boolean;
  chunkWriter: boolean;
  listRecursive: boolean;
  /** Modification times given on write are kept. */
  setModTime: boolean;
  /**
   * How far (ms) a kept modification time may be from the one given on write: 1 where milliseconds
   * are kept, 1000 (the default when absent) where seconds are.
   */
  modTimePrecisionMs?: number;
  /** Names differing only in case are the same file. */
  caseInsensitive: boolean;
  /** Folders exist only through the files in them (object stores keep marker objects for empty ones). */
  bucketBased: boolean;
  /** Writing needs the size up front (the executor buffers to disk only then). */
  needsSize: boolean;
  /** The longest name it takes (default `DEFAULT_NAME_LIMIT`). */
  nameLimit?: NameLimit;
}

/**
 * One small interface every backend implements (after rclone's fs.Fs). Every method throws
 * ProviderError with a code the engine can act on.
 */
export interface Provider {
  readonly kind: string;
  /** Identifies the account and store: equal keys mean server-side copy between them is possible. */
  readonly accountKey: string;
  readonly features: Features;
  /** Hashes this service reports for its files. */
  readonly hashes: ReadonlySet<HashType>;
  /**
   * Hash types whose value in the entry `put` returns was checked end to end: the service verified
   * it against the bytes it received (a Content-MD5 it checks), or `put` computed it over the bytes
   * it sent and compared it with what the service reports it stored. A mismatch fails `put` with
   * 'corrupted'; where no check was possible the entry carries no such hash. Callers need not
   * compute that hash themselves.
   */
  readonly checkedWrites?: ReadonlySet<HashType>;
  /**
   * Hash types a chunk writer's `close` reports of the service's own view of the whole file (S3:
   * none, a multipart ETag is no MD5 of the file). Callers compute such a hash while sending only
   * where the service reports it for comparison. Absent: the same as `hashes`.
   */
  readonly chunkedWriteHashes?: ReadonlySet<HashType>;

  list(dir: string, opts?: ListOptions): Promise<Page>;
  stat(path: string, opts?: StatOptions): Promise<Entry>;
  openRead(path: string, opts?: ReadOptions): Promise<Readable>;
  /**
   * Writes a whole file from a stream; creates missing parent folders; replaces an existing file.
   * The caller keeps an error listener on `body` (the engine's byte meter, the server's upload
   * stream): a failed body rejects the put, whenever it fails, and ends nothing else.
   */
  put(path: string, body: Readable, src: SrcInfo, opts?: WriteOptions): Promise<Entry>;
  /**
   * Optional, for backends where one call beats a stream (the local disk): a small file's bytes,
   * whole, or undefined when it is larger than `max` bytes (or the backend would rather stream it
   * now). Fails as `openRead` does, `source_changed` included.
   */
  readSmall?(path: string, max: number, opts?: ReadOptions): Promise<Buffer | undefined>;
  /**
   * Optional, as `readSmall`: writes a small file whole from memory, as `put` does from a stream.
   * `data` is the caller's no more once called (it may go back to a read ring).
   */
  putSmall?(path: string, data: Buffer, src: SrcInfo, opts?: WriteOptions): Promise<Entry>;
  /** Creates a folder and any missing parents; succeeds when it already exists. */
  mkdir(path: string): Promise<void>;
  /** Removes a file. */
  remove(path: string): Promise<void>;
  /** Removes a folder and everything in it. */
  rmdir(path: string): Promise<void>;
  /** Renames in place (same parent folder). */
  rename(path: string, newName: string): Promise<Entry>;

  about?(): Promise<About>;
  copy?(src: Entry, dst: string, opts?: TempWriteOptions): Promise<Entry>;
  move?(src: Entry, dst: string, opts?: { signal?: AbortSignal }): Promise<Entry>;
  openChunkWriter?(path: string, src: SrcInfo, opts?: TempWriteOptions): Promise<ChunkWriter>;
  listRecursive?(dir: string, opts?: { signal?: AbortSignal }): AsyncIterable<Entry[]>;
  /**
   * A hash of a file's content of one of the types in `hashes`, fetched or computed on demand (for
   * services whose listings do not carry it, or the local disk). Undefined when this file has none.
   */
  hash?(path: string, type: HashType, opts?: { signal?: AbortSignal }): Promise<string | undefined>;
  /**
   * How many `hash` calls at once keep this backend's hashing busy, where that is more than a
   * service should be asked at once (the local disk: its hashing threads take queued files in
   * batches, and the larger the batches the less each file costs). Absent: no more than usual.
   */
  readonly hashesAtOnce?: number;
  /** Moves to the service's trash. */
  trash?(path: string): Promise<void>;
  /** What the trash holds: the items that were deleted (not what was inside a deleted folder). */
  listTrash?(opts?: { pageToken?: string; signal?: AbortSignal }): Promise<TrashPage>;
  /**
   * Puts a trashed item back where it was (under a free name beside it when the name is taken
   * again, where the service does so); answers the restored entry.
   */
  restoreTrash?(id: string): Promise<Entry>;
  /** Deletes one trashed item for good. */
  purgeTrash?(id: string): Promise<void>;
  /** Deletes everything in the trash for good. */
  emptyTrash?(): Promise<void>;
  /**
   * Files and folders whose name holds `query`, below folder `dir`, found by the service's own
   * search (its rules of matching: word prefixes on Google Drive, ...). Pages as `list` does.
   */
  search?(dir: string, query: string, opts?: ListOptions): Promise<Page>;
  /**
   * Backends that write through temporary files: removes from folder `dir` the temporary files of
   * writes tagged `tag` (`WriteOptions.tempTag`), except those this process is writing now, and
   * answers how many it removed. A missing folder holds none.
   */
  removeTemps?(dir: string, tag: string, opts?: { signal?: AbortSignal }): Promise<number>;
  /** Releases pooled connections. */
  close?(): Promise<void>;
}
