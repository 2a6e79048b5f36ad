import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createHasher, hashBuffer, hashStream, hashingStream } from './hashing.ts';

function pattern(size: number): Buffer {
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i++) b[i] = (i * 31 + 7) & 255;
  return b;
}

function chunked(data: Buffer, size: number): Readable {
  const parts: Buffer[] = [];
  for (let i = 0; i < data.length; i += size) parts.push(data.subarray(i, i + size));
  return Readable.from(parts);
}

const FOX = Buffer.from('The quick brown fox jumps over the lazy dog');
const BIG = pattern(9 * 1024 * 1024 + 123);

describe('hashing while bytes stream', () => {
  it('md5, sha1 and sha256 match node:crypto over odd chunk sizes', async () => {
    const stream = await hashingStream(['md5', 'sha1', 'sha256']);
    let seen = 0;
    await pipeline(
      chunked(BIG, 65_537),
      stream,
      new Writable({
        write(c: Buffer, _e, cb) {
          seen += c.length;
          cb();
        },
      }),
    );
    expect(seen).toBe(BIG.length);
    expect(stream.bytesSeen).toBe(BIG.length);
    const d = stream.digests();
    for (const t of ['md5', 'sha1', 'sha256'] as const) {
      expect(d[t]).toBe(createHash(t).update(BIG).digest('hex'));
    }
  });

  it('crc32 matches the standard check value', async () => {
    expect(await hashBuffer(Buffer.from('123456789'), 'crc32')).toBe('cbf43926');
    // Carried from chunk to chunk.
    expect((await hashStream(chunked(Buffer.from('123456789'), 4), ['crc32'])).crc32).toBe('cbf43926');
    expect(await hashBuffer(Buffer.alloc(0), 'crc32')).toBe('00000000');
  });

  // Reference values printed by `rclone hashsum quickxor|dropbox` for the same bytes.
  it('quickxor matches rclone (OneDrive) for empty, short and multi-block input', async () => {
    const hex = async (b: Buffer, chunk: number) =>
      Buffer.from((await hashStream(chunked(b, chunk), ['quickxor'])).quickxor as string, 'base64').toString('hex');
    expect(await hashBuffer(Buffer.alloc(0), 'quickxor')).toBe('AAAAAAAAAAAAAAAAAAAAAAAAAAA=');
    expect(await hex(FOX, 5)).toBe('6cc4a56f2b26c492fa4bbe57c1f31c4193a972be');
    expect(await hex(BIG, 1_000_003)).toBe('3ff2c8b16ffdd586da5200eb395aa4b308add057');
  });

  it('dropbox content hash matches rclone across 4 MiB block boundaries', async () => {
    expect(await hashBuffer(Buffer.alloc(0), 'dropbox')).toBe(
      'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    );
    expect(await hashBuffer(FOX, 'dropbox')).toBe('6d37795021e544d82b41850edf7aabab9a0ebe274e54a519840c4666f35b3937');
    const h = await hashStream(chunked(BIG, 3_000_001), ['dropbox']);
    expect(h.dropbox).toBe('fab198582439e4baf5565806dd49872e8842c7c1d6e6f5de1cd54991d6b7ff49');
  });

  it('many hashers at once never mix their files; a digest taken twice answers the same, and an update after it throws', async () => {
    const node = (type: string, data: Buffer) => createHash(type).update(data).digest('hex');
    // Many at once, updated in turns, then each digested, over several rounds.
    for (let round = 0; round < 3; round++) {
      const files = Array.from({ length: 80 }, (_, i) => pattern(1000 + i * 37 + round));
      const hashers = await Promise.all(files.map((_, i) => createHasher(i % 2 ? 'md5' : 'sha256')));
      for (let off = 0; off < 1000; off += 250) files.forEach((f, i) => hashers[i]!.update(f.subarray(off, off + 250)));
      files.forEach((f, i) => hashers[i]!.update(f.subarray(1000)));
      const digests = hashers.map((h) => h.digest());
      expect(digests).toEqual(files.map((f, i) => node(i % 2 ? 'md5' : 'sha256', f)));
      // A second digest answers the same, also after another file was hashed.
      const next = await createHasher('sha256');
      next.update(FOX);
      expect(hashers[0]!.digest()).toBe(digests[0]);
      expect(next.digest()).toBe(node('sha256', FOX));
      expect(() => hashers[0]!.update(FOX)).toThrow(/after its digest/);
    }
  });

  it('a stream that fails before its hashing starts rejects the hash, and nothing is thrown past it', async () => {
    // A file opened with a signal that is already aborted is destroyed at once; its error is emitted
    // while the hashers are still being made. Unheard, that event ended the process (Ctrl-C in a check).
    const uncaught: unknown[] = [];
    const heard = (err: unknown) => uncaught.push(err);
    process.prependListener('uncaughtException', heard);
    try {
      for (const type of ['md5', 'sha1', 'sha256', 'crc32', 'quickxor', 'dropbox'] as const) {
        const stream = new Readable({ read() {} });
        stream.destroy(new Error(`failed before hashing (${type})`));
        await expect(hashStream(stream, [type])).rejects.toThrow(`failed before hashing (${type})`);
      }
      // Any late event would have landed by now.
      await new Promise((r) => setTimeout(r, 20));
    } finally {
      process.off('uncaughtException', heard);
    }
    expect(uncaught).toEqual([]);
  });
});
