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

export function md5Hex(data: Buffer): string {
  return createHash('md5').update(data).digest('hex');
}

export function sha1Hex(data: Buffer): string {
  return createHash('sha1').update(data).digest('hex');
}

export function sha1Base64(data: Buffer): string {
  return createHash('sha1').update(data).digest('base64');
}

export function sha256Hex(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

const DROPBOX_BLOCK = 4 * 1024 * 1024;

export function dropboxContentHash(data: Buffer): string {
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

/** quickXorHash as a 160-bit register of bits, the direct reading of the published description. */
export function quickXorHash(data: Buffer): string {
  const cell = new Uint8Array(20);
  // Bit i of the register lives in cell[i >> 3] at bit (i & 7) (little-endian, as the
  // reference's BitConverter output is laid out).
  let shift = 0;
  for (let i = 0; i < data.length; i++) {
    const b = data[i]!;
    if (b !== 0) {
      for (let bit = 0; bit < 8; bit++) {
        if ((b >> bit) & 1) {
          const pos = (shift + bit) % QX_WIDTH;
          cell[pos >> 3]! ^= 1 << (pos & 7);
        }
      }
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
