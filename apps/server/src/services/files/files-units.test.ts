import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Code } from '@skyferry/contract';
import { ProviderError } from '@skyferry/providers';
import { SecretBox } from '../crypto.ts';
import { mapFileError } from './errors.ts';
import { commonParent, parseRange } from './files-service.ts';
import { signLink, verifyLink } from './links.ts';
import { ListingCache } from './listing-cache.ts';
import { isSafeInline, mimeOf } from './mime.ts';
import { zipLength, zipStream, type ZipEntry } from './zip.ts';

const page = (name: string) => ({
  items: [{ id: name, name, path: `/${name}`, type: 1 as const, size: 1, modified: 0, mime_type: null }],
  page_token: null,
});

describe('listing cache (per cloud and parent folder: value list and page_token)', () => {
  it('keeps pages per cloud, folder, token and size until they expire', () => {
    let now = 0;
    const cache = new ListingCache({ ttlMs: 10_000, now: () => now });
    cache.set('c1', '/a', null, 100, page('x'));
    cache.set('c1', '/a', 'next', 100, page('y'));
    cache.set('c2', '/a', null, 100, page('z'));
    expect(cache.get('c1', '/a', null, 100)?.items[0]?.name).toBe('x');
    expect(cache.get('c1', '/a', 'next', 100)?.items[0]?.name).toBe('y');
    expect(cache.get('c1', '/a', null, 50)).toBeUndefined();
    expect(cache.get('c2', '/a', null, 100)?.items[0]?.name).toBe('z');
    now = 10_001;
    expect(cache.get('c1', '/a', null, 100)).toBeUndefined();
  });

  it('drops a folder, a tree, or a whole cloud; the least recently used go first', () => {
    const cache = new ListingCache({ maxEntries: 3 });
    cache.set('c', '/a', null, 1, page('a'));
    cache.set('c', '/a/b', null, 1, page('b'));
    cache.set('c', '/ab', null, 1, page('ab'));
    cache.invalidateTree('c', '/a');
    expect([cache.get('c', '/a', null, 1), cache.get('c', '/a/b', null, 1)]).toEqual([undefined, undefined]);
    expect(cache.get('c', '/ab', null, 1)).toBeDefined();
    cache.set('c', '/1', null, 1, page('1'));
    cache.set('c', '/2', null, 1, page('2'));
    cache.get('c', '/ab', null, 1);
    cache.set('c', '/3', null, 1, page('3'));
    expect(cache.get('c', '/1', null, 1)).toBeUndefined();
    expect(cache.get('c', '/ab', null, 1)).toBeDefined();
    cache.invalidateCloud('c');
    expect(cache.size).toBe(0);
  });
});

describe('ranges', () => {
  it('reads one range, a suffix, an open end; refuses what lies outside; ignores others', () => {
    expect(parseRange('bytes=0-9', 100)).toEqual({ start: 0, end: 9 });
    expect(parseRange('bytes=90-', 100)).toEqual({ start: 90, end: 99 });
    expect(parseRange('bytes=-10', 100)).toEqual({ start: 90, end: 99 });
    expect(parseRange('bytes=50-500', 100)).toEqual({ start: 50, end: 99 });
    expect(parseRange('bytes=100-', 100)).toBe('unsatisfiable');
    expect(parseRange('bytes=-0', 100)).toBe('unsatisfiable');
    expect(parseRange('bytes=0-1,5-6', 100)).toBeNull();
    expect(parseRange('items=0-1', 100)).toBeNull();
    expect(parseRange(undefined, 100)).toBeNull();
  });
});

describe('signed download links', () => {
  const box = new SecretBox('x'.repeat(40));
  it('round-trip, expire, and fail when changed or signed with another secret', () => {
    const token = signLink(box, {
      identity: { kind: 'user', userId: 'u1' },
      cloudId: 'c1',
      paths: ['/a b'],
      name: 'n',
      expiresAt: 1000,
    });
    expect(verifyLink(box, token, 999)).toMatchObject({
      identity: { kind: 'user', userId: 'u1' },
      cloudId: 'c1',
      paths: ['/a b'],
      name: 'n',
    });
    expect(verifyLink(box, token, 1001)).toBeUndefined();
    const [body, mac] = token.split('.') as [string, string];
    const forged = Buffer.from(Buffer.from(body, 'base64url').toString().replace('u1', 'u2')).toString('base64url');
    expect(verifyLink(box, `${forged}.${mac}`, 999)).toBeUndefined();
    expect(verifyLink(new SecretBox('y'.repeat(40)), token, 999)).toBeUndefined();
  });
});

describe('provider errors to envelope codes', () => {
  const cloud = { id: 'c', label: 'My bucket' };
  it('maps each code as the catalogue says', () => {
    const code = (e: ProviderError) => {
      const m = mapFileError(e, cloud);
      return [m.error.code, m.error.status, m.expired];
    };
    expect(code(new ProviderError('not_found', 'x'))).toEqual([Code.NOT_FOUND, 404, false]);
    expect(code(new ProviderError('auth_expired', 'x'))).toEqual([Code.CLOUD_AUTH_EXPIRED, 401, true]);
    expect(code(new ProviderError('quota', 'x'))).toEqual([Code.INSUFFICIENT_TARGET_STORAGE, 424, false]);
    expect(code(new ProviderError('rate_limited', 'x'))).toEqual([Code.RATE_LIMITED, 429, false]);
    expect(code(new ProviderError('exists', 'x'))).toEqual([Code.ALREADY_EXISTS, 409, false]);
    expect(code(new ProviderError('network', 'x'))).toEqual([Code.CLOUD_UNAVAILABLE, 424, false]);
    expect(code(new ProviderError('address_not_allowed', 'x'))).toEqual([Code.FORBIDDEN, 403, false]);
    const other = mapFileError(new ProviderError('server', 'x', { serviceCode: 'InternalError' }), cloud).error;
    expect([other.code, other.key, other.params]).toEqual([
      Code.CLOUD_OPERATION_ERROR,
      'cloud_operation_error',
      { code: 'InternalError' },
    ]);
    expect(mapFileError(new ProviderError('quota', 'x'), cloud).error.params).toEqual({ cloud_name: 'My bucket' });
  });
});

describe('content types', () => {
  it('guesses by extension and shows inline only what cannot run script', () => {
    expect(mimeOf('a.PNG')).toBe('image/png');
    expect(mimeOf('a.unknown')).toBe('application/octet-stream');
    expect(isSafeInline('image/jpeg')).toBe(true);
    expect(isSafeInline('image/svg+xml')).toBe(false);
    expect(isSafeInline('text/html; charset=utf-8')).toBe(false);
  });
  it('finds the common parent of several paths', () => {
    expect(commonParent(['/a/b/c.txt', '/a/b/d/e'])).toBe('/a/b');
    expect(commonParent(['/x', '/y/z'])).toBe('/');
  });
});

describe('streaming zip', () => {
  const read = async (s: Readable) => {
    const chunks: Buffer[] = [];
    for await (const c of s) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  };

  it('writes a zip unzip accepts, with UTF-8 names, folders, and the exact length announced', async () => {
    const entries: ZipEntry[] = [
      { name: 'docs', dir: true, size: 0 },
      { name: 'docs/ünïcödé 写真.txt', dir: false, size: 5, open: async () => Readable.from([Buffer.from('hello')]) },
      { name: 'empty.bin', dir: false, size: 0, open: async () => Readable.from([]) },
    ];
    const zip = await read(zipStream(entries));
    expect(zip.length).toBe(zipLength(entries));
    const dir = mkdtempSync(join(tmpdir(), 'skyferry-zip-unit-'));
    try {
      writeFileSync(join(dir, 'a.zip'), zip);
      execFileSync('unzip', ['-q', join(dir, 'a.zip'), '-d', join(dir, 'out')]);
      expect(readFileSync(join(dir, 'out', 'docs', 'ünïcödé 写真.txt'), 'utf8')).toBe('hello');
      expect(readFileSync(join(dir, 'out', 'empty.bin')).length).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('uses ZIP64 end records past 65,535 entries (still read by unzip)', async () => {
    const entries: ZipEntry[] = Array.from({ length: 70_000 }, (_, i) => ({
      name: `f${i}.txt`,
      dir: false,
      size: 1,
      open: async () => Readable.from([Buffer.from('x')]),
    }));
    const zip = await read(zipStream(entries));
    expect(zip.length).toBe(zipLength(entries));
    expect(zip.includes(Buffer.from([0x50, 0x4b, 0x06, 0x06]))).toBe(true);
    const dir = mkdtempSync(join(tmpdir(), 'skyferry-zip64-'));
    try {
      writeFileSync(join(dir, 'b.zip'), zip);
      const listing = execFileSync('unzip', ['-Z1', join(dir, 'b.zip')], { maxBuffer: 64 * 1024 * 1024 })
        .toString()
        .trim()
        .split('\n');
      expect(listing).toHaveLength(70_000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails the stream when a file delivers another size than listed', async () => {
    const entries: ZipEntry[] = [
      { name: 'a', dir: false, size: 3, open: async () => Readable.from([Buffer.from('toolong')]) },
    ];
    await expect(read(zipStream(entries))).rejects.toThrow(/expected 3 bytes/);
  });
});
