import type { Readable } from 'node:stream';
import type { AppConvertBody } from '@skyferry/contract';
import type { Sharp, SharpOptions } from 'sharp';
import { errors } from '../../http/errors.ts';

type SharpFactory = (input?: Buffer | SharpOptions, options?: SharpOptions) => Sharp;

/** Pictures larger than this many pixels are not decoded (a decompression bomb guard). */
const MAX_INPUT_PIXELS = 100_000_000;

/**
 * The image converter's work: the picture streamed into libvips (sharp), turned upright by its
 * EXIF orientation, scaled down so that its longest side is at most `max_side`, and encoded as
 * JPEG, PNG, WebP or AVIF. An undecodable input is a 400, not a server error.
 */
export async function convertImage(source: Readable, input: AppConvertBody): Promise<Buffer> {
  const sharp = (await import('sharp')).default as unknown as SharpFactory;
  const quality = input.quality ?? 82;
  let pipeline = sharp({ limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' }).rotate();
  if (input.max_side)
    pipeline = pipeline.resize(input.max_side, input.max_side, { fit: 'inside', withoutEnlargement: true });
  if (input.format === 'jpeg') pipeline = pipeline.jpeg({ quality, mozjpeg: true });
  else if (input.format === 'png') pipeline = pipeline.png();
  else if (input.format === 'webp') pipeline = pipeline.webp({ quality });
  else pipeline = pipeline.avif({ quality: Math.min(quality, 80), effort: 2 });
  source.on('error', (err) => pipeline.destroy(err));
  source.pipe(pipeline);
  try {
    return await pipeline.toBuffer();
  } catch (err) {
    source.destroy();
    throw errors.badRequest('image_convert_failed', { detail: (err as Error).message.slice(0, 200) });
  }
}
