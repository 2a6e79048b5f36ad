import { createHash } from 'node:crypto';

/**
 * Content hashes the emulated services report, written here from the services' own descriptions
 * (independently of the backends' implementations, so a test comparing the two checks both).
 *
 * - Dropbox content hash: https://www.dropbox.com/developers/reference/content-hash
 *   (split into 4 MiB blocks, SHA-256 of each, SHA-256 of the concatenated digests, hex).
 * - OneDrive quickXorHash: https://learn.microsoft.com/onedrive/developer/code-snippets/quickxorhash
 *   (XOR of the bytes into a 160-bit register, shifting 11 bits per byte, then the length XORed
 *   into the last 8 bytes; base64).
 */

// Emulators keep file contents as immutable Buffers, so a digest can be remembered per Buffer.
const caches = new Map<string, WeakMap<Buffer, string>>();
function cached(kind: string, data: Buffer, compute: () => string): string {
  let cache = caches.get(kind);
  if (!cache) caches.set(kind, (cache = new WeakMap()));
  let v = cache.get(data);
  if (v === undefined) cache.set(data, (v = compute()));
  return v;
}

export function md5Hex(data: Buffer): string {
  return cached('md5', data, () => createHash('md5').update(data).digest('hex'));
}

export function sha1Hex(data: Buffer): string {
  return cached('sha1', data, () => createHash('sha1').update(data).digest('hex'));
}

export function sha1Base64(data: Buffer): string {
  return createHash('sha1').update(data).digest('base64');
}

export function sha256Hex(data: Buffer): string {
  return cached('sha256', data, () => createHash('sha256').update(data).digest('hex'));
}

const DROPBOX_BLOCK = 4 * 1024 * 1024;

export function dropboxContentHash(data: Buffer): string {
  return cached('dropbox', data, () => dropboxContentHashOf(data));
}

function dropboxContentHashOf(data: Buffer): string {
  const outer = createHash('sha256');
  for (let off = 0; off < data.length; off += DROPBOX_BLOCK) {
    outer.update(
      createHash('sha256')
        .update(data.subarray(off, off + DROPBOX_BLOCK))
        .digest(),
    );
  }
  return outer.digest('hex');
}

const QX_WIDTH = 160;
const QX_SHIFT = 11;

/** quickXorHash: byte i lands at bit (11 * i) mod 160 of a 160-bit register, little-endian bytes. */
export function quickXorHash(data: Buffer): string {
  return cached('quickxor', data, () => quickXorOf(data));
}

function quickXorOf(data: Buffer): string {
  const cell = new Uint8Array(20);
  let shift = 0;
  for (let i = 0; i < data.length; i++) {
    const b = data[i]!;
    if (b !== 0) {
      // The byte's 8 bits occupy register bits shift..shift+7, wrapping at 160.
      const idx = shift >> 3;
      const off = shift & 7;
      cell[idx]! ^= (b << off) & 0xff;
      if (off !== 0) cell[(idx + 1) % 20]! ^= b >> (8 - off);
    }
    shift = (shift + QX_SHIFT) % QX_WIDTH;
  }
  // XOR the length (64-bit little-endian) into the last 8 bytes.
  const len = BigInt(data.length);
  for (let i = 0; i < 8; i++) {
    cell[20 - 8 + i]! ^= Number((len >> BigInt(8 * i)) & 0xffn);
  }
  return Buffer.from(cell).toString('base64');
}
