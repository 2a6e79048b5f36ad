import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../api/errors.ts';
import type { Entry, HashType, Provider } from '../api/types.ts';
import { hashBuffer } from '../hashing.ts';
import { mapLimit } from '../map-limit.ts';

/** What a backend's test setup hands the suite. */
export interface ConformanceFixture {
  provider: Provider;
  /** Stops servers and removes temporary folders. */
  cleanup: () => Promise<void>;
  /** Opens the same store with credentials the service refuses; expected: auth_invalid or auth_expired. */
  badCredentials?: () => Promise<Provider>;
  /** A path the service refuses to read and write; expected: permission. */
  forbiddenPath?: string;
}

export interface ConformanceOptions {
  /** Files in the paging test (default 2500, 1100 when CI is set: still above S3's 1000-key pages). */
  pagingCount?: number;
  /** Bytes of the big file written through the chunk writer (default 200 MB, 24 MiB when CI is set). */
  bigFileSize?: number;
  /** Bytes of the file streamed through put() with an unknown size (default 24 MiB). */
  streamFileSize?: number;
  /** Longest name length used (default 200 characters). */
  maxNameLength?: number;
  /** Modification times are compared to this many ms (default 1000). */
  modTimePrecisionMs?: number;
  /** Names to try besides the built-in Unicode, space and punctuation ones. */
  extraNames?: string[];
  /** Names the service cannot hold even encoded, removed from the built-in list. */
  excludeNames?: string[];
  /** Parallel writes in the concurrency test (default 12). */
  concurrentWrites?: number;
  /**
   * Whether simultaneous writes to one path end with one whole version (default true). Only for a
   * test server known to write objects in place (s3rver); real services replace atomically.
   */
  atomicOverwrite?: boolean;
  /** Timeout of the slow cases (paging, big files), ms (default 300 000). */
  slowTimeoutMs?: number;
  /** What the service can do; everything by default. See ConformanceCapabilities. */
  capabilities?: ConformanceCapabilities;
}

/**
 * What a service can do, for services whose API lacks some of what the suite tries (Google Photos'
 * Library API cannot delete, rename or overwrite, keeps albums one level deep and takes pictures and
 * videos only). Every flag defaults to true, the full behaviour. A case testing something declared
 * missing does not skip: it asserts that the backend refuses it the declared way (a `not_supported`
 * ProviderError unless said otherwise) and that nothing changed, and the other cases work around it.
 */
export interface ConformanceCapabilities {
  /**
   * remove and rmdir delete. When false both refuse with not_supported (rmdir of "/" still with
   * permission) and leave everything in place; the suite leaves its files behind.
   */
  remove?: boolean;
  /** rename renames files and folders. When false it refuses with not_supported, both left as they were. */
  rename?: boolean;
  /**
   * put on an existing file replaces it (true). 'keep-both': the first file stays and the new one
   * is added beside it; the listing shows both under distinct paths (Google Photos, where a name
   * is not unique) and the entry put answers reads back the new bytes. false: put refuses with
   * exists or not_supported and the first file stays.
   */
  overwrite?: boolean | 'keep-both';
  /**
   * Folders may hold folders. When false, folders exist only at the top level (albums) and hold
   * files: each case works in top-level folders named after the run ("/skyferry-conformance-<hex>-<case>"),
   * and mkdir below the top level or put deeper than a folder's files refuse with not_supported.
   */
  nestedDirs?: boolean;
  /**
   * Any file type can be stored. When false, every test file is named with `fileExtension` and
   * putting a plain text file ("notes.txt") must be refused with not_supported.
   */
  anyFileType?: boolean;
  /** Extension, without the dot, of every test file when anyFileType is false (default "jpg"). */
  fileExtension?: string;
  /**
   * A backend with a chunk writer can use it on this service. When false (a WebDAV server without
   * ranged writes), openChunkWriter refuses with not_supported, leaving nothing behind, and big
   * files go through put().
   */
  chunkWriter?: boolean;
}

const MB = 1000 * 1000;
const MiB = 1024 * 1024;
const CI = Boolean(process.env.CI);

/** Deterministic pseudo-random bytes (xorshift32), fast enough for hundreds of MB. */
export function patternBytes(size: number, seed: number): Buffer {
  const words = Math.ceil(size / 4);
  const arr = new Uint32Array(words);
  let x = seed >>> 0 || 0x9e3779b9;
  for (let i = 0; i < words; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    arr[i] = x;
  }
  return Buffer.from(arr.buffer, 0, size);
}

export async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c as Uint8Array));
  return Buffer.concat(chunks);
}

/** Writes small text files (test setup): path -> content. */
export async function writeFiles(provider: Provider, files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    const data = Buffer.from(text);
    await provider.put(path, Readable.from([data]), { size: data.length });
  }
}

/** The files `checkNameSearch` writes that hold "invoice" below /find, as it expects them found. */
export const SEARCH_FOUND = ['/find/Invoice 1.txt', "/find/sub/Bob's invoice?.pdf"];

/**
 * Checks a backend's own search by name (`search`): what lies below the folder searched and
 * holds the query (case ignored), nothing trashed, every find once over pages of `pageSize`, and
 * not_found for a folder that is not there.
 */
export async function checkNameSearch(provider: Provider, pageSize = 1): Promise<void> {
  const search = provider.search?.bind(provider);
  if (!search) throw new Error(`${provider.kind} has no search`);
  await writeFiles(provider, {
    [SEARCH_FOUND[0] as string]: 'x',
    [SEARCH_FOUND[1] as string]: 'x',
    '/elsewhere/invoice.txt': 'x',
    '/find/gone invoice.txt': 'x',
  });
  await provider.trash?.('/find/gone invoice.txt');
  const found = (await search('/find', 'INVOICE')).entries;
  expect(found.map((e) => e.path).sort()).toEqual(SEARCH_FOUND);
  expect(found.find((e) => e.name === 'Invoice 1.txt')).toMatchObject({ kind: 'file', size: 1 });
  const all: string[] = [];
  let pages = 0;
  let token: string | undefined;
  do {
    const page = await search('/', 'invoice', { pageSize, ...(token ? { pageToken: token } : {}) });
    all.push(...page.entries.map((e) => e.path));
    token = page.nextPageToken;
    pages += 1;
  } while (token);
  expect(all.sort()).toEqual(['/elsewhere/invoice.txt', ...SEARCH_FOUND]);
  expect(pages).toBeGreaterThan(1);
  expect(await errorCode(search('/nope', 'x'))).toBe('not_found');
}

async function md5OfStream(stream: Readable): Promise<{ md5: string; size: number }> {
  const h = createHash('md5');
  let size = 0;
  for await (const c of stream) {
    const b = c as Buffer;
    h.update(b);
    size += b.length;
  }
  return { md5: h.digest('hex'), size };
}

/** Resolves to the ProviderError code a promise rejects with ('ok' when it resolves). */
export async function errorCode(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    return err instanceof ProviderError ? err.code : `not a ProviderError: ${String(err)}`;
  }
}

function bufferStream(data: Buffer, piece = 64 * 1024): Readable {
  let off = 0;
  return new Readable({
    read() {
      if (off >= data.length) {
        this.push(null);
        return;
      }
      this.push(data.subarray(off, off + piece));
      off += piece;
    },
  });
}

async function listAll(p: Provider, dir: string, pageSize?: number): Promise<{ entries: Entry[]; pages: number }> {
  const entries: Entry[] = [];
  let pageToken: string | undefined;
  let pages = 0;
  do {
    const page = await p.list(dir, { pageToken, pageSize });
    entries.push(...page.entries);
    pageToken = page.nextPageToken;
    pages++;
    if (pages > 100_000) throw new Error('listing never ends');
  } while (pageToken !== undefined);
  return { entries, pages };
}

async function put(p: Provider, path: string, data: Buffer, modTime?: Date): Promise<Entry> {
  return p.put(path, bufferStream(data), { size: data.length, modTime });
}

function defaultNames(maxLen: number): string[] {
  const long = ('long-name-' + 'x'.repeat(maxLen)).slice(0, maxLen - 4) + '.txt';
  return [
    'plain.txt',
    'with spaces in it.txt',
    'ünïcødé façade.txt',
    '日本語のファイル名.txt',
    'Ελληνικά и кириллица.txt',
    'emoji 🚀✨ file.txt',
    "punct & (1) [2] {3} #4 %5 ;6 ,7 '8' =9 +10 @11 ~12 !13 $14.txt",
    'dots.in.the.name..txt',
    'no-extension',
    long,
  ];
}

/** Replaces a file name's extension with `ext` (or adds it when the name has none). */
function withExtension(name: string, ext: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? `${name.slice(0, dot)}.${ext}` : `${name}.${ext}`;
}

/**
 * The shared backend test suite (after rclone's fstests): every backend runs it against a real
 * server on 127.0.0.1. Each case works in its own folder under a fresh random root (or, for a
 * service without nested folders, in top-level folders named after that root).
 */
export function runConformance(
  name: string,
  setup: () => Promise<ConformanceFixture>,
  options: ConformanceOptions = {},
): void {
  const pagingCount = options.pagingCount ?? (CI ? 1100 : 2500);
  const bigFileSize = options.bigFileSize ?? (CI ? 24 * MiB : 200 * MB);
  const streamFileSize = options.streamFileSize ?? 24 * MiB;
  const maxNameLength = options.maxNameLength ?? 200;
  const precision = options.modTimePrecisionMs ?? 1000;
  const concurrentWrites = options.concurrentWrites ?? 12;
  const atomicOverwrite = options.atomicOverwrite ?? true;
  const slow = options.slowTimeoutMs ?? 300_000;
  const caps = options.capabilities ?? {};
  const canRemove = caps.remove ?? true;
  const canRename = caps.rename ?? true;
  const overwrite = caps.overwrite ?? true;
  const nested = caps.nestedDirs ?? true;
  const anyFileType = caps.anyFileType ?? true;
  const chunksTaken = caps.chunkWriter ?? true;
  const ext = caps.fileExtension ?? 'jpg';
  /** A test file's name as the service can hold it. */
  const typed = (n: string) => (anyFileType ? n : withExtension(n, ext));
  const excluded = new Set(options.excludeNames ?? []);
  const names = [...defaultNames(maxNameLength), ...(options.extraNames ?? [])]
    .filter((n) => !excluded.has(n))
    .map(typed);

  describe(`provider conformance: ${name}`, () => {
    let fx: ConformanceFixture;
    let p: Provider;
    const rootName = `skyferry-conformance-${randomBytes(4).toString('hex')}`;
    const root = `/${rootName}`;
    /** Top-level folders the cases used (services without nested folders). */
    const tops = new Set<string>();
    /**
     * A case's folder or file. Nested: "<root>/<sub>". Flat: the first segment names the
     * top-level folder "<root>-<first>" and the rest lies inside it (cases keep it one level deep).
     */
    const dir = (sub: string) => {
      if (nested) return `${root}/${sub}`;
      const [first, ...rest] = sub.split('/');
      const top = `${root}-${first}`;
      tops.add(top);
      return rest.length > 0 ? `${top}/${rest.join('/')}` : top;
    };
    /** A test file's path: its last segment named as the service can hold it. */
    const file = (sub: string) => {
      const i = sub.lastIndexOf('/');
      return dir(i < 0 ? typed(sub) : `${sub.slice(0, i + 1)}${typed(sub.slice(i + 1))}`);
    };
    const text = async (path: string) => (await readAll(await p.openRead(path))).toString();

    beforeAll(async () => {
      fx = await setup();
      p = fx.provider;
      if (nested) await p.mkdir(root);
    }, 120_000);

    afterAll(async () => {
      if (!fx) return;
      try {
        if (canRemove) {
          if (nested) await p.rmdir(root).catch(() => undefined);
          else for (const top of tops) await p.rmdir(top).catch(() => undefined);
        }
        await p.close?.();
      } finally {
        await fx.cleanup();
      }
    }, 120_000);

    it('declares features that match the methods it implements', () => {
      expect(p.features.copy).toBe(typeof p.copy === 'function');
      expect(p.features.move).toBe(typeof p.move === 'function');
      expect(p.features.trash).toBe(typeof p.trash === 'function');
      expect(p.features.about).toBe(typeof p.about === 'function');
      expect(p.features.chunkWriter).toBe(typeof p.openChunkWriter === 'function');
      expect(p.features.listRecursive).toBe(typeof p.listRecursive === 'function');
      const known: HashType[] = ['md5', 'sha1', 'sha256', 'crc32', 'quickxor', 'dropbox'];
      for (const h of p.hashes) expect(known).toContain(h);
      expect(typeof p.kind).toBe('string');
      expect(p.accountKey.length).toBeGreaterThan(0);
    });

    it(
      nested
        ? 'creates nested folders, idempotently, and refuses a folder where a file is'
        : 'creates top-level folders, idempotently, and refuses folders inside folders',
      async () => {
        if (!nested) {
          await p.mkdir(dir('nested'));
          await p.mkdir(dir('nested'));
          expect((await p.stat(dir('nested'))).kind).toBe('dir');
          expect((await listAll(p, dir('nested'))).entries).toEqual([]);
          expect(await errorCode(p.mkdir(dir('nested/a')))).toBe('not_supported');
          expect(await errorCode(put(p, file('nested/a/x.txt'), Buffer.from('x')))).toBe('not_supported');
          await put(p, file('nested/file.txt'), Buffer.from('x'));
          expect(await errorCode(p.mkdir(file('nested/file.txt')))).toBe('not_supported');
          const listed = await listAll(p, dir('nested'));
          expect(listed.entries.map((e) => [e.name, e.kind, e.path])).toEqual([
            [typed('file.txt'), 'file', file('nested/file.txt')],
          ]);
          return;
        }
        await p.mkdir(dir('nested/a/b/c'));
        await p.mkdir(dir('nested/a/b/c'));
        for (const sub of ['nested', 'nested/a', 'nested/a/b', 'nested/a/b/c']) {
          expect((await p.stat(dir(sub))).kind).toBe('dir');
        }
        const listed = await listAll(p, dir('nested/a'));
        expect(listed.entries.map((e) => [e.name, e.kind, e.path])).toEqual([['b', 'dir', dir('nested/a/b')]]);
        expect((await listAll(p, dir('nested/a/b/c'))).entries).toEqual([]);
        await put(p, file('nested/file.txt'), Buffer.from('x'));
        expect(await errorCode(p.mkdir(file('nested/file.txt')))).toBe('exists');
      },
    );

    it('writes, reads back, stats and lists a file; put creates missing parents', async () => {
      const data = patternBytes(100_000, 1);
      const sub = nested ? 'basic/deep/er' : 'basic';
      const path = file(`${sub}/file.bin`);
      const e = await put(p, path, data);
      expect(e.path).toBe(path);
      expect(e.name).toBe(typed('file.bin'));
      expect(e.kind).toBe('file');
      expect(e.size).toBe(data.length);
      const st = await p.stat(path);
      expect(st).toMatchObject({ kind: 'file', size: data.length, name: typed('file.bin') });
      expect((await readAll(await p.openRead(path))).equals(data)).toBe(true);
      const listed = await listAll(p, dir(sub));
      expect(listed.entries.map((x) => [x.name, x.size, x.kind])).toEqual([[typed('file.bin'), data.length, 'file']]);
      if (nested)
        expect((await listAll(p, dir('basic'))).entries.map((x) => [x.name, x.kind])).toEqual([['deep', 'dir']]);
      else expect((await p.stat(dir('basic'))).kind).toBe('dir');
      if (!anyFileType) {
        // A file type the service cannot hold is refused, and nothing is left behind.
        expect(await errorCode(put(p, dir('basic/notes.txt'), Buffer.from('plain text')))).toBe('not_supported');
        expect(await errorCode(p.stat(dir('basic/notes.txt')))).toBe('not_found');
        expect((await listAll(p, dir(sub))).entries.map((x) => x.name)).toEqual([typed('file.bin')]);
      }
    });

    it('stores empty files', async () => {
      const path = file('empty/zero.txt');
      const e = await put(p, path, Buffer.alloc(0));
      expect(e.size).toBe(0);
      expect((await p.stat(path)).size).toBe(0);
      expect((await readAll(await p.openRead(path))).length).toBe(0);
      const listed = await listAll(p, dir('empty'));
      expect(listed.entries.map((x) => [x.name, x.size, x.kind])).toEqual([[typed('zero.txt'), 0, 'file']]);
    });

    it('keeps Unicode, spaces, punctuation and long names exactly', async () => {
      // Folders named like the files: inside the case folder, or top-level ones without nesting.
      const folderOf = (n: string) => (nested ? `names/folder ${n}` : `names-folder ${n}`);
      for (const [i, n] of names.entries()) {
        const data = Buffer.from(`content of ${n}`);
        await put(p, dir(`names/${n}`), data);
        expect((await p.stat(dir(`names/${n}`))).name, n).toBe(n);
        expect(await text(dir(`names/${n}`)), n).toBe(data.toString());
        if (i < 3) {
          await p.mkdir(dir(folderOf(n)));
          await put(p, dir(`${folderOf(n)}/inside ${n}`), data);
        }
      }
      const listed = (await listAll(p, dir('names'))).entries;
      const files = listed.filter((e) => e.kind === 'file').map((e) => e.name);
      expect(files.sort()).toEqual([...names].sort());
      const folders = listed.filter((e) => e.kind === 'dir').map((e) => e.name);
      if (nested) {
        expect(folders.sort()).toEqual(
          names
            .slice(0, 3)
            .map((n) => `folder ${n}`)
            .sort(),
        );
      } else {
        expect(folders).toEqual([]);
        for (const n of names.slice(0, 3))
          expect((await p.stat(dir(folderOf(n)))).name).toBe(`${rootName}-names-folder ${n}`);
      }
      for (const e of listed) expect(e.path).toBe(dir(`names/${e.name}`));
      const inner = await listAll(p, dir(folderOf(names[1]!)));
      expect(inner.entries.map((e) => e.name)).toEqual([`inside ${names[1]}`]);
      if (!canRename) {
        expect(await errorCode(p.rename(dir(`names/${names[2]}`), `renamed ${names[3]}`))).toBe('not_supported');
        expect(await text(dir(`names/${names[2]}`))).toBe(`content of ${names[2]}`);
        return;
      }
      const renamed = await p.rename(dir(`names/${names[2]}`), `renamed ${names[3]}`);
      expect(renamed.name).toBe(`renamed ${names[3]}`);
      expect(await text(renamed.path)).toBe(`content of ${names[2]}`);
    });

    it('serves ranged reads', async () => {
      const data = patternBytes(300_000, 2);
      const path = file('range/r.bin');
      await put(p, path, data);
      const read = async (start: number, end?: number) =>
        readAll(await p.openRead(path, { range: end === undefined ? { start } : { start, end } }));
      expect((await read(0, 0)).equals(data.subarray(0, 1))).toBe(true);
      expect((await read(10, 19)).equals(data.subarray(10, 20))).toBe(true);
      expect((await read(123_456, 234_567)).equals(data.subarray(123_456, 234_568))).toBe(true);
      expect((await read(299_990)).equals(data.subarray(299_990))).toBe(true);
      expect((await read(0, data.length - 1)).equals(data)).toBe(true);
      expect((await read(299_000, 999_999)).equals(data.subarray(299_000))).toBe(true);
    });

    it(
      overwrite === true
        ? 'overwrites an existing file'
        : overwrite === 'keep-both'
          ? 'writing an existing name keeps both files'
          : 'refuses to overwrite an existing file',
      async () => {
        const path = file('over/f.txt');
        await put(p, path, Buffer.from('first version, longer'));
        if (overwrite === 'keep-both') {
          const e = await put(p, path, Buffer.from('second'));
          expect(e.size).toBe(6);
          expect(await text(e.path)).toBe('second');
          const listed = (await listAll(p, dir('over'))).entries;
          expect(listed).toHaveLength(2);
          expect(new Set(listed.map((x) => x.path)).size).toBe(2);
          const contents = await Promise.all(listed.map((x) => text(x.path)));
          expect(contents.sort()).toEqual(['first version, longer', 'second']);
          return;
        }
        if (overwrite === false) {
          expect(['exists', 'not_supported']).toContain(await errorCode(put(p, path, Buffer.from('second'))));
          expect(await text(path)).toBe('first version, longer');
          expect((await listAll(p, dir('over'))).entries.map((x) => x.name)).toEqual([typed('f.txt')]);
          return;
        }
        const e = await put(p, path, Buffer.from('second'));
        expect(e.size).toBe(6);
        expect((await p.stat(path)).size).toBe(6);
        expect(await text(path)).toBe('second');
        const listed = await listAll(p, dir('over'));
        expect(listed.entries.map((x) => x.name)).toEqual([typed('f.txt')]);
      },
    );

    it(canRename ? 'renames files and folders in place, refusing to overwrite' : 'refuses to rename', async () => {
      await put(p, file('ren/a.txt'), Buffer.from('aaa'));
      await put(p, file('ren/b.txt'), Buffer.from('bbb'));
      if (!canRename) {
        expect(await errorCode(p.rename(file('ren/a.txt'), typed('c.txt')))).toBe('not_supported');
        expect(await text(file('ren/a.txt'))).toBe('aaa');
        expect(await errorCode(p.stat(file('ren/c.txt')))).toBe('not_found');
        const folder = nested ? dir('ren/folder') : dir('ren');
        if (nested) await put(p, file('ren/folder/x.txt'), Buffer.from('xxx'));
        expect(await errorCode(p.rename(folder, nested ? 'moved folder' : `${rootName}-ren-moved`))).toBe(
          'not_supported',
        );
        expect((await p.stat(folder)).kind).toBe('dir');
        return;
      }
      // The folder renamed: inside the case folder, or a top-level one without nesting.
      const folder = nested ? 'ren/folder' : 'ren-folder';
      const moved = nested ? 'ren/moved folder' : 'ren-moved folder';
      const inner = nested ? 'inner/' : '';
      await put(p, file(`${folder}/${inner}x.txt`), Buffer.from('xxx'));
      const r = await p.rename(file('ren/a.txt'), typed('c.txt'));
      expect(r).toMatchObject({ path: file('ren/c.txt'), name: typed('c.txt'), kind: 'file', size: 3 });
      expect(await errorCode(p.stat(file('ren/a.txt')))).toBe('not_found');
      expect(await text(file('ren/c.txt'))).toBe('aaa');
      expect(await errorCode(p.rename(file('ren/c.txt'), typed('b.txt')))).toBe('exists');
      expect(await text(file('ren/b.txt'))).toBe('bbb');
      const d = await p.rename(dir(folder), nested ? 'moved folder' : `${rootName}-ren-moved folder`);
      expect(d).toMatchObject({ path: dir(moved), kind: 'dir' });
      expect(await errorCode(p.stat(dir(folder)))).toBe('not_found');
      expect(await text(file(`${moved}/${inner}x.txt`))).toBe('xxx');
      expect(await errorCode(p.rename(file('ren/missing.txt'), typed('z.txt')))).toBe('not_found');
      expect(await errorCode(p.rename(file('ren/b.txt'), 'a/b'))).toBe('invalid_name');
    });

    it(canRemove ? 'removes files and whole folder trees' : 'refuses to remove files and folders', async () => {
      if (!canRemove) {
        await put(p, file('del/keep.txt'), Buffer.from('k'));
        expect(await errorCode(p.remove(file('del/keep.txt')))).toBe('not_supported');
        expect(await errorCode(p.rmdir(dir('del')))).toBe('not_supported');
        expect(await text(file('del/keep.txt'))).toBe('k');
        expect((await p.stat(dir('del'))).kind).toBe('dir');
        expect((await listAll(p, dir('del'))).entries.map((e) => e.name)).toEqual([typed('keep.txt')]);
        return;
      }
      // The tree removed: inside the case folder, or a top-level folder of files without nesting.
      const tree = nested ? 'del/tree' : 'del-tree';
      const deepFile = nested ? 'del/tree/x/y/z.txt' : 'del-tree/z.txt';
      await put(p, file(deepFile), Buffer.from('z'));
      await put(p, file(nested ? 'del/tree/x/y2.txt' : 'del-tree/y2.txt'), Buffer.from('y'));
      if (nested) await p.mkdir(dir('del/tree/empty'));
      await put(p, file('del/keep.txt'), Buffer.from('k'));
      await p.rmdir(dir(tree));
      expect(await errorCode(p.stat(dir(tree)))).toBe('not_found');
      expect(await errorCode(p.stat(file(deepFile)))).toBe('not_found');
      expect((await listAll(p, dir('del'))).entries.map((e) => e.name)).toEqual([typed('keep.txt')]);
      await p.remove(file('del/keep.txt'));
      expect(await errorCode(p.stat(file('del/keep.txt')))).toBe('not_found');
      expect(await errorCode(p.remove(file('del/keep.txt')))).toBe('not_found');
      expect(await errorCode(p.rmdir(dir(nested ? 'del/none' : 'del-none')))).toBe('not_found');
    });

    it('maps not-found, exists and wrong-kind errors to their codes', async () => {
      const f = file('errs/file.txt');
      await put(p, f, Buffer.from('f'));
      // A folder: inside the case folder, or the case's own top-level folder without nesting.
      const folder = nested ? dir('errs/folder') : dir('errs');
      if (nested) await p.mkdir(folder);
      expect(await errorCode(p.stat(dir('errs/missing')))).toBe('not_found');
      expect(await errorCode(p.openRead(dir('errs/missing')))).toBe('not_found');
      expect(await errorCode(p.list(dir(nested ? 'errs/missing' : 'errs-missing')))).toBe('not_found');
      expect(await errorCode(p.list(f))).toBe('not_dir');
      expect(await errorCode(p.rmdir(f))).toBe(canRemove ? 'not_dir' : 'not_supported');
      expect(await errorCode(p.remove(folder))).toBe(canRemove ? 'is_dir' : 'not_supported');
      expect(await errorCode(p.openRead(folder))).toBe('is_dir');
      expect(await errorCode(p.mkdir(f))).toBe(nested ? 'exists' : 'not_supported');
      expect(await errorCode(p.stat(dir('errs/../escape')))).toBe('invalid_name');
      expect(await errorCode(p.rmdir('/'))).toBe('permission');
    });

    it('refuses bad credentials and forbidden paths with auth and permission codes', async () => {
      if (fx.forbiddenPath) {
        const fp = fx.forbiddenPath;
        expect(await errorCode(p.openRead(fp))).toBe('permission');
        expect(await errorCode(p.put(fp, bufferStream(Buffer.from('no')), { size: 2 }))).toBe('permission');
      }
      if (fx.badCredentials) {
        const bad = await fx.badCredentials();
        try {
          expect(['auth_invalid', 'auth_expired']).toContain(await errorCode(bad.list('/')));
          const err = await bad.list('/').catch((e: unknown) => e);
          expect((err as ProviderError).retry).toBe('fatal');
        } finally {
          await bad.close?.();
        }
      }
      // Every backend must offer at least one of the two checks.
      expect(Boolean(fx.forbiddenPath) || Boolean(fx.badCredentials)).toBe(true);
    });

    it(
      'pages through thousands of entries without losing or repeating any',
      async () => {
        const bases = Array.from({ length: pagingCount }, (_, i) => `f${String(i).padStart(5, '0')}.txt`);
        await mapLimit(bases, 16, async (n) => {
          await put(p, file(`paging/${n}`), Buffer.from(n));
        });
        const { entries, pages } = await listAll(p, dir('paging'), 1000);
        const got = entries.map((e) => e.name);
        expect(new Set(got).size).toBe(got.length);
        expect(got.sort()).toEqual(bases.map(typed).sort());
        expect(entries.every((e) => e.size === 10 && e.kind === 'file')).toBe(true);
        expect(pages).toBeGreaterThanOrEqual(1);
        if (p.listRecursive) {
          let n = 0;
          for await (const batch of p.listRecursive(dir('paging'))) n += batch.filter((e) => e.kind === 'file').length;
          expect(n).toBe(pagingCount);
        }
      },
      slow,
    );

    it(
      'writes a big file through parallel chunks (multipart) and reads it back intact',
      async () => {
        const path = file('big/chunked.bin');
        if (p.openChunkWriter && !chunksTaken) {
          expect(await errorCode(p.openChunkWriter(path, { size: bigFileSize }))).toBe('not_supported');
          expect((await listAll(p, dir('big')).catch(() => ({ entries: [] }))).entries).toEqual([]);
        }
        if (!p.openChunkWriter || !chunksTaken) {
          // Without a chunk writer the same bytes go through put().
          const data = patternBytes(Math.min(bigFileSize, 64 * MiB), 3);
          await put(p, path, data);
          expect((await md5OfStream(await p.openRead(path))).md5).toBe(createHash('md5').update(data).digest('hex'));
          return;
        }
        const modTime = new Date('2022-02-02T02:02:02.000Z');
        const w = await p.openChunkWriter(path, { size: bigFileSize, modTime });
        expect(w.chunkSize).toBeGreaterThan(0);
        const chunks = Math.ceil(bigFileSize / w.chunkSize);
        // Real multipart: at least two chunks however small the configured size.
        expect(chunks).toBeGreaterThanOrEqual(2);
        const expected = createHash('md5');
        const order = Array.from({ length: chunks }, (_, i) => i);
        const dataOf = (i: number) => patternBytes(Math.min(w.chunkSize, bigFileSize - i * w.chunkSize), 1000 + i);
        for (const i of order) expected.update(dataOf(i));
        // Chunks go out in reverse order, a few at once: order must not matter.
        await mapLimit([...order].reverse(), Math.max(1, w.concurrency), async (i) => {
          await w.writeChunk(i, dataOf(i));
        });
        expect(await errorCode(p.stat(path))).toBe('not_found');
        const e = await w.close();
        expect(e.size).toBe(bigFileSize);
        const st = await p.stat(path);
        expect(st.size).toBe(bigFileSize);
        if (p.features.setModTime)
          expect(Math.abs((st.modTime?.getTime() ?? 0) - modTime.getTime())).toBeLessThan(precision);
        const got = await md5OfStream(await p.openRead(path));
        expect(got.size).toBe(bigFileSize);
        expect(got.md5).toBe(expected.digest('hex'));
        const tail = await readAll(await p.openRead(path, { range: { start: bigFileSize - 10 } }));
        expect(tail.equals(dataOf(chunks - 1).subarray(-10))).toBe(true);
        if (canRemove) await p.remove(path);
      },
      slow,
    );

    it(
      'streams large files of unknown and of known size through put()',
      async () => {
        const data = patternBytes(streamFileSize, 4);
        const progress: number[] = [];
        const unknown = file('stream/unknown.bin');
        const e = await p.put(
          unknown,
          bufferStream(data, 1000 * 1000 + 7),
          { size: -1 },
          { onProgress: (n) => progress.push(n) },
        );
        expect(e.size).toBe(data.length);
        expect(progress.length).toBeGreaterThan(0);
        expect(progress[progress.length - 1]).toBe(data.length);
        const md5 = createHash('md5').update(data).digest('hex');
        expect(await md5OfStream(await p.openRead(unknown))).toEqual({ md5, size: data.length });
        const known = await p.put(file('stream/known.bin'), bufferStream(data, 64 * 1024), { size: data.length });
        expect(known.size).toBe(data.length);
        expect(await md5OfStream(await p.openRead(file('stream/known.bin')))).toEqual({ md5, size: data.length });
        // A body shorter than announced is refused and leaves nothing behind.
        const short = p.put(file('stream/short.bin'), bufferStream(data.subarray(0, 1000)), { size: data.length });
        expect(['corrupted', 'network', 'server']).toContain(await errorCode(short));
        expect(await errorCode(p.stat(file('stream/short.bin')))).toBe('not_found');
      },
      slow,
    );

    it('keeps modification times given on write', async () => {
      const modTime = new Date('2020-01-02T03:04:05.000Z');
      const path = file('mtime/m.txt');
      const e = await put(p, path, Buffer.from('m'), modTime);
      const st = await p.stat(path);
      if (p.features.setModTime) {
        expect(Math.abs((st.modTime?.getTime() ?? 0) - modTime.getTime())).toBeLessThan(precision);
        expect(Math.abs((e.modTime?.getTime() ?? 0) - modTime.getTime())).toBeLessThan(precision);
        const listed = (await listAll(p, dir('mtime'))).entries[0];
        // Listings of object stores may show the upload time; stat must show the kept one.
        expect(listed?.modTime).toBeInstanceOf(Date);
      } else {
        expect(st.modTime).toBeInstanceOf(Date);
      }
    });

    it('handles concurrent writes to one new folder and to one path', async () => {
      const ids = Array.from({ length: concurrentWrites }, (_, i) => i);
      const fresh = nested ? 'conc/new' : 'conc-new';
      await Promise.all(ids.map((i) => put(p, file(`${fresh}/f${i}.bin`), patternBytes(1000 + i, 50 + i))));
      const listed = (await listAll(p, dir(fresh))).entries;
      expect(listed.map((e) => [e.name, e.size]).sort()).toEqual(ids.map((i) => [typed(`f${i}.bin`), 1000 + i]).sort());
      const versions = ids.slice(0, 4).map((i) => patternBytes(5000 + i, 70 + i));
      const same = file('conc/same.bin');
      const settled = await Promise.allSettled(versions.map((v) => put(p, same, v)));
      const inConc = (await listAll(p, dir('conc'))).entries;
      const folders = nested ? ['new'] : [];
      expect(inConc.filter((e) => e.kind === 'dir').map((e) => e.name)).toEqual(folders);
      const files = inConc.filter((e) => e.kind === 'file');
      if (overwrite === 'keep-both') {
        // Every write is kept, each under its own path.
        expect(settled.map((s) => s.status)).toEqual(versions.map(() => 'fulfilled'));
        expect(new Set(files.map((e) => e.path)).size).toBe(versions.length);
        const kept = await Promise.all(files.map(async (e) => readAll(await p.openRead(e.path))));
        for (const v of versions) expect(kept.filter((k) => k.equals(v))).toHaveLength(1);
        return;
      }
      if (overwrite === false) {
        expect(settled.some((s) => s.status === 'fulfilled')).toBe(true);
        for (const s of settled)
          if (s.status === 'rejected')
            expect(['exists', 'not_supported']).toContain(await errorCode(Promise.reject(s.reason)));
      } else {
        expect(settled.map((s) => s.status)).toEqual(versions.map(() => 'fulfilled'));
      }
      expect(files.map((e) => e.name)).toEqual([typed('same.bin')]);
      const final = await readAll(await p.openRead(same));
      if (atomicOverwrite) expect(versions.some((v) => v.equals(final))).toBe(true);
      else expect(versions.map((v) => v.length)).toContain(final.length);
    });

    it('a write cancelled mid-stream leaves nothing visible', async () => {
      await p.mkdir(dir('cancel'));
      const ac = new AbortController();
      let sent = 0;
      const body = new Readable({
        read() {
          if (sent >= 3 * MiB && !ac.signal.aborted) ac.abort();
          sent += 256 * 1024;
          setTimeout(() => this.push(patternBytes(256 * 1024, sent)), 1);
        },
      });
      expect(await errorCode(p.put(file('cancel/partial.bin'), body, { size: -1 }, { signal: ac.signal }))).toBe(
        'canceled',
      );
      const ac2 = new AbortController();
      let sent2 = 0;
      const body2 = new Readable({
        read() {
          sent2 += 1024 * 1024;
          if (sent2 > 20 * MiB) ac2.abort();
          this.push(patternBytes(1024 * 1024, sent2));
        },
      });
      expect(
        await errorCode(p.put(file('cancel/partial-big.bin'), body2, { size: 64 * MiB }, { signal: ac2.signal })),
      ).toBe('canceled');
      if (p.openChunkWriter && chunksTaken) {
        const w = await p.openChunkWriter(file('cancel/chunked.bin'), { size: 3 * 8 * MiB });
        await w.writeChunk(0, patternBytes(w.chunkSize, 9));
        await w.abort();
      }
      expect(await errorCode(p.stat(file('cancel/partial.bin')))).toBe('not_found');
      expect(await errorCode(p.stat(file('cancel/partial-big.bin')))).toBe('not_found');
      expect(await errorCode(p.stat(file('cancel/chunked.bin')))).toBe('not_found');
      expect((await listAll(p, dir('cancel'))).entries).toEqual([]);
      // A cancelled read stops its stream.
      await put(p, file('cancel/read.bin'), patternBytes(4 * MiB, 10));
      const ac3 = new AbortController();
      const stream = await p.openRead(file('cancel/read.bin'), { signal: ac3.signal });
      let got = 0;
      const reading = (async () => {
        for await (const c of stream) {
          got += (c as Buffer).length;
          if (got > 0) ac3.abort();
        }
      })();
      await expect(reading).rejects.toBeTruthy();
      expect(got).toBeLessThan(4 * MiB);
    });

    it('a write whose source fails before or as the upload takes it fails, leaves nothing, and throws nothing past it', async () => {
      // A cancel or a broken download destroys the stream being written at once, often while the
      // backend still waits for a connection or a folder: the failure must reach the put, not end
      // the process as an 'error' event nobody listened to.
      await p.mkdir(dir('failing'));
      const uncaught: unknown[] = [];
      const heard = (err: unknown) => uncaught.push(err);
      process.prependListener('uncaughtException', heard);
      try {
        for (const [i, delayMs] of [0, 2, 20].entries()) {
          const body = new Readable({
            read() {
              setTimeout(() => this.push(patternBytes(64 * 1024, i)), 1);
            },
          });
          body.on('error', () => undefined); // the caller's listener (see Provider.put)
          const writing = errorCode(p.put(file(`failing/f${i}.bin`), body, { size: 4 * MiB }));
          if (delayMs === 0) body.destroy(new Error('the source failed'));
          else setTimeout(() => body.destroy(new Error('the source failed')), delayMs);
          expect(await writing).not.toBe('ok');
        }
        await new Promise((r) => setTimeout(r, 50));
      } finally {
        process.off('uncaughtException', heard);
      }
      expect(uncaught).toEqual([]);
      expect((await listAll(p, dir('failing'))).entries).toEqual([]);
    });

    it('reports hashes that match the content', async () => {
      const data = patternBytes(200_000, 5);
      const path = file('hash/h.bin');
      const e = await put(p, path, data);
      const st = await p.stat(path);
      const listed = (await listAll(p, dir('hash'))).entries[0];
      let checked = 0;
      for (const type of p.hashes) {
        const expected = await hashBuffer(data, type);
        for (const reported of [e.hashes?.[type], st.hashes?.[type], listed?.hashes?.[type]]) {
          if (reported !== undefined) {
            expect(reported, type).toBe(expected);
            checked++;
          }
        }
        if (p.hash) {
          const h = await p.hash(path, type);
          if (h !== undefined) {
            expect(h, type).toBe(expected);
            checked++;
          }
        }
        expect(await hashBuffer(Buffer.from('other'), type)).not.toBe(expected);
      }
      if (p.hashes.size > 0) expect(checked).toBeGreaterThan(0);
    });

    it('reports quota where the service has it', async () => {
      if (!p.about) {
        expect(p.features.about).toBe(false);
        return;
      }
      const a = await p.about();
      const values = [a.total, a.used, a.free, a.trashed].filter((v) => v !== undefined);
      expect(values.length).toBeGreaterThan(0);
      for (const v of values) expect(v).toBeGreaterThanOrEqual(0);
      if (a.total !== undefined && a.used !== undefined) expect(a.used).toBeLessThanOrEqual(a.total);
    });

    it('copies and moves on the server where it can, and trashes where it has a trash', async () => {
      await put(p, file('srv/src.txt'), Buffer.from('server side'), new Date('2019-05-05T05:05:05Z'));
      const src = await p.stat(file('srv/src.txt'));
      if (p.copy) {
        const to = file(nested ? 'srv/copies/copy.txt' : 'srv-copies/copy.txt');
        const c = await p.copy(src, to);
        expect(c).toMatchObject({ path: to, size: src.size, kind: 'file' });
        expect(await text(c.path)).toBe('server side');
        expect((await p.stat(src.path)).size).toBe(src.size);
      }
      if (p.move) {
        const to = file(nested ? 'srv/moved/deeper/moved.txt' : 'srv-moved/moved.txt');
        const m = await p.move(src, to);
        expect(m).toMatchObject({ path: to, size: src.size });
        expect(await errorCode(p.stat(src.path))).toBe('not_found');
        // A folder moved: inside the case folder, or a top-level one without nesting.
        const from = nested ? 'srv/dirmove/a' : 'srv-dirmove';
        const dest = nested ? 'srv/dirmoved' : 'srv-dirmoved';
        await put(p, file(`${from}/b.txt`), Buffer.from('b'));
        const dm = await p.move(await p.stat(dir(from)), dir(dest));
        expect(dm.kind).toBe('dir');
        expect(await text(file(`${dest}/b.txt`))).toBe('b');
      }
      if (p.trash) {
        await put(p, file('srv/trash-me.txt'), Buffer.from('t'));
        await p.trash(file('srv/trash-me.txt'));
        expect(await errorCode(p.stat(file('srv/trash-me.txt')))).toBe('not_found');
        expect((await listAll(p, dir('srv'))).entries.map((e) => e.name)).not.toContain(typed('trash-me.txt'));
      }
    });

    it('lists a whole tree recursively where it can', async () => {
      const tree = nested ? ['rec/a/1.txt', 'rec/a/b/2.txt'] : ['rec/1.txt', 'rec/2.txt'];
      for (const [i, sub] of tree.entries()) await put(p, file(sub), Buffer.from(String(i + 1)));
      if (nested) await p.mkdir(dir('rec/empty'));
      if (!p.listRecursive) return;
      const all: Entry[] = [];
      for await (const batch of p.listRecursive(dir('rec'))) all.push(...batch);
      const folders = nested ? [`dir:${dir('rec/a')}`, `dir:${dir('rec/a/b')}`, `dir:${dir('rec/empty')}`] : [];
      expect(all.map((e) => `${e.kind}:${e.path}`).sort()).toEqual(
        [...folders, ...tree.map((sub) => `file:${file(sub)}`)].sort(),
      );
    });
  });
}
