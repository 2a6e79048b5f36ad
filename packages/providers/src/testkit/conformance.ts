import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../api/errors.ts';
import type { Entry, HashType, Provider } from '../api/types.ts';
import { hashBuffer } from '../hashing.ts';

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

async function mapLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
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

/**
 * The shared backend test suite (after rclone's fstests): every backend runs it against a real
 * server on 127.0.0.1. Each case works in its own folder under a fresh random root.
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
  const excluded = new Set(options.excludeNames ?? []);
  const names = [...defaultNames(maxNameLength), ...(options.extraNames ?? [])].filter((n) => !excluded.has(n));

  describe(`provider conformance: ${name}`, () => {
    let fx: ConformanceFixture;
    let p: Provider;
    const root = `/skyferry-conformance-${randomBytes(4).toString('hex')}`;
    const dir = (sub: string) => `${root}/${sub}`;

    beforeAll(async () => {
      fx = await setup();
      p = fx.provider;
      await p.mkdir(root);
    }, 120_000);

    afterAll(async () => {
      if (!fx) return;
      try {
        await p.rmdir(root).catch(() => undefined);
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

    it('creates nested folders, idempotently, and refuses a folder where a file is', async () => {
      await p.mkdir(dir('nested/a/b/c'));
      await p.mkdir(dir('nested/a/b/c'));
      for (const sub of ['nested', 'nested/a', 'nested/a/b', 'nested/a/b/c']) {
        expect((await p.stat(dir(sub))).kind).toBe('dir');
      }
      const listed = await listAll(p, dir('nested/a'));
      expect(listed.entries.map((e) => [e.name, e.kind, e.path])).toEqual([['b', 'dir', dir('nested/a/b')]]);
      expect((await listAll(p, dir('nested/a/b/c'))).entries).toEqual([]);
      await put(p, dir('nested/file.txt'), Buffer.from('x'));
      expect(await errorCode(p.mkdir(dir('nested/file.txt')))).toBe('exists');
    });

    it('writes, reads back, stats and lists a file; put creates missing parents', async () => {
      const data = patternBytes(100_000, 1);
      const e = await put(p, dir('basic/deep/er/file.bin'), data);
      expect(e.path).toBe(dir('basic/deep/er/file.bin'));
      expect(e.name).toBe('file.bin');
      expect(e.kind).toBe('file');
      expect(e.size).toBe(data.length);
      const st = await p.stat(dir('basic/deep/er/file.bin'));
      expect(st).toMatchObject({ kind: 'file', size: data.length, name: 'file.bin' });
      expect((await readAll(await p.openRead(dir('basic/deep/er/file.bin')))).equals(data)).toBe(true);
      const listed = await listAll(p, dir('basic/deep/er'));
      expect(listed.entries.map((x) => [x.name, x.size, x.kind])).toEqual([['file.bin', data.length, 'file']]);
      expect((await listAll(p, dir('basic'))).entries.map((x) => [x.name, x.kind])).toEqual([['deep', 'dir']]);
    });

    it('stores empty files', async () => {
      const e = await put(p, dir('empty/zero.txt'), Buffer.alloc(0));
      expect(e.size).toBe(0);
      expect((await p.stat(dir('empty/zero.txt'))).size).toBe(0);
      expect((await readAll(await p.openRead(dir('empty/zero.txt')))).length).toBe(0);
      const listed = await listAll(p, dir('empty'));
      expect(listed.entries.map((x) => [x.name, x.size, x.kind])).toEqual([['zero.txt', 0, 'file']]);
    });

    it('keeps Unicode, spaces, punctuation and long names exactly', async () => {
      for (const [i, n] of names.entries()) {
        const data = Buffer.from(`content of ${n}`);
        await put(p, dir(`names/${n}`), data);
        expect((await p.stat(dir(`names/${n}`))).name, n).toBe(n);
        expect((await readAll(await p.openRead(dir(`names/${n}`)))).toString(), n).toBe(data.toString());
        if (i < 3) {
          await p.mkdir(dir(`names/folder ${n}`));
          await put(p, dir(`names/folder ${n}/inside ${n}`), data);
        }
      }
      const listed = (await listAll(p, dir('names'))).entries;
      const files = listed.filter((e) => e.kind === 'file').map((e) => e.name);
      expect(files.sort()).toEqual([...names].sort());
      const folders = listed.filter((e) => e.kind === 'dir').map((e) => e.name);
      expect(folders.sort()).toEqual(
        names
          .slice(0, 3)
          .map((n) => `folder ${n}`)
          .sort(),
      );
      for (const e of listed) expect(e.path).toBe(dir(`names/${e.name}`));
      const inner = await listAll(p, dir(`names/folder ${names[1]}`));
      expect(inner.entries.map((e) => e.name)).toEqual([`inside ${names[1]}`]);
      const renamed = await p.rename(dir(`names/${names[2]}`), `renamed ${names[3]}`);
      expect(renamed.name).toBe(`renamed ${names[3]}`);
      expect((await readAll(await p.openRead(renamed.path))).toString()).toBe(`content of ${names[2]}`);
    });

    it('serves ranged reads', async () => {
      const data = patternBytes(300_000, 2);
      await put(p, dir('range/r.bin'), data);
      const path = dir('range/r.bin');
      const read = async (start: number, end?: number) =>
        readAll(await p.openRead(path, { range: end === undefined ? { start } : { start, end } }));
      expect((await read(0, 0)).equals(data.subarray(0, 1))).toBe(true);
      expect((await read(10, 19)).equals(data.subarray(10, 20))).toBe(true);
      expect((await read(123_456, 234_567)).equals(data.subarray(123_456, 234_568))).toBe(true);
      expect((await read(299_990)).equals(data.subarray(299_990))).toBe(true);
      expect((await read(0, data.length - 1)).equals(data)).toBe(true);
      expect((await read(299_000, 999_999)).equals(data.subarray(299_000))).toBe(true);
    });

    it('overwrites an existing file', async () => {
      const path = dir('over/f.txt');
      await put(p, path, Buffer.from('first version, longer'));
      const e = await put(p, path, Buffer.from('second'));
      expect(e.size).toBe(6);
      expect((await p.stat(path)).size).toBe(6);
      expect((await readAll(await p.openRead(path))).toString()).toBe('second');
      const listed = await listAll(p, dir('over'));
      expect(listed.entries.map((x) => x.name)).toEqual(['f.txt']);
    });

    it('renames files and folders in place, refusing to overwrite', async () => {
      await put(p, dir('ren/a.txt'), Buffer.from('aaa'));
      await put(p, dir('ren/b.txt'), Buffer.from('bbb'));
      await put(p, dir('ren/folder/inner/x.txt'), Buffer.from('xxx'));
      const r = await p.rename(dir('ren/a.txt'), 'c.txt');
      expect(r).toMatchObject({ path: dir('ren/c.txt'), name: 'c.txt', kind: 'file', size: 3 });
      expect(await errorCode(p.stat(dir('ren/a.txt')))).toBe('not_found');
      expect((await readAll(await p.openRead(dir('ren/c.txt')))).toString()).toBe('aaa');
      expect(await errorCode(p.rename(dir('ren/c.txt'), 'b.txt'))).toBe('exists');
      expect((await readAll(await p.openRead(dir('ren/b.txt')))).toString()).toBe('bbb');
      const d = await p.rename(dir('ren/folder'), 'moved folder');
      expect(d).toMatchObject({ path: dir('ren/moved folder'), kind: 'dir' });
      expect(await errorCode(p.stat(dir('ren/folder')))).toBe('not_found');
      expect((await readAll(await p.openRead(dir('ren/moved folder/inner/x.txt')))).toString()).toBe('xxx');
      expect(await errorCode(p.rename(dir('ren/missing.txt'), 'z.txt'))).toBe('not_found');
      expect(await errorCode(p.rename(dir('ren/b.txt'), 'a/b'))).toBe('invalid_name');
    });

    it('removes files and whole folder trees', async () => {
      await put(p, dir('del/tree/x/y/z.txt'), Buffer.from('z'));
      await put(p, dir('del/tree/x/y2.txt'), Buffer.from('y'));
      await p.mkdir(dir('del/tree/empty'));
      await put(p, dir('del/keep.txt'), Buffer.from('k'));
      await p.rmdir(dir('del/tree'));
      expect(await errorCode(p.stat(dir('del/tree')))).toBe('not_found');
      expect(await errorCode(p.stat(dir('del/tree/x/y/z.txt')))).toBe('not_found');
      expect((await listAll(p, dir('del'))).entries.map((e) => e.name)).toEqual(['keep.txt']);
      await p.remove(dir('del/keep.txt'));
      expect(await errorCode(p.stat(dir('del/keep.txt')))).toBe('not_found');
      expect(await errorCode(p.remove(dir('del/keep.txt')))).toBe('not_found');
      expect(await errorCode(p.rmdir(dir('del/none')))).toBe('not_found');
    });

    it('maps not-found, exists and wrong-kind errors to their codes', async () => {
      await put(p, dir('errs/file.txt'), Buffer.from('f'));
      await p.mkdir(dir('errs/folder'));
      expect(await errorCode(p.stat(dir('errs/missing')))).toBe('not_found');
      expect(await errorCode(p.openRead(dir('errs/missing')))).toBe('not_found');
      expect(await errorCode(p.list(dir('errs/missing')))).toBe('not_found');
      expect(await errorCode(p.list(dir('errs/file.txt')))).toBe('not_dir');
      expect(await errorCode(p.rmdir(dir('errs/file.txt')))).toBe('not_dir');
      expect(await errorCode(p.remove(dir('errs/folder')))).toBe('is_dir');
      expect(await errorCode(p.openRead(dir('errs/folder')))).toBe('is_dir');
      expect(await errorCode(p.mkdir(dir('errs/file.txt')))).toBe('exists');
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
        const names = Array.from({ length: pagingCount }, (_, i) => `f${String(i).padStart(5, '0')}.txt`);
        await mapLimit(names, 16, async (n) => {
          await put(p, dir(`paging/${n}`), Buffer.from(n));
        });
        const { entries, pages } = await listAll(p, dir('paging'), 1000);
        const got = entries.map((e) => e.name);
        expect(new Set(got).size).toBe(got.length);
        expect(got.sort()).toEqual(names);
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
        const path = dir('big/chunked.bin');
        if (!p.openChunkWriter) {
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
        await p.remove(path);
      },
      slow,
    );

    it(
      'streams large files of unknown and of known size through put()',
      async () => {
        const data = patternBytes(streamFileSize, 4);
        const progress: number[] = [];
        const e = await p.put(
          dir('stream/unknown.bin'),
          bufferStream(data, 1000 * 1000 + 7),
          { size: -1 },
          { onProgress: (n) => progress.push(n) },
        );
        expect(e.size).toBe(data.length);
        expect(progress.length).toBeGreaterThan(0);
        expect(progress[progress.length - 1]).toBe(data.length);
        const md5 = createHash('md5').update(data).digest('hex');
        expect(await md5OfStream(await p.openRead(dir('stream/unknown.bin')))).toEqual({ md5, size: data.length });
        const known = await p.put(dir('stream/known.bin'), bufferStream(data, 64 * 1024), { size: data.length });
        expect(known.size).toBe(data.length);
        expect(await md5OfStream(await p.openRead(dir('stream/known.bin')))).toEqual({ md5, size: data.length });
        // A body shorter than announced is refused and leaves nothing behind.
        const short = p.put(dir('stream/short.bin'), bufferStream(data.subarray(0, 1000)), { size: data.length });
        expect(['corrupted', 'network', 'server']).toContain(await errorCode(short));
        expect(await errorCode(p.stat(dir('stream/short.bin')))).toBe('not_found');
      },
      slow,
    );

    it('keeps modification times given on write', async () => {
      const modTime = new Date('2020-01-02T03:04:05.000Z');
      const e = await put(p, dir('mtime/m.txt'), Buffer.from('m'), modTime);
      const st = await p.stat(dir('mtime/m.txt'));
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
      await Promise.all(ids.map((i) => put(p, dir(`conc/new/f${i}.bin`), patternBytes(1000 + i, 50 + i))));
      const listed = (await listAll(p, dir('conc/new'))).entries;
      expect(listed.map((e) => [e.name, e.size]).sort()).toEqual(ids.map((i) => [`f${i}.bin`, 1000 + i]).sort());
      const versions = ids.slice(0, 4).map((i) => patternBytes(5000 + i, 70 + i));
      await Promise.all(versions.map((v) => put(p, dir('conc/same.bin'), v)));
      const final = await readAll(await p.openRead(dir('conc/same.bin')));
      if (atomicOverwrite) expect(versions.some((v) => v.equals(final))).toBe(true);
      else expect(versions.map((v) => v.length)).toContain(final.length);
      expect((await listAll(p, dir('conc'))).entries.map((e) => e.name).sort()).toEqual(['new', 'same.bin']);
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
      expect(await errorCode(p.put(dir('cancel/partial.bin'), body, { size: -1 }, { signal: ac.signal }))).toBe(
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
        await errorCode(p.put(dir('cancel/partial-big.bin'), body2, { size: 64 * MiB }, { signal: ac2.signal })),
      ).toBe('canceled');
      if (p.openChunkWriter) {
        const w = await p.openChunkWriter(dir('cancel/chunked.bin'), { size: 3 * 8 * MiB });
        await w.writeChunk(0, patternBytes(w.chunkSize, 9));
        await w.abort();
      }
      expect(await errorCode(p.stat(dir('cancel/partial.bin')))).toBe('not_found');
      expect(await errorCode(p.stat(dir('cancel/partial-big.bin')))).toBe('not_found');
      expect(await errorCode(p.stat(dir('cancel/chunked.bin')))).toBe('not_found');
      expect((await listAll(p, dir('cancel'))).entries).toEqual([]);
      // A cancelled read stops its stream.
      await put(p, dir('cancel/read.bin'), patternBytes(4 * MiB, 10));
      const ac3 = new AbortController();
      const stream = await p.openRead(dir('cancel/read.bin'), { signal: ac3.signal });
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

    it('reports hashes that match the content', async () => {
      const data = patternBytes(200_000, 5);
      const path = dir('hash/h.bin');
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
      await put(p, dir('srv/src.txt'), Buffer.from('server side'), new Date('2019-05-05T05:05:05Z'));
      const src = await p.stat(dir('srv/src.txt'));
      if (p.copy) {
        const c = await p.copy(src, dir('srv/copies/copy.txt'));
        expect(c).toMatchObject({ path: dir('srv/copies/copy.txt'), size: src.size, kind: 'file' });
        expect((await readAll(await p.openRead(c.path))).toString()).toBe('server side');
        expect((await p.stat(src.path)).size).toBe(src.size);
      }
      if (p.move) {
        const m = await p.move(src, dir('srv/moved/deeper/moved.txt'));
        expect(m).toMatchObject({ path: dir('srv/moved/deeper/moved.txt'), size: src.size });
        expect(await errorCode(p.stat(src.path))).toBe('not_found');
        await put(p, dir('srv/dirmove/a/b.txt'), Buffer.from('b'));
        const dm = await p.move(await p.stat(dir('srv/dirmove/a')), dir('srv/dirmoved'));
        expect(dm.kind).toBe('dir');
        expect((await readAll(await p.openRead(dir('srv/dirmoved/b.txt')))).toString()).toBe('b');
      }
      if (p.trash) {
        await put(p, dir('srv/trash-me.txt'), Buffer.from('t'));
        await p.trash(dir('srv/trash-me.txt'));
        expect(await errorCode(p.stat(dir('srv/trash-me.txt')))).toBe('not_found');
        expect((await listAll(p, dir('srv'))).entries.map((e) => e.name)).not.toContain('trash-me.txt');
      }
    });

    it('lists a whole tree recursively where it can', async () => {
      await put(p, dir('rec/a/1.txt'), Buffer.from('1'));
      await put(p, dir('rec/a/b/2.txt'), Buffer.from('2'));
      await p.mkdir(dir('rec/empty'));
      if (!p.listRecursive) return;
      const all: Entry[] = [];
      for await (const batch of p.listRecursive(dir('rec'))) all.push(...batch);
      expect(all.map((e) => `${e.kind}:${e.path}`).sort()).toEqual(
        [
          `dir:${dir('rec/a')}`,
          `file:${dir('rec/a/1.txt')}`,
          `dir:${dir('rec/a/b')}`,
          `file:${dir('rec/a/b/2.txt')}`,
          `dir:${dir('rec/empty')}`,
        ].sort(),
      );
    });
  });
}
