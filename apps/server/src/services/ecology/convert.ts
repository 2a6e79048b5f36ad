import type { Readable } from 'node:stream';
import type { AppConvertBody } from '@skyferry/contract';
import { errors } from '../../http/errors.ts';
import { openPicture, spool } from '../files/thumbnails.ts';

/**
 * The image converter's work: the picture (spooled to the local disk, so libvips reads it in strips;
 * HEIC through the WebAssembly decoder) turned upright by its EXIF orientation, scaled down so that
 * its longest side is at most `max_side`, and encoded as JPEG, PNG, WebP or AVIF. An undecodable
 * input is a 400, not a server error.
 */
export async function convertImage(source: Readable, name: string, input: AppConvertBody): Promise<Buffer> {
  const quality = input.quality ?? 82;
  const original = await spool(source);
  try {
    let pipeline = await openPicture(original.path, name);
    if (!pipeline) throw new Error('the picture cannot be decoded here');
    if (input.max_side)
      pipeline = pipeline.resize(input.max_side, input.max_side, { fit: 'inside', withoutEnlargement: true });
    if (input.format === 'jpeg') pipeline = pipeline.jpeg({ quality, mozjpeg: true });
    else if (input.format === 'png') pipeline = pipeline.png();
    else if (input.format === 'webp') pipeline = pipeline.webp({ quality });
    else pipeline = pipeline.avif({ quality: Math.min(quality, 80), effort: 2 });
    return await pipeline.toBuffer();
  } catch (err) {
    throw errors.badRequest('image_convert_failed', { detail: (err as Error).message.slice(0, 200) });
  } finally {
    await original.remove();
  }
}

/** The longest side of a picture the Viewer gets decoded by the server. */
const VIEW_MAX_SIDE = 4096;

/**
 * A picture the browser cannot decode itself (HEIC/HEIF) as a JPEG for the Viewer: upright, its
 * longest side at most 4096 pixels. An undecodable input is a 400.
 */
export async function viewablePicture(source: Readable, name: string): Promise<Buffer> {
  return convertImage(source, name, { name, format: 'jpeg', quality: 90, max_side: VIEW_MAX_SIDE });
}
