import { createHash, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { ProviderError, canceled, notFound } from '@skyferry/providers';
import type {
  About,
  ChunkWriter,
  Entry,
  EntryKind,
  Features,
  HashType,
  Hashes,
  ListOptions,
  Page,
  Provider,
  ReadOptions,
  SrcInfo,
  WriteOptions,
} from '@skyferry/providers';

/**
 * An in-memory cloud implementing the whole `Provider` interface honestly (paging, ranges,
 * atomic writes, quota, trash, server-side copy within one store, a chunk writer), with hooks to
 * inject faults and count operations. For unit tests and the planner benchmark.
 */

export type MemoryOp =
  | 'list'
  | 'stat'
  | 'openRead'
  | 'put'
  | 'mkdir'
  | 'remove'
  | 'rmdir'
  | 'rename'
  | 'about'
  | 'copy'
  | 'move'
  | 'openChunkWriter'
  | 'writeChunk'
  | 'listRecursive'
  | 'trash';

interface MemNode {
  name: string;
  kind: EntryKind;
  id: number;
  size: number;
  mtime: number;
  /** File content, or `fill` for a synthetic file of `size` repeated bytes. */
  data?: Buffer;
  fill?: number;
  md5?: string;
  mimeType?: string;
  children?: Map<string, MemNode>;
  /** Sorted child keys, rebuilt after a change (for stable paging). */
  sorted?: string[];
}

function splitPath(path: string): string[] {
  return path.split('/').filter((s) => s.length > 0);
}
function joinPath(dir: string, name: string): string {
  return dir === '/' ? `/${name}` : `${dir}/${name}`;
}
function parentOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}
function baseOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** The data of one memory "account". Two providers on one store share an account (server-side copy). */
export class MemoryStore {
  readonly id = randomUUID();
  readonly caseInsensitive: boolean;
  readonly root: MemNode;
  readonly trashed: { path: string; node: MemNode; at: number }[] = [];
  quota: number | undefined;
  private nextId = 1;

  constructor(opts: { caseInsensitive?: boolean; quota?: number } = {}) {
    this.caseInsensitive = opts.caseInsensitive ?? false;
    this.quota = opts.quota;
    this.root = this.newDir('');
  }

  key(name: string): string {
    return this.caseInsensitive ? name.toLowerCase() : name;
  }

  newDir(name: string): MemNode {
    return { name, kind: 'dir', id: this.nextId++, size: 0, mtime: Date.now(), children: new Map() };
  }

  newFile(name: string, data: Buffer | { size: number; fill: number }, mtime: number, mimeType?: string): MemNode {
    const node: MemNode = { name, kind: 'file', id: this.nextId++, size: 0, mtime };
    if (Buffer.isBuffer(data)) {
      node.data = data;
      node.size = data.length;
    } else {
      node.fill = data.fill;
      node.size = data.size;
    }
    if (mimeType) node.mimeType = mimeType;
    return node;
  }

  /** The node at a path, or undefined. */
  find(path: string): MemNode | undefined {
    let node: MemNode | undefined = this.root;
    for (const seg of splitPath(path)) {
      if (!node || node.kind !== 'dir') return undefined;
      node = node.children?.get(this.key(seg));
    }
    return node;
  }

  /** Creates a folder and its parents; throws not_dir when a file is in the way. */
  ensureDir(path: string): MemNode {
    let node = this.root;
    for (const seg of splitPath(path)) {
      const children = node.children as Map<string, MemNode>;
      let next = children.get(this.key(seg));
      if (!next) {
        next = this.newDir(seg);
        children.set(this.key(seg), next);
        node.sorted = undefined;
      } else if (next.kind !== 'dir') {
        throw new ProviderError('not_dir', `not a folder: ${seg} in ${path}`);
      }
      node = next;
    }
    return node;
  }

  /** Places a node at a path (replacing a file there), creating parents. */
  place(path: string, node: MemNode): void {
    const parent = this.ensureDir(parentOf(path));
    const key = this.key(node.name);
    const existing = parent.children?.get(key);
    if (existing && existing.kind === 'dir' && node.kind === 'file')
      throw new ProviderError('is_dir', `is a folder: ${path}`);
    parent.children?.set(key, node);
    parent.sorted = undefined;
  }

  detach(path: string): MemNode | undefined {
    const parent = this.find(parentOf(path));
    if (!parent || parent.kind !== 'dir') return undefined;
    const key = this.key(baseOf(path));
    const node = parent.children?.get(key);
    if (node) {
      parent.children?.delete(key);
      parent.sorted = undefined;
    }
    return node;
  }

  used(): number {
    let total = 0;
    const walk = (n: MemNode) => {
      if (n.kind === 'file') total += n.size;
      else for (const c of n.children?.values() ?? []) walk(c);
    };
    walk(this.root);
    return total;
  }

  content(node: MemNode): Buffer {
    if (node.data) return node.data;
    return Buffer.alloc(node.size, node.fill ?? 0);
  }

  md5(node: MemNode): string {
    if (!node.md5) {
      if (node.data) node.md5 = createHash('md5').update(node.data).digest('hex');
      else {
        const h = createHash('md5');
        const block = Buffer.alloc(Math.min(node.size, 1 << 20), node.fill ?? 0);
        for (let left = node.size; left > 0; left -= block.length)
          h.update(left >= block.length ? block : block.subarray(0, left));
        node.md5 = h.digest('hex');
      }
    }
    return node.md5;
  }

  // ---- helpers for tests and benchmarks -------------------------------------------------------

  /** Writes a file directly (no hooks), creating parents. */
  writeFile(path: string, data: Buffer | string, opts: { mtime?: number | Date } = {}): void {
    const mtime = opts.mtime instanceof Date ? opts.mtime.getTime() : (opts.mtime ?? Date.now());
    this.place(path, this.newFile(baseOf(path), typeof data === 'string' ? Buffer.from(data) : data, mtime));
  }

  /** Adds a synthetic file of `size` bytes of value `fill` (no memory for its content). */
  addSynthetic(path: string, size: number, opts: { mtime?: number; fill?: number } = {}): void {
    this.place(path, this.newFile(baseOf(path), { size, fill: opts.fill ?? 0 }, opts.mtime ?? Date.now()));
  }

  mkdirp(path: string): void {
    this.ensureDir(path);
  }

  readFile(path: string): Buffer {
    const node = this.find(path);
    if (!node || node.kind !== 'file') throw notFound(path);
    return this.content(node);
  }

  exists(path: string): boolean {
    return this.find(path) !== undefined;
  }

  remove(path: string): void {
    this.detach(path);
  }

  /** Every file below a folder: relative path -> { size, md5, mtime }. */
  files(dir = '/'): Map<string, { size: number; md5: string; mtime: number }> {
    const out = new Map<string, { size: number; md5: string; mtime: number }>();
    const start = this.find(dir);
    const walk = (n: MemNode, rel: string) => {
      for (const c of n.children?.values() ?? []) {
        const p = rel === '' ? `/${c.name}` : `${rel}/${c.name}`;
        if (c.kind === 'file') out.set(p, { size: c.size, md5: this.md5(c), mtime: c.mtime });
        else walk(c, p);
      }
    };
    if (start && start.kind === 'dir') walk(start, '');
    return out;
  }

  /** Every folder below a folder, as relative paths. */
  folders(dir = '/'): string[] {
    const out: string[] = [];
    const walk = (n: MemNode, rel: string) => {
      for (const c of n.children?.values() ?? []) {
        if (c.kind !== 'dir') continue;
        const p = `${rel}/${c.name}`;
        out.push(p);
        walk(c, p);
      }
    };
    const start = this.find(dir);
    if (start && start.kind === 'dir') walk(start, '');
    return out.sort();
  }
}

export interface MemoryFaults {
  /** Called before each operation; returning an error fails it. */
  before?(op: MemoryOp, path: string): ProviderError | undefined;
  /** Fails a read stream after `afterBytes` bytes. */
  readFailure?(path: string): { afterBytes: number; error: ProviderError } | undefined;
  /** Flips a byte of what is written (the service stores corrupted data). */
  corruptWrite?(path: string): boolean;
}

export interface MemoryProviderOptions {
  store?: MemoryStore;
  kind?: string;
  /** Defaults to the store's id: providers over one store can copy server-side. */
  accountKey?: string;
  features?: Partial<Features>;
  /** Hashes reported in entries (md5 is the only one this provider computes). Default ['md5']. */
  hashes?: HashType[];
  /** Hash types put() claims to have checked end to end (Provider.checkedWrites). Default none. */
  checkedWrites?: HashType[];
  /** Provider.chunkedWriteHashes (absent: as `hashes`). */
  chunkedWriteHashes?: HashType[];
  pageSize?: number;
  /** Added before every operation. */
  latencyMs?: number;
  faults?: MemoryFaults;
  chunkSize?: number;
  chunkConcurrency?: number;
  /** Paths (and everything below them) refused with `permission`. */
  forbidden?: string[];
}

const DEFAULT_FEATURES: Features = {
  copy: true,
  move: true,
  trash: true,
  about: true,
  chunkWriter: true,
  listRecursive: true,
  setModTime: true,
  modTimePrecisionMs: 1,
  caseInsensitive: false,
  bucketBased: false,
  needsSize: false,
};

export class MemoryProvider implements Provider {
  readonly kind: string;
  readonly accountKey: string;
  readonly features: Features;
  readonly hashes: ReadonlySet<HashType>;
  readonly checkedWrites?: ReadonlySet<HashType>;
  readonly chunkedWriteHashes?: ReadonlySet<HashType>;
  readonly store: MemoryStore;
  readonly opts: MemoryProviderOptions;
  /** Operation counts. */
  readonly ops = new Map<MemoryOp, number>();
  /** Paths of files written (put, chunk writer close, copy), in order. */
  readonly writes: string[] = [];
  faults: MemoryFaults;
  /** Concurrency seen (tests of parallelism). */
  inFlight = 0;
  maxInFlight = 0;

  about?: () => Promise<About>;
  copy?: (src: Entry, dst: string, opts?: { signal?: AbortSignal }) => Promise<Entry>;
  move?: (src: Entry, dst: string, opts?: { signal?: AbortSignal }) => Promise<Entry>;
  openChunkWriter?: (path: string, src: SrcInfo, opts?: { signal?: AbortSignal }) => Promise<ChunkWriter>;
  listRecursive?: (dir: string, opts?: { signal?: AbortSignal }) => AsyncIterable<Entry[]>;
  trash?: (path: string) => Promise<void>;

  constructor(opts: MemoryProviderOptions = {}) {
    this.opts = opts;
    this.store = opts.store ?? new MemoryStore();
    this.kind = opts.kind ?? 'memory';
    this.accountKey = opts.accountKey ?? `memory:${this.store.id}`;
    this.features = { ...DEFAULT_FEATURES, caseInsensitive: this.store.caseInsensitive, ...opts.features };
    this.hashes = new Set(opts.hashes ?? ['md5']);
    if (opts.checkedWrites) this.checkedWrites = new Set(opts.checkedWrites);
    if (opts.chunkedWriteHashes) this.chunkedWriteHashes = new Set(opts.chunkedWriteHashes);
    this.faults = opts.faults ?? {};
    // Optional capabilities exist only when the features say so, as with real backends.
    if (this.features.about) this.about = () => this.aboutImpl();
    if (this.features.copy) this.copy = (src, dst, o) => this.copyImpl(src, dst, o?.signal, false);
    if (this.features.move) this.move = (src, dst, o) => this.copyImpl(src, dst, o?.signal, true);
    if (this.features.chunkWriter) this.openChunkWriter = (p, s, o) => this.chunkWriterImpl(p, s, o?.signal);
    if (this.features.listRecursive) this.listRecursive = (d) => this.listRecursiveImpl(d);
    if (this.features.trash) this.trash = (p) => this.trashImpl(p);
  }

  opCount(op: MemoryOp): number {
    return this.ops.get(op) ?? 0;
  }

  private async enter(op: MemoryOp, path: string, signal?: AbortSignal): Promise<void> {
    this.ops.set(op, (this.ops.get(op) ?? 0) + 1);
    if (signal?.aborted) throw canceled();
    if (path.split('/').some((seg) => seg === '..' || seg === '.'))
      throw new ProviderError('invalid_name', `bad path: ${path}`);
    for (const f of this.opts.forbidden ?? []) {
      if (path === f || path.startsWith(f + '/')) throw new ProviderError('permission', `permission denied: ${path}`);
    }
    if (this.opts.latencyMs) await sleep(this.opts.latencyMs);
    const err = this.faults.before?.(op, path);
    if (err) throw err;
    if (signal?.aborted) throw canceled();
  }

  private entryOf(path: string, node: MemNode): Entry {
    const e: Entry = {
      path,
      name: node.name,
      kind: node.kind,
      size: node.kind === 'file' ? node.size : 0,
      id: String(node.id),
      modTime: new Date(node.mtime),
    };
    if (node.mimeType) e.mimeType = node.mimeType;
    if (node.kind === 'file' && this.hashes.has('md5')) e.hashes = { md5: this.store.md5(node) };
    return e;
  }

  private mustFind(path: string): MemNode {
    const node = this.store.find(path);
    if (!node) throw notFound(path);
    return node;
  }

  async list(dir: string, opts: ListOptions = {}): Promise<Page> {
    await this.enter('list', dir, opts.signal);
    const node = this.mustFind(dir);
    if (node.kind !== 'dir') throw new ProviderError('not_dir', `not a folder: ${dir}`);
    const children = node.children as Map<string, MemNode>;
    if (!node.sorted) node.sorted = [...children.keys()].sort();
    const sorted = node.sorted;
    // Tokens name the last key returned, so paging stays correct while the folder changes.
    let start = 0;
    if (opts.pageToken) {
      let lo = 0;
      let hi = sorted.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if ((sorted[mid] as string) <= opts.pageToken) lo = mid + 1;
        else hi = mid;
      }
      start = lo;
    }
    const size = Math.max(1, Math.min(opts.pageSize ?? this.opts.pageSize ?? 1000, this.opts.pageSize ?? 1000));
    const entries: Entry[] = [];
    let i = start;
    for (; i < sorted.length && entries.length < size; i++) {
      const child = children.get(sorted[i] as string) as MemNode;
      entries.push(this.entryOf(joinPath(dir === '/' ? '/' : dir, child.name), child));
    }
    const page: Page = { entries };
    if (i < sorted.length) page.nextPageToken = sorted[i - 1] as string;
    return page;
  }

  async stat(path: string, opts: { signal?: AbortSignal } = {}): Promise<Entry> {
    await this.enter('stat', path, opts.signal);
    return this.entryOf(path, this.mustFind(path));
  }

  async openRead(path: string, opts: ReadOptions = {}): Promise<Readable> {
    await this.enter('openRead', path, opts.signal);
    const node = this.mustFind(path);
    if (node.kind !== 'file') throw new ProviderError('is_dir', `is a folder: ${path}`);
    const start = opts.range?.start ?? 0;
    const end = Math.min(opts.range?.end ?? node.size - 1, node.size - 1);
    const failure = this.faults.readFailure?.(path);
    const signal = opts.signal;
    const data = node.data;
    const fill = node.fill ?? 0;
    let pos = start;
    const block = 64 * 1024;
    const stream = new Readable({
      highWaterMark: block,
      read() {
        if (signal?.aborted) {
          this.destroy(canceled());
          return;
        }
        if (failure && pos - start >= failure.afterBytes) {
          this.destroy(failure.error);
          return;
        }
        if (pos > end) {
          this.push(null);
          return;
        }
        let upto = Math.min(end + 1, pos + block);
        if (failure) upto = Math.min(upto, start + failure.afterBytes);
        const chunk = data ? Buffer.from(data.subarray(pos, upto)) : Buffer.alloc(upto - pos, fill);
        pos = upto;
        this.push(chunk);
      },
    });
    return stream;
  }

  private checkQuota(addBytes: number, removeBytes: number): void {
    const quota = this.store.quota;
    if (quota === undefined) return;
    if (this.store.used() - removeBytes + addBytes > quota) {
      throw new ProviderError('quota', 'insufficient storage', { serviceCode: 507 });
    }
  }

  private commitFile(path: string, data: Buffer, src: SrcInfo): Entry {
    const existing = this.store.find(path);
    if (existing && existing.kind === 'dir') throw new ProviderError('is_dir', `is a folder: ${path}`);
    this.checkQuota(data.length, existing?.size ?? 0);
    if (this.faults.corruptWrite?.(path) && data.length > 0) {
      data = Buffer.from(data);
      data[0] = (data[0] as number) ^ 0xff;
    }
    const mtime = this.features.setModTime && src.modTime ? src.modTime.getTime() : Date.now();
    const node = this.store.newFile(baseOf(path), data, mtime, src.mimeType);
    this.store.place(path, node);
    this.writes.push(path);
    return this.entryOf(path, node);
  }

  async put(path: string, body: Readable, src: SrcInfo, opts: WriteOptions = {}): Promise<Entry> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      try {
        await this.enter('put', path, opts.signal);
      } catch (err) {
        body.destroy();
        throw err;
      }
      if (this.features.needsSize && src.size < 0) {
        body.destroy();
        throw new ProviderError('not_supported', 'this service needs the size before writing');
      }
      const chunks: Buffer[] = [];
      let total = 0;
      const signal = opts.signal;
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          body.destroy();
          reject(canceled());
        };
        if (signal) signal.addEventListener('abort', onAbort, { once: true });
        body.on('data', (c: Buffer) => {
          chunks.push(c);
          total += c.length;
          opts.onProgress?.(total);
        });
        body.once('error', (e) => {
          signal?.removeEventListener('abort', onAbort);
          reject(e);
        });
        body.once('end', () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        });
      });
      if (signal?.aborted) throw canceled();
      if (src.size >= 0 && total !== src.size) {
        throw new ProviderError('corrupted', `size mismatch for ${path}: got ${total}, announced ${src.size}`);
      }
      return this.commitFile(path, Buffer.concat(chunks, total), src);
    } finally {
      this.inFlight--;
    }
  }

  async mkdir(path: string): Promise<void> {
    await this.enter('mkdir', path);
    const existing = this.store.find(path);
    if (existing && existing.kind !== 'dir') throw new ProviderError('exists', `a file exists at ${path}`);
    this.store.ensureDir(path);
  }

  async remove(path: string): Promise<void> {
    await this.enter('remove', path);
    const node = this.mustFind(path);
    if (node.kind === 'dir') throw new ProviderError('is_dir', `is a folder: ${path}`);
    this.store.detach(path);
  }

  async rmdir(path: string): Promise<void> {
    await this.enter('rmdir', path);
    if (path === '/' || path === '') throw new ProviderError('permission', 'cannot remove the root');
    const node = this.mustFind(path);
    if (node.kind !== 'dir') throw new ProviderError('not_dir', `not a folder: ${path}`);
    this.store.detach(path);
  }

  async rename(path: string, newName: string): Promise<Entry> {
    await this.enter('rename', path);
    if (newName.includes('/') || newName === '') throw new ProviderError('invalid_name', `bad name ${newName}`);
    const node = this.mustFind(path);
    const dest = joinPath(parentOf(path), newName);
    const clash = this.store.find(dest);
    if (clash && clash !== node) throw new ProviderError('exists', `exists: ${dest}`);
    this.store.detach(path);
    node.name = newName;
    this.store.place(dest, node);
    return this.entryOf(dest, node);
  }

  private async aboutImpl(): Promise<About> {
    await this.enter('about', '/');
    const used = this.store.used();
    const quota = this.store.quota;
    const trashed = this.store.trashed.reduce((s, t) => s + t.node.size, 0);
    return quota === undefined ? { used, trashed } : { total: quota, used, free: Math.max(0, quota - used), trashed };
  }

  private cloneNode(node: MemNode): MemNode {
    if (node.kind === 'file') {
      const copy = this.store.newFile(
        node.name,
        node.data ?? { size: node.size, fill: node.fill ?? 0 },
        node.mtime,
        node.mimeType,
      );
      if (node.md5) copy.md5 = node.md5;
      return copy;
    }
    const dir = this.store.newDir(node.name);
    for (const [k, c] of node.children ?? []) dir.children?.set(k, this.cloneNode(c));
    return dir;
  }

  private async copyImpl(src: Entry, dst: string, signal: AbortSignal | undefined, move: boolean): Promise<Entry> {
    await this.enter(move ? 'move' : 'copy', src.path, signal);
    const node = this.mustFind(src.path);
    const existing = this.store.find(dst);
    if (existing && (existing.kind === 'dir' || node.kind === 'dir'))
      throw new ProviderError('exists', `exists: ${dst}`);
    let placed: MemNode;
    if (move) {
      this.store.detach(src.path);
      node.name = baseOf(dst);
      placed = node;
    } else {
      if (node.kind === 'file') this.checkQuota(node.size, existing?.size ?? 0);
      placed = this.cloneNode(node);
      placed.name = baseOf(dst);
    }
    this.store.place(dst, placed);
    if (placed.kind === 'file') this.writes.push(dst);
    return this.entryOf(dst, placed);
  }

  private async chunkWriterImpl(path: string, src: SrcInfo, signal?: AbortSignal): Promise<ChunkWriter> {
    await this.enter('openChunkWriter', path, signal);
    const parts = new Map<number, Buffer>();
    const chunkSize = this.opts.chunkSize ?? 1024 * 1024;
    let done = false;
    const enter = (op: MemoryOp, sig?: AbortSignal) => this.enter(op, path, sig);
    const track = (d: number) => {
      this.inFlight += d;
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    };
    const commit = (data: Buffer) => this.commitFile(path, data, src);
    return {
      chunkSize,
      concurrency: this.opts.chunkConcurrency ?? 4,
      async writeChunk(index: number, data: Buffer, sig?: AbortSignal): Promise<void> {
        if (done) throw new ProviderError('unknown', 'chunk writer closed');
        await enter('writeChunk', sig);
        track(1);
        try {
          parts.set(index, Buffer.from(data));
        } finally {
          track(-1);
        }
      },
      async close(): Promise<Entry> {
        done = true;
        const n = parts.size;
        const bufs: Buffer[] = [];
        for (let i = 0; i < n; i++) {
          const b = parts.get(i);
          if (!b) throw new ProviderError('corrupted', `chunk ${i} missing`);
          if (i < n - 1 && b.length !== chunkSize)
            throw new ProviderError('corrupted', `chunk ${i} has the wrong size`);
          bufs.push(b);
        }
        const data = Buffer.concat(bufs);
        if (src.size >= 0 && data.length !== src.size) {
          throw new ProviderError('corrupted', `size mismatch: got ${data.length}, announced ${src.size}`);
        }
        return commit(data);
      },
      async abort(): Promise<void> {
        done = true;
        parts.clear();
      },
    };
  }

  private async *listRecursiveImpl(dir: string): AsyncIterable<Entry[]> {
    await this.enter('listRecursive', dir);
    const start = this.mustFind(dir);
    if (start.kind !== 'dir') throw new ProviderError('not_dir', `not a folder: ${dir}`);
    const stack: { node: MemNode; path: string }[] = [{ node: start, path: dir }];
    while (stack.length > 0) {
      const { node, path } = stack.pop() as { node: MemNode; path: string };
      const batch: Entry[] = [];
      for (const c of node.children?.values() ?? []) {
        const p = joinPath(path, c.name);
        batch.push(this.entryOf(p, c));
        if (c.kind === 'dir') stack.push({ node: c, path: p });
      }
      if (batch.length > 0) yield batch;
    }
  }

  private async trashImpl(path: string): Promise<void> {
    await this.enter('trash', path);
    const node = this.store.detach(path);
    if (!node) throw notFound(path);
    this.store.trashed.push({ path, node, at: Date.now() });
  }

  async close(): Promise<void> {}
}

/** Hashes of a buffer as the memory provider reports them (tests). */
export function md5Hex(data: Buffer | string): string {
  return createHash('md5').update(data).digest('hex');
}

export type { Hashes };
