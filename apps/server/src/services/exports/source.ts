import type { IncomingMessage } from 'node:http';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { Code, EXPORT_INLINE_MAX, formatBytes, stripDataUrlPrefix } from '@skyferry/contract';
import { ProviderError, sendHttp, type OutboundGuard } from '@skyferry/providers';
import { ApiError, errors } from '../../http/errors.ts';

/** Redirects a download may follow; each new address is checked by the guard again. */
const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** The bytes of an export: a stream of exactly `size` bytes. */
export interface ExportSource {
  stream: Readable;
  size: number;
}

export const tooLarge = (max: number) =>
  new ApiError(Code.PAYLOAD_TOO_LARGE, 'export_too_large', { max: formatBytes(max) });
export const sizeMismatch = () => new ApiError(Code.BAD_REQUEST, 'export_size_mismatch');

/** A download address the server may fetch: http or https, nothing else (400 otherwise). */
export function parseDownloadUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw errors.badRequest('field_invalid', { field: 'download_url' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw errors.badRequest('field_invalid', { field: 'download_url' });
  }
  return url;
}

/**
 * The address's host, checked now (an address or every address DNS gives for a name), so an
 * address on a refused network is a 4xx at once. The guard checks again on every connection.
 * A name that does not resolve is left to the download (which then fails).
 */
export async function precheckHost(guard: OutboundGuard, url: URL): Promise<void> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  try {
    await guard.resolveAll(host);
  } catch (err) {
    if (ProviderError.is(err, 'address_not_allowed')) throw err;
  }
}

/** The bytes of base64 data (a data-URL prefix stripped); 400 when it is not base64, 413 when too large. */
export function decodeInline(data: string): Buffer {
  const b64 = stripDataUrlPrefix(data).replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(b64) || b64.length % 4 === 1) {
    throw errors.badRequest('field_invalid', { field: 'base64_data' });
  }
  if (Math.floor((b64.length * 3) / 4) > EXPORT_INLINE_MAX + 2) throw tooLarge(EXPORT_INLINE_MAX);
  const bytes = Buffer.from(b64, b64.includes('-') || b64.includes('_') ? 'base64url' : 'base64');
  if (bytes.length > EXPORT_INLINE_MAX) throw tooLarge(EXPORT_INLINE_MAX);
  return bytes;
}

/**
 * Passes exactly `size` bytes through, counting them: more, or an end before `size`, fails the
 * stream with "did not have the size it announced" (and the write that reads it fails with it).
 */
export class SizeMeter extends Transform {
  readonly size: number;
  bytes = 0;
  /** Why the meter failed the stream, when it did. */
  failure: ApiError | undefined;
  private readonly onBytes: (bytes: number) => void;

  constructor(size: number, onBytes: (bytes: number) => void) {
    super();
    this.size = size;
    this.onBytes = onBytes;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.size) {
      this.failure = sizeMismatch();
      done(this.failure);
      return;
    }
    this.onBytes(this.bytes);
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    if (this.bytes !== this.size) {
      this.failure = sizeMismatch();
      done(this.failure);
      return;
    }
    done();
  }
}

/**
 * Opens a download for an export through the outbound guard: follows redirects (at most 5, each
 * address checked again), fails on any answer but 2xx, and takes the size from Content-Length or,
 * without one, from `expectedSize`. Larger than `maxBytes` (announced, or expected) fails 413 before
 * any byte is read; the stream is not buffered.
 */
export async function openDownload(
  first: URL,
  opts: { guard: OutboundGuard; maxBytes: number; expectedSize?: number; timeoutMs: number; signal: AbortSignal },
): Promise<ExportSource> {
  let url = first;
  for (let hop = 0; ; hop += 1) {
    const res: IncomingMessage = await sendHttp({
      secure: url.protocol === 'https:',
      url,
      options: {
        method: 'GET',
        headers: { 'user-agent': 'Skyferry export', accept: '*/*', 'accept-encoding': 'identity' },
        signal: opts.signal,
      },
      timeoutMs: opts.timeoutMs,
      what: 'export download',
      guard: opts.guard,
    });
    const status = res.statusCode ?? 0;
    if (REDIRECTS.has(status) && res.headers.location) {
      res.resume();
      if (hop >= MAX_REDIRECTS) throw new ApiError(Code.BAD_REQUEST, 'export_too_many_redirects');
      try {
        url = parseDownloadUrl(new URL(res.headers.location, url).toString());
      } catch {
        throw errors.badRequest('field_invalid', { field: 'download_url' });
      }
      continue;
    }
    if (status < 200 || status > 299) {
      res.resume();
      throw new ApiError(Code.BAD_REQUEST, 'export_download_failed', { status });
    }
    const announced = res.headers['content-length'];
    const length = announced !== undefined && /^\d+$/.test(announced) ? Number(announced) : undefined;
    const size = length ?? opts.expectedSize;
    const fail = (err: ApiError) => {
      res.destroy();
      throw err;
    };
    if (size === undefined) return fail(errors.badRequest('field_required', { field: 'file_size' }));
    if (size > opts.maxBytes) return fail(tooLarge(opts.maxBytes));
    if (length !== undefined && opts.expectedSize !== undefined && length !== opts.expectedSize)
      return fail(sizeMismatch());
    return { stream: res, size };
  }
}
