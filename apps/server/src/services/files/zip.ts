import { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';

/**
 * A streaming zip writer (stored entries, ZIP64 when needed): a folder or several files leave as one
 * zip without any copy on the server's disk or in memory. Each file's bytes stream through once;
 * its CRC-32 is computed on the way and written in a data descriptor after it (flag bit 3), so
 * nothing needs to be known before the bytes flow except the size, which the listing gives and
 * which lets the answer carry an exact Content-Length. Names are UTF-8 (flag bit 11).
 */

export interface ZipEntry {
  /** Path inside the zip, "/"-separated, no leading slash; folders end without a slash (added here). */
  name: string;
  dir: boolean;
  /** Bytes the file has, as listed; the stream must deliver exactly this many. */
  size: number;
  modTime?: Date;
  /** Opens the file's bytes (files only). */
  open?: () => Promise<Readable>;
}

const SIG_LOCAL = 0x04034b50;
const SIG_DESCRIPTOR = 0x08074b50;
const SIG_CENTRAL = 0x02014b50;
const SIG_ZIP64_END = 0x06064b50;
const SIG_ZIP64_LOCATOR = 0x07064b50;
const SIG_END = 0x06054b50;
const MAX32 = 0xffffffff;
const MAX16 = 0xffff;
const FLAG_DESCRIPTOR = 0x0008;
const FLAG_UTF8 = 0x0800;
const VERSION_DEFAULT = 20;
const VERSION_ZIP64 = 45;
/** "Made by" Unix (3), so the external attributes carry Unix modes. */
const MADE_BY = (3 << 8) | VERSION_ZIP64;

export class ZipSizeMismatchError extends Error {
  constructor(name: string, expected: number, actual: number) {
    super(`${name}: expected ${expected} bytes, the cloud sent ${actual}`);
    this.name = 'ZipSizeMismatchError';
  }
}

function dosDateTime(date: Date | undefined): { time: number; date: number } {
  const d = date && !Number.isNaN(date.getTime()) ? date : new Date();
  const year = d.getFullYear();
  if (year < 1980) return { time: 0, date: (1 << 5) | 1 };
  return {
    time: (d.getHours() << 11) | (d.getMinutes() << 5) | Math.floor(d.getSeconds() / 2),
    date: ((Math.min(year, 2107) - 1980) << 9) | ((d.getMonth() + 1) << 5) | d.getDate(),
  };
}

interface Planned {
  entry: ZipEntry;
  nameBytes: Buffer;
  /** The entry's sizes may pass 4 GiB: ZIP64 local header and descriptor. */
  zip64: boolean;
}

function plan(entry: ZipEntry): Planned {
  const clean = entry.name.replace(/^\/+/, '').replace(/\/+$/, '');
  const nameBytes = Buffer.from(entry.dir ? `${clean}/` : clean, 'utf8');
  return { entry, nameBytes, zip64: !entry.dir && entry.size >= MAX32 };
}

function localHeader(p: Planned): Buffer {
  const extraLen = p.zip64 ? 20 : 0;
  const b = Buffer.alloc(30 + p.nameBytes.length + extraLen);
  const { time, date } = dosDateTime(p.entry.modTime);
  b.writeUInt32LE(SIG_LOCAL, 0);
  b.writeUInt16LE(p.zip64 ? VERSION_ZIP64 : VERSION_DEFAULT, 4);
  b.writeUInt16LE(FLAG_UTF8 | (p.entry.dir ? 0 : FLAG_DESCRIPTOR), 6);
  b.writeUInt16LE(0, 8); // stored
  b.writeUInt16LE(time, 10);
  b.writeUInt16LE(date, 12);
  b.writeUInt32LE(0, 14); // CRC: in the descriptor
  b.writeUInt32LE(p.zip64 ? MAX32 : 0, 18);
  b.writeUInt32LE(p.zip64 ? MAX32 : 0, 22);
  b.writeUInt16LE(p.nameBytes.length, 26);
  b.writeUInt16LE(extraLen, 28);
  p.nameBytes.copy(b, 30);
  if (p.zip64) {
    const o = 30 + p.nameBytes.length;
    b.writeUInt16LE(0x0001, o);
    b.writeUInt16LE(16, o + 2);
    // Sizes 0 here; the descriptor carries them.
    b.writeBigUInt64LE(0n, o + 4);
    b.writeBigUInt64LE(0n, o + 12);
  }
  return b;
}

function descriptor(p: Planned, crc: number, size: number): Buffer {
  if (p.zip64) {
    const b = Buffer.alloc(24);
    b.writeUInt32LE(SIG_DESCRIPTOR, 0);
    b.writeUInt32LE(crc >>> 0, 4);
    b.writeBigUInt64LE(BigInt(size), 8);
    b.writeBigUInt64LE(BigInt(size), 16);
    return b;
  }
  const b = Buffer.alloc(16);
  b.writeUInt32LE(SIG_DESCRIPTOR, 0);
  b.writeUInt32LE(crc >>> 0, 4);
  b.writeUInt32LE(size, 8);
  b.writeUInt32LE(size, 12);
  return b;
}

function descriptorLength(p: Planned): number {
  if (p.entry.dir) return 0;
  return p.zip64 ? 24 : 16;
}

function centralHeader(p: Planned, crc: number, size: number, offset: number): Buffer {
  const bigSize = size >= MAX32;
  const bigOffset = offset >= MAX32;
  const extraLen = (bigSize ? 16 : 0) + (bigOffset ? 8 : 0);
  const b = Buffer.alloc(46 + p.nameBytes.length + (extraLen > 0 ? 4 + extraLen : 0));
  const { time, date } = dosDateTime(p.entry.modTime);
  b.writeUInt32LE(SIG_CENTRAL, 0);
  b.writeUInt16LE(MADE_BY, 4);
  b.writeUInt16LE(p.zip64 || bigOffset ? VERSION_ZIP64 : VERSION_DEFAULT, 6);
  b.writeUInt16LE(FLAG_UTF8 | (p.entry.dir ? 0 : FLAG_DESCRIPTOR), 8);
  b.writeUInt16LE(0, 10);
  b.writeUInt16LE(time, 12);
  b.writeUInt16LE(date, 14);
  b.writeUInt32LE(crc >>> 0, 16);
  b.writeUInt32LE(bigSize ? MAX32 : size, 20);
  b.writeUInt32LE(bigSize ? MAX32 : size, 24);
  b.writeUInt16LE(p.nameBytes.length, 28);
  b.writeUInt16LE(extraLen > 0 ? 4 + extraLen : 0, 30);
  b.writeUInt16LE(0, 32); // comment
  b.writeUInt16LE(0, 34); // disk
  b.writeUInt16LE(0, 36); // internal attributes
  // Unix mode in the high half; MS-DOS directory bit for folders.
  const mode = p.entry.dir ? 0o40755 : 0o100644;
  b.writeUInt32LE(((mode << 16) | (p.entry.dir ? 0x10 : 0)) >>> 0, 38);
  b.writeUInt32LE(bigOffset ? MAX32 : offset, 42);
  p.nameBytes.copy(b, 46);
  if (extraLen > 0) {
    let o = 46 + p.nameBytes.length;
    b.writeUInt16LE(0x0001, o);
    b.writeUInt16LE(extraLen, o + 2);
    o += 4;
    if (bigSize) {
      b.writeBigUInt64LE(BigInt(size), o);
      b.writeBigUInt64LE(BigInt(size), o + 8);
      o += 16;
    }
    if (bigOffset) b.writeBigUInt64LE(BigInt(offset), o);
  }
  return b;
}

function endRecords(count: number, cdOffset: number, cdSize: number): Buffer {
  const zip64 = count >= MAX16 || cdOffset >= MAX32 || cdSize >= MAX32;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(SIG_END, 0);
  end.writeUInt16LE(0, 4);
  end.writeUInt16LE(0, 6);
  end.writeUInt16LE(zip64 ? MAX16 : count, 8);
  end.writeUInt16LE(zip64 ? MAX16 : count, 10);
  end.writeUInt32LE(zip64 ? MAX32 : cdSize, 12);
  end.writeUInt32LE(zip64 ? MAX32 : cdOffset, 16);
  end.writeUInt16LE(0, 20);
  if (!zip64) return end;
  const rec = Buffer.alloc(56);
  rec.writeUInt32LE(SIG_ZIP64_END, 0);
  rec.writeBigUInt64LE(44n, 4);
  rec.writeUInt16LE(MADE_BY, 12);
  rec.writeUInt16LE(VERSION_ZIP64, 14);
  rec.writeUInt32LE(0, 16);
  rec.writeUInt32LE(0, 20);
  rec.writeBigUInt64LE(BigInt(count), 24);
  rec.writeBigUInt64LE(BigInt(count), 32);
  rec.writeBigUInt64LE(BigInt(cdSize), 40);
  rec.writeBigUInt64LE(BigInt(cdOffset), 48);
  const loc = Buffer.alloc(20);
  loc.writeUInt32LE(SIG_ZIP64_LOCATOR, 0);
  loc.writeUInt32LE(0, 4);
  loc.writeBigUInt64LE(BigInt(cdOffset + cdSize), 8);
  loc.writeUInt32LE(1, 16);
  return Buffer.concat([rec, loc, end]);
}

/** The exact byte length of the zip `zipStream` writes for these entries (for Content-Length). */
export function zipLength(entries: readonly ZipEntry[]): number {
  let offset = 0;
  let cd = 0;
  for (const e of entries) {
    const p = plan(e);
    const size = e.dir ? 0 : e.size;
    const local = 30 + p.nameBytes.length + (p.zip64 ? 20 : 0);
    cd += centralHeader(p, 0, size, offset).length;
    offset += local + size + descriptorLength(p);
  }
  return offset + cd + endRecords(entries.length, offset, cd).length;
}

/**
 * The zip of `entries` as a byte stream. File bytes are opened one entry at a time, when the reader
 * gets there; a file that delivers a different number of bytes than listed fails the stream.
 */
export function zipStream(entries: Iterable<ZipEntry> | AsyncIterable<ZipEntry>, signal?: AbortSignal): Readable {
  async function* generate(): AsyncGenerator<Buffer> {
    const central: Buffer[] = [];
    let offset = 0;
    let count = 0;
    for await (const entry of entries) {
      if (signal?.aborted) throw signal.reason ?? new Error('aborted');
      const p = plan(entry);
      const header = localHeader(p);
      const start = offset;
      yield header;
      offset += header.length;
      let crc = 0;
      let size = 0;
      if (!entry.dir) {
        if (!entry.open) throw new Error(`zip entry ${entry.name} has no content`);
        const body = await entry.open();
        try {
          for await (const chunk of body) {
            const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
            crc = crc32(buf, crc);
            size += buf.length;
            if (size > entry.size) throw new ZipSizeMismatchError(entry.name, entry.size, size);
            yield buf;
          }
        } finally {
          body.destroy();
        }
        if (size !== entry.size) throw new ZipSizeMismatchError(entry.name, entry.size, size);
        const desc = descriptor(p, crc, size);
        yield desc;
        offset += size + desc.length;
      }
      central.push(centralHeader(p, crc, size, start));
      count += 1;
    }
    const cdOffset = offset;
    let cdSize = 0;
    for (const c of central) cdSize += c.length;
    // The central directory goes out in slices, not one buffer of 100 000 headers.
    for (let i = 0; i < central.length; i += 256) yield Buffer.concat(central.slice(i, i + 256));
    yield endRecords(count, cdOffset, cdSize);
  }
  return Readable.from(generate(), { objectMode: false });
}
