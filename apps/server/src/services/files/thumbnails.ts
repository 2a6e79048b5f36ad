import type { Sharp, SharpOptions } from 'sharp';

type SharpFactory = (input?: Buffer, options?: SharpOptions) => Sharp;

let loading: Promise<SharpFactory | null> | undefined;

/** sharp (libvips, installed from npm's prebuilt binaries), loaded on first use; null where it cannot load. */
function loadSharp(): Promise<SharpFactory | null> {
  loading ??= import('sharp').then(
    (mod) => mod.default as unknown as SharpFactory,
    () => null,
  );
  return loading;
}

/** Images larger than this many pixels are not decoded (a decompression bomb guard). */
const MAX_INPUT_PIXELS = 100_000_000;

/**
 * A thumbnail for the photos grid: the image turned upright by its EXIF orientation and scaled,
 * never enlarged, so that its longest side is at most `size` pixels, as WebP. Answers null when the
 * image cannot be decoded here (an unsupported format such as HEIC, a broken file) or sharp is not
 * available; the caller then serves the original.
 */
export async function makeThumbnail(image: Buffer, size: number): Promise<{ data: Buffer; type: string } | null> {
  const sharp = await loadSharp();
  if (!sharp) return null;
  try {
    const data = await sharp(image, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' })
      .rotate()
      .resize(size, size, { fit: 'inside', withoutEnlargement: true })
      .webp({ quality: 80 })
      .toBuffer();
    return { data, type: 'image/webp' };
  } catch {
    return null;
  }
}
