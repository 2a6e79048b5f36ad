import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Sharp, SharpOptions } from 'sharp';

type SharpFactory = ((input?: Buffer | string | SharpOptions, options?: SharpOptions) => Sharp) & {
  cache(enabled: boolean): unknown;
};

let loading: Promise<SharpFactory | null> | undefined;

/** sharp (libvips, installed from npm's prebuilt binaries), loaded on first use; null where it cannot load. */
export function loadSharp(): Promise<SharpFactory | null> {
  loading ??= import('sharp').then(
    (mod) => {
      const sharp = mod.default as unknown as SharpFactory;
      // Every picture is worked on once: libvips's operation cache would only keep decoded pixels alive.
      sharp.cache(false);
      return sharp;
    },
    () => null,
  );
  return loading;
}

/** Images larger than this many pixels are not decoded (a decompression bomb guard). */
export const MAX_INPUT_PIXELS = 100_000_000;

/** HEIC/HEIF files larger than this are not decoded (the decoder takes the whole file at once). */
const MAX_HEIC_BYTES = 40 * 1024 * 1024;

/** Whether a file name is a HEIC/HEIF picture (which browsers and the bundled libvips cannot decode). */
export function isHeicName(name: string): boolean {
  return /\.(heic|heif)$/i.test(name);
}

/** The `ftyp` brands of HEIC/HEIF stills and sequences. */
const HEIC_BRANDS = new Set(['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis', 'mif1', 'msf1']);

function looksLikeHeic(head: Buffer): boolean {
  return (
    head.length >= 12 && head.toString('latin1', 4, 8) === 'ftyp' && HEIC_BRANDS.has(head.toString('latin1', 8, 12))
  );
}

/**
 * A spooled copy of a download on the local disk: the picture reaches libvips from a file, which it
 * reads in strips (and, for JPEG, shrinks while it decodes), so no whole original is ever held in
 * memory. `remove` deletes it; `stream` reads it back and deletes it when done.
 */
export interface Spooled {
  readonly path: string;
  remove(): Promise<void>;
  stream(): Readable;
}

export async function spool(source: Readable): Promise<Spooled> {
  const dir = await mkdtemp(join(tmpdir(), 'skyferry-img-'));
  const path = join(dir, 'original');
  const remove = () => rm(dir, { recursive: true, force: true });
  try {
    await pipeline(source, createWriteStream(path, { mode: 0o600 }));
  } catch (err) {
    await remove();
    throw err;
  }
  return {
    path,
    remove,
    stream() {
      const s = createReadStream(path);
      s.once('close', () => void remove());
      return s;
    },
  };
}

/**
 * Decodes a HEIC/HEIF still (its first image, turned upright by its own transforms) with libheif
 * built to WebAssembly, for sharp to encode; null when the file is not one or cannot be decoded.
 */
async function decodeHeic(path: string): Promise<Sharp | null> {
  const handle = await open(path, 'r');
  try {
    const head = Buffer.alloc(12);
    await handle.read(head, 0, 12, 0);
    if (!looksLikeHeic(head) || (await handle.stat()).size > MAX_HEIC_BYTES) return null;
  } finally {
    await handle.close();
  }
  const sharp = await loadSharp();
  if (!sharp) return null;
  const { all } = (await import('heic-decode')).default;
  const images = await all({ buffer: await readFile(path) });
  try {
    const first = images[0];
    if (!first || first.width * first.height > MAX_INPUT_PIXELS) return null;
    const { width, height, data } = await first.decode();
    return sharp(Buffer.from(data.buffer, data.byteOffset, data.byteLength), {
      raw: { width, height, channels: 4 },
    });
  } finally {
    images.dispose();
  }
}

/**
 * A picture on the local disk opened for encoding: by libvips itself (upright by its EXIF
 * orientation), or a HEIC/HEIF through the WebAssembly decoder. Null when it cannot be decoded here.
 */
export async function openPicture(path: string, name: string): Promise<Sharp | null> {
  const sharp = await loadSharp();
  if (!sharp) return null;
  if (isHeicName(name)) {
    const heic = await decodeHeic(path).catch(() => null);
    if (heic) return heic;
  }
  return sharp(path, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error', sequentialRead: true }).rotate();
}

/**
 * A thumbnail for the photos grid: the image turned upright and scaled, never enlarged, so that its
 * longest side is at most `size` pixels, as WebP. Answers null when the image cannot be decoded
 * here (a broken file, a format neither libvips nor the HEIC decoder reads) or sharp is not
 * available; the caller then serves the original.
 */
export async function makeThumbnail(
  path: string,
  name: string,
  size: number,
): Promise<{ data: Buffer; type: string } | null> {
  // A grid asks for dozens at once: two decode at a time, so memory stays that of two pictures.
  while (decoding >= MAX_DECODING) await new Promise<void>((resolve) => waiting.push(resolve));
  decoding += 1;
  try {
    const picture = await openPicture(path, name);
    if (!picture) return null;
    const data = await picture
      .resize(size, size, { fit: 'inside', withoutEnlargement: true })
      .webp({ quality: 80 })
      .toBuffer();
    return { data, type: 'image/webp' };
  } catch {
    return null;
  } finally {
    decoding -= 1;
    waiting.shift()?.();
  }
}

const MAX_DECODING = 2;
let decoding = 0;
const waiting: (() => void)[] = [];
