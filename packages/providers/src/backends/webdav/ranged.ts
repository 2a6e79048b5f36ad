import type { Readable } from 'node:stream';
import { ProviderError, canceled } from '../../api/errors.ts';
import type { ChunkWriter, Entry, SrcInfo } from '../../api/types.ts';
import { relayErrors } from '../../recycle.ts';
import { byteCounter, drain, isOk, statusError, text, type DavHttp } from './http.ts';
import { ocMtime } from './mtime.ts';

/** What the ranged writer needs from the WebDAV provider (kept here so neither file imports the other's module). */
export interface RangedDav {
  readonly accountKey: string;
  readonly http: DavHttp;
  url(path: string, dir?: boolean): URL;
  /** Moves a finished temporary upload onto its path (tried again while a concurrent write races it). */
  moveIntoPlace(tmp: string, path: string, signal?: AbortSignal): Promise<void>;
  deleteQuietly(path: string): Promise<void>;
  /** The entry just written, once the server shows it. */
  statAfterWrite(path: string): Promise<Entry>;
  /** How the server keeps times: X-OC-Mtime goes with each range (the last one written sets it). */
  readonly mtime: string;
  /** The entry with the source's time kept where the server keeps times (see WebdavProvider). */
  keepModTime(path: string, src: SrcInfo, entry: Entry): Promise<Entry>;
}

/**
 * Chunk size and parallel chunks of ranged writes: 8 MiB, 2 at once. Ranges of one file meet at
 * the server's file: Apache's threads write it in turns (ext4 takes the file's lock for each
 * write), a waiting thread spinning on a CPU while the lock's owner writes. Two streams still
 * overlap one range's network and HTTP work with the other's writes; on a 2-CPU machine, one
 * gigabyte through a 20 ms link went in a median of 2.87 s as two streams, 2.90 s as three,
 * 3.25 s as four (Apache's CPU 3.0, 3.8 and 3.5-7.5 s) and 3.0 s as one.
 */
export const RANGED_CHUNK_SIZE = 8 * 1024 * 1024;
export const RANGED_CONCURRENCY = 2;

/** Answers of a server that does not take Content-Range on PUT (RFC 9110 asks for 400). */
const REFUSED_RANGE = new Set([400, 405, 416, 501]);

/** Per account, in this process: whether the server writes a PUT's Content-Range where it says. */
const support = new Map<string, Promise<boolean>>();

/** PUTs `length` bytes (a buffer, or a stream of exactly that many) at `start` of `path`. */
function putRange(
  dav: RangedDav,
  path: string,
  start: number,
  length: number,
  body: Buffer | Readable,
  total: number | '*',
  signal?: AbortSignal,
  mtime?: number,
) {
  return dav.http.send({
    method: 'PUT',
    url: dav.url(path),
    headers: {
      'content-type': 'application/octet-stream',
      'content-length': length,
      'content-range': `bytes ${start}-${start + length - 1}/${total}`,
      ...(mtime === undefined ? {} : { 'x-oc-mtime': mtime }),
    },
    body,
    signal,
  });
}

/**
 * Whether the server takes ranged writes (PUT with Content-Range, which Apache mod_dav writes in
 * place). Not in the WebDAV standard, and a server that ignores the header would write each range as
 * the whole file, so it is tried once per account: "b" at byte 1, then "a" at byte 0, of a hidden
 * file, which must then read back as "ab". With `keep` (the probe is the temporary file of an upload
 * of two bytes or more, whose ranges write over it) a yes leaves the file there, saving a request;
 * otherwise it is deleted. The answer is kept for the process.
 */
export function takesRangedWrites(
  dav: RangedDav,
  probePath: string,
  keep: boolean,
  signal?: AbortSignal,
): Promise<boolean> {
  const known = support.get(dav.accountKey);
  if (known) return known;
  const probe = (async () => {
    let yes = false;
    try {
      for (const [start, byte] of [
        [1, 'b'],
        [0, 'a'],
      ] as const) {
        const res = await putRange(dav, probePath, start, 1, Buffer.from(byte), 2, signal);
        // Refusing the header is an answer; refusing the write (permission, full disk) is not.
        if (REFUSED_RANGE.has(res.statusCode ?? 0)) {
          await drain(res);
          return false;
        }
        if (!isOk(res)) throw await statusError(res, `PUT ${probePath}`);
        await drain(res);
      }
      const res = await dav.http.send({ method: 'GET', url: dav.url(probePath), signal });
      const body = await text(res);
      yes = isOk(res) && body === 'ab';
      return yes;
    } finally {
      if (!yes || !keep) await dav.deleteQuietly(probePath);
    }
  })();
  support.set(dav.accountKey, probe);
  // A failed probe (network, permission, canceled) is not an answer: the next upload asks again.
  probe.catch(() => support.delete(dav.accountKey));
  return probe;
}

/**
 * Writes a big file as ranges of one hidden temporary file, several at once (PUT with
 * Content-Range), then moves it into place: a single upload stream is held back by one TCP
 * connection's window and one server thread, parallel ranges are not. Ranges come as buffers
 * (writeChunk) or straight from the source as streams (writeRange). Nothing shows at the path
 * until the move; abort deletes the temporary file. Each range is a whole buffer, so the account's
 * pacer retries it on its own.
 */
export function openRangedChunkWriter(dav: RangedDav, path: string, tmp: string, src: SrcInfo): ChunkWriter {
  const total = src.size >= 0 ? src.size : '*';
  const mtime = src.modTime && dav.mtime === 'x-oc-mtime' ? ocMtime(src.modTime) : undefined;
  let written = 0;
  let finished = false;
  return {
    chunkSize: RANGED_CHUNK_SIZE,
    concurrency: RANGED_CONCURRENCY,
    doneWithDataWhenSettled: true,
    async writeChunk(index, data, signal) {
      if (finished) throw new ProviderError('unknown', 'chunk writer already closed');
      if (signal?.aborted) throw canceled();
      if (data.length === 0) return;
      const start = index * RANGED_CHUNK_SIZE;
      const res = await putRange(dav, tmp, start, data.length, data, total, signal, mtime);
      if (!isOk(res)) throw await statusError(res, `PUT ${path} (bytes ${start}-${start + data.length - 1})`);
      await drain(res);
      written += data.length;
    },
    async writeRange(offset, length, body, signal) {
      if (finished) throw new ProviderError('unknown', 'chunk writer already closed');
      if (signal?.aborted) throw canceled();
      if (length === 0) return;
      const what = `${path} (bytes ${offset}-${offset + length - 1})`;
      // A body longer or shorter than announced fails here rather than leaving the server waiting.
      const counted = byteCounter(() => undefined, length, what);
      relayErrors(body, counted);
      const res = await putRange(dav, tmp, offset, length, body.pipe(counted), total, signal, mtime);
      if (!isOk(res)) throw await statusError(res, `PUT ${what}`);
      await drain(res);
      written += length;
    },
    async close() {
      if (finished) throw new ProviderError('unknown', 'chunk writer already closed');
      finished = true;
      try {
        if (written === 0) {
          // An empty file: nothing was written by range.
          const res = await dav.http.send({ method: 'PUT', url: dav.url(tmp), body: Buffer.alloc(0) });
          if (!isOk(res)) throw await statusError(res, `PUT ${path}`);
          await drain(res);
        }
        if (src.size >= 0 && written !== src.size) {
          throw new ProviderError('corrupted', `size mismatch writing ${path}: expected ${src.size}, sent ${written}`);
        }
        await dav.moveIntoPlace(tmp, path);
      } catch (err) {
        await dav.deleteQuietly(tmp);
        throw err;
      }
      const entry = await dav.statAfterWrite(path);
      if (src.size >= 0 && entry.size !== src.size) {
        throw new ProviderError('corrupted', `${path} has ${entry.size} bytes after a ranged write of ${src.size}`);
      }
      return dav.keepModTime(path, src, entry);
    },
    async abort() {
      finished = true;
      await dav.deleteQuietly(tmp);
    },
  };
}
