import { describe, expect, it } from 'vitest';
import { dropboxContentHash, md5Hex, quickXorHash, sha1Base64, sha1Hex } from './hashes.ts';

// Known answers published with the algorithms' descriptions and their reference implementations.
describe('emulator hashes', () => {
  it('quickXorHash matches the reference value for "hello world"', () => {
    expect(quickXorHash(Buffer.from('hello world'))).toBe('aCgDG9jwBhDc4Q1yawMZAAAAAAA=');
    expect(quickXorHash(Buffer.alloc(0))).toBe('AAAAAAAAAAAAAAAAAAAAAAAAAAA=');
  });

  it('Dropbox content hash matches published values across block boundaries', () => {
    const fourMb = 4 * 1024 * 1024;
    const block = Buffer.from(Array.from({ length: fourMb }, (_, i) => i % 256));
    expect(dropboxContentHash(Buffer.from('hello rdrop2'))).toBe(
      '1aa2b7623dfff520c4abdc1227d10bc4e229b74005b66b3458345830e556f4de',
    );
    expect(dropboxContentHash(block)).toBe('894bbb52d1212d6bcbe9967f1a2169138c4d4af0c8dfbaeae86cd1d3f0c03faf');
    expect(dropboxContentHash(Buffer.concat([block, Buffer.from([255])]))).toBe(
      '9149387a91f71c7c2149b8427d15526b71c1a38d6c6f999ad71486a2ce788d57',
    );
  });

  it('digests are the standard ones (and cached per buffer)', () => {
    const b = Buffer.from('abc');
    expect(md5Hex(b)).toBe('900150983cd24fb0d6963f7d28e17f72');
    expect(sha1Hex(b)).toBe('a9993e364706816aba3e25717850c26c9cd0d89d');
    expect(sha1Hex(b)).toBe(sha1Hex(b));
    expect(sha1Base64(b)).toBe('qZk+NkcGgWq6PiVxeFDCbJzQ2J0=');
  });
});
