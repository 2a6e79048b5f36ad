import { createHash, type Hash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { Transform, type TransformCallback } from 'node:stream';
import { crc32 } from 'node:zlib';
import type { HashType, Hashes } from './api/types.ts';
import { chunksOf, recycle } from './recycle.ts';

/** An incremental hash: feed bytes, then read the digest in the form the services print. */
export interface StreamHasher {
  update(data: Uint8Array): void;
  digest(): string;
}

/**
 * MD5, SHA-1 and SHA-256 by Node's own digests (OpenSSL: 1.4 to 6 times the speed of the
 * WebAssembly hashers this module used before, and nothing to instantiate per file). A digest
 * taken twice answers the same; an update after it throws.
 */
class NativeHasher implements StreamHasher {
  private h: Hash | undefined;
  private result: string | undefined;
  private readonly type: string;
  constructor(type: 'md5' | 'sha1' | 'sha256') {
    this.type = type;
    this.h = createHash(type);
  }
  update(data: Uint8Array): void {
    if (!this.h) throw new Error(`${this.type} hasher used after its digest`);
    this.h.update(data);
  }
  digest(): string {
    if (this.result === undefined) {
      this.result = (this.h as Hash).digest('hex');
      this.h = undefined;
    }
    return this.result;
  }
}

/** CRC-32 (IEEE), by zlib, carried from chunk to chunk; printed as 8 hex digits. */
class Crc32Hasher implements StreamHasher {
  private value = 0;
  private done = false;
  update(data: Uint8Array): void {
    if (this.done) throw new Error('crc32 hasher used after its digest');
    this.value = crc32(data, this.value);
  }
  digest(): string {
    this.done = true;
    return (this.value >>> 0).toString(16).padStart(8, '0');
  }
}

const QXH_WIDTH_BYTES = 20; // 160 bits
const QXH_SHIFT = 11;

/**
 * Microsoft's QuickXorHash (OneDrive): each byte is XORed into a 160-bit circular register at
 * bit (index * 11) mod 160; the total length (64-bit little-endian) is XORed into the last 8 bytes.
 * Printed in base64, as OneDrive does.
 */
export class QuickXorHasher implements StreamHasher {
  private readonly state = new Uint8Array(QXH_WIDTH_BYTES);
  private length = 0;
  private bitPos = 0;

  update(data: Uint8Array): void {
    const s = this.state;
    let pos = this.bitPos;
    for (let i = 0; i < data.length; i++) {
      const b = data[i] as number;
      const byteIdx = pos >>> 3;
      const off = pos & 7;
      s[byteIdx] = (s[byteIdx] as number) ^ ((b << off) & 0xff);
      if (off !== 0) {
        const nextIdx = byteIdx + 1 === QXH_WIDTH_BYTES ? 0 : byteIdx + 1;
        s[nextIdx] = (s[nextIdx] as number) ^ (b >>> (8 - off));
      }
      pos += QXH_SHIFT;
      if (pos >= 160) pos -= 160;
    }
    this.bitPos = pos;
    this.length += data.length;
  }

  digest(): string {
    const out = Uint8Array.from(this.state);
    let len = BigInt(this.length);
    for (let i = 0; i < 8; i++) {
      const idx = QXH_WIDTH_BYTES - 8 + i;
      out[idx] = (out[idx] as number) ^ Number(len & 0xffn);
      len >>= 8n;
    }
    return Buffer.from(out).toString('base64');
  }
}

const DROPBOX_BLOCK = 4 * 1024 * 1024;

/** Dropbox's content hash: SHA-256 over the SHA-256 digests of each 4 MiB block, in hex. */
export class DropboxHasher implements StreamHasher {
  private readonly outer = createHash('sha256');
  private block = createHash('sha256');
  private inBlock = 0;
  private result: string | undefined;

  update(data: Uint8Array): void {
    if (this.result !== undefined) throw new Error('dropbox hasher used after its digest');
    let off = 0;
    while (off < data.length) {
      const take = Math.min(DROPBOX_BLOCK - this.inBlock, data.length - off);
      this.block.update(data.subarray(off, off + take));
      this.inBlock += take;
      off += take;
      if (this.inBlock === DROPBOX_BLOCK) this.finishBlock();
    }
  }

  private finishBlock(): void {
    this.outer.update(this.block.digest());
    this.block = createHash('sha256');
    this.inBlock = 0;
  }

  digest(): string {
    if (this.result === undefined) {
      if (this.inBlock > 0) this.finishBlock();
      this.result = this.outer.digest('hex');
    }
    return this.result;
  }
}

/** Every hash type this module computes. */
export const SUPPORTED_HASHES: readonly HashType[] = ['md5', 'sha1', 'sha256', 'crc32', 'quickxor', 'dropbox'];

/** A fresh hasher of a type (asynchronous for callers written when making one took a module load). */
export async function createHasher(type: HashType): Promise<StreamHasher> {
  switch (type) {
    case 'md5':
    case 'sha1':
    case 'sha256':
      return new NativeHasher(type);
    case 'crc32':
      return new Crc32Hasher();
    case 'quickxor':
      return new QuickXorHasher();
    case 'dropbox':
      return new DropboxHasher();
  }
}

/**
 * A pass-through stream that hashes the bytes flowing through it. Read `digests()` (or await
 * `result`) after the stream has finished.
 */
export class HashingStream extends Transform {
  private readonly hashers: Map<HashType, StreamHasher>;
  private bytes = 0;
  private done: Hashes | undefined;

  constructor(hashers: Map<HashType, StreamHasher>) {
    super();
    this.hashers = hashers;
  }

  /** Total bytes seen so far. */
  get bytesSeen(): number {
    return this.bytes;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    for (const h of this.hashers.values()) h.update(chunk);
    this.bytes += chunk.length;
    cb(null, chunk);
  }

  override _flush(cb: TransformCallback): void {
    this.digests();
    cb();
  }

  /** The hashes of everything that passed; call once the stream has ended. */
  digests(): Hashes {
    if (!this.done) {
      const out: Hashes = {};
      for (const [type, h] of this.hashers) out[type] = h.digest();
      this.done = out;
    }
    return this.done;
  }
}

/** Creates a HashingStream for the given types. */
export async function hashingStream(types: Iterable<HashType>): Promise<HashingStream> {
  const map = new Map<HashType, StreamHasher>();
  for (const t of new Set(types)) map.set(t, await createHasher(t));
  return new HashingStream(map);
}

/**
 * Hashes a whole stream with one or several hash types. Its chunks go back to their ring once hashed
 * (recycle.ts): pass a stream nothing else reads.
 */
export async function hashStream(stream: Readable, types: Iterable<HashType>): Promise<Hashes> {
  // Listened to before the hashers are made: a stream that fails meanwhile (a file opened with an
  // aborted signal is destroyed at once) has its error reported by the reading below.
  const chunks = chunksOf(stream);
  const map = new Map<HashType, StreamHasher>();
  try {
    for (const t of new Set(types)) map.set(t, await createHasher(t));
  } catch (err) {
    stream.destroy();
    throw err;
  }
  for await (const chunk of chunks) {
    for (const h of map.values()) h.update(chunk);
    recycle(chunk); // hashed: the last use of it
  }
  const out: Hashes = {};
  for (const [type, h] of map) out[type] = h.digest();
  return out;
}

/** Hashes a whole stream with one hash type. */
export async function hashFile(stream: Readable, type: HashType): Promise<string> {
  const out = await hashStream(stream, [type]);
  return out[type] as string;
}

/** Hashes a buffer (tests and small payloads). */
export async function hashBuffer(data: Uint8Array, type: HashType): Promise<string> {
  const h = await createHasher(type);
  h.update(data);
  return h.digest();
}
