import { randomBytes } from 'node:crypto';
import type { OutgoingHttpHeaders } from 'node:http';
import { ProviderError, canceled, toProviderError } from '../../api/errors.ts';
import type { ChunkWriter, Entry, SrcInfo } from '../../api/types.ts';
import { drain, statusError, type DavHttp } from './http.ts';
import { ocMtime } from './mtime.ts';

/** What the chunk writer needs from the WebDAV provider (kept here so neither file imports the other's module). */
export interface NextcloudDav {
  readonly base: URL;
  readonly username: string;
  readonly http: DavHttp;
  readonly chunkSize: number;
  readonly concurrency: number;
  url(path: string, dir?: boolean): URL;
  /** The entry once assembled, with the source's time kept (or reported lost). */
  afterChunkedUpload(path: string, src: SrcInfo): Promise<Entry>;
}

/** Where Nextcloud keeps chunked uploads: /remote.php/dav/uploads/<user>/ beside /files/<user>/. */
export function uploadsBase(base: URL, username: string): URL {
  const path = base.pathname;
  const i = path.indexOf('/remote.php/');
  const prefix = i < 0 ? '' : path.slice(0, i);
  const files = path.match(/\/remote\.php\/dav\/files\/([^/]+)\//);
  const user = files?.[1] ?? encodeURIComponent(username);
  const u = new URL(base.href);
  u.pathname = `${prefix}/remote.php/dav/uploads/${user}/`;
  return u;
}

/**
 * Nextcloud chunked upload v2: MKCOL an upload folder, PUT numbered chunks (1..10000) in any order
 * and in parallel, then MOVE its ".file" onto the destination, which Nextcloud assembles; DELETE
 * the upload folder to abort. Every request names the destination (v2 requires it) and the total
 * length. Nothing is visible at the destination until the MOVE.
 */
export async function openNextcloudChunkWriter(
  dav: NextcloudDav,
  path: string,
  src: SrcInfo,
  signal?: AbortSignal,
): Promise<ChunkWriter> {
  const uploads = uploadsBase(dav.base, dav.username);
  const folder = new URL(uploads.href);
  folder.pathname += `skyferry-${randomBytes(12).toString('hex')}/`;
  const destination = dav.url(path).href;
  const common: OutgoingHttpHeaders = { destination };
  if (src.size >= 0) common['oc-total-length'] = src.size;
  const mk = await dav.http.send({ method: 'MKCOL', url: folder, headers: common, signal });
  if ((mk.statusCode ?? 0) >= 300) throw await statusError(mk, `MKCOL ${folder.pathname}`);
  await drain(mk);
  let finished = false;
  const chunkUrl = (index: number) => {
    const u = new URL(folder.href);
    u.pathname += String(index + 1);
    return u;
  };
  const discard = async () => {
    try {
      const res = await dav.http.send({ method: 'DELETE', url: folder });
      await drain(res);
    } catch {
      // best effort: Nextcloud also expires stale uploads
    }
  };
  return {
    chunkSize: dav.chunkSize,
    concurrency: dav.concurrency,
    async writeChunk(index: number, data: Buffer, chunkSignal?: AbortSignal): Promise<void> {
      if (finished) throw new ProviderError('canceled', 'chunk writer is closed');
      if (index < 0 || index >= 10_000) throw new ProviderError('invalid_name', `chunk index out of range: ${index}`);
      const s = chunkSignal ?? signal;
      const res = await dav.http.send({
        method: 'PUT',
        url: chunkUrl(index),
        headers: { ...common, 'content-type': 'application/octet-stream' },
        body: data,
        signal: s,
      });
      if ((res.statusCode ?? 0) >= 300) throw await statusError(res, `PUT chunk ${index + 1} of ${path}`);
      await drain(res);
    },
    async close(): Promise<Entry> {
      if (finished) throw new ProviderError('canceled', 'chunk writer is closed');
      finished = true;
      try {
        if (signal?.aborted) throw canceled();
        const file = new URL(folder.href);
        file.pathname += '.file';
        const headers: OutgoingHttpHeaders = { ...common, overwrite: 'T' };
        if (src.modTime) headers['x-oc-mtime'] = ocMtime(src.modTime);
        const res = await dav.http.send({ method: 'MOVE', url: file, headers, signal });
        if ((res.statusCode ?? 0) >= 300) throw await statusError(res, `MOVE ${path}`);
        await drain(res);
      } catch (err) {
        await discard();
        throw toProviderError(err);
      }
      const entry = await dav.afterChunkedUpload(path, src);
      if (src.size >= 0 && entry.size !== src.size) {
        throw new ProviderError('corrupted', `size mismatch writing ${path}: expected ${src.size}, got ${entry.size}`);
      }
      return entry;
    },
    async abort(): Promise<void> {
      if (finished) return;
      finished = true;
      await discard();
    },
  };
}
