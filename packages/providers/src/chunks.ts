import type { Readable } from 'node:stream';
import { canceled } from './api/errors.ts';
import type { ChunkWriter } from './api/types.ts';

/** Reads a byte stream in pieces of an exact size (the last may be shorter). */
export class ChunkReader {
  private readonly it: AsyncIterator<unknown>;
  private pending: Buffer[] = [];
  private pendingLen = 0;
  private ended = false;
  /** Bytes handed out so far. */
  bytesRead = 0;

  constructor(stream: Readable) {
    this.it = stream[Symbol.asyncIterator]();
  }

  /** The next `size` bytes, fewer at the end, or null once the stream is exhausted. */
  async read(size: number, signal?: AbortSignal): Promise<Buffer | null> {
    while (this.pendingLen < size && !this.ended) {
      if (signal?.aborted) throw canceled();
      const r = await this.it.next();
      if (r.done) {
        this.ended = true;
        break;
      }
      const v = r.value;
      const b = Buffer.isBuffer(v) ? v : typeof v === 'string' ? Buffer.from(v) : Buffer.from(v as Uint8Array);
      if (b.length === 0) continue;
      this.pending.push(b);
      this.pendingLen += b.length;
    }
    if (this.pendingLen === 0) return null;
    const all = this.pending.length === 1 ? (this.pending[0] as Buffer) : Buffer.concat(this.pending, this.pendingLen);
    const take = Math.min(size, all.length);
    const out = all.subarray(0, take);
    // Copy the small remainder so the big chunk can be freed once its upload is done.
    const rest = all.length > take ? Buffer.from(all.subarray(take)) : undefined;
    this.pending = rest ? [rest] : [];
    this.pendingLen = rest ? rest.length : 0;
    this.bytesRead += out.length;
    return out;
  }

  /** Stops the underlying stream early. */
  async cancel(): Promise<void> {
    await this.it.return?.();
  }
}

/**
 * Feeds a stream into a chunk writer, `writer.concurrency` chunks in flight at once, and closes it.
 * Memory stays near (concurrency + 1) x chunkSize. Any failure or abort discards the upload.
 */
export async function writeStreamChunked(
  writer: ChunkWriter,
  body: Readable,
  opts: {
    signal?: AbortSignal;
    onProgress?: (bytes: number) => void;
    /** Chunks already read from `body` (through `reader`), written first. */
    firstChunks?: Buffer[];
    /** The reader already reading `body`, when the caller has started it. */
    reader?: ChunkReader;
  } = {},
): Promise<Awaited<ReturnType<ChunkWriter['close']>>> {
  const reader = opts.reader ?? new ChunkReader(body);
  const inflight = new Set<Promise<void>>();
  let failure: unknown;
  let sent = 0;
  let index = 0;
  const start = (data: Buffer) => {
    const i = index++;
    const p = writer
      .writeChunk(i, data, opts.signal)
      .then(() => {
        sent += data.length;
        opts.onProgress?.(sent);
      })
      .catch((err: unknown) => {
        failure ??= err;
      })
      .finally(() => inflight.delete(p));
    inflight.add(p);
  };
  try {
    for (const c of opts.firstChunks ?? []) start(c);
    for (;;) {
      if (failure) break;
      if (opts.signal?.aborted) throw canceled();
      while (inflight.size >= writer.concurrency) await Promise.race(inflight);
      if (failure) break;
      const data = await reader.read(writer.chunkSize, opts.signal);
      if (!data) break;
      start(data);
    }
    await Promise.all(inflight);
    if (failure) throw failure;
    if (opts.signal?.aborted) throw canceled();
    return await writer.close();
  } catch (err) {
    await Promise.allSettled(inflight);
    await writer.abort().catch(() => undefined);
    body.destroy();
    if (opts.signal?.aborted) throw canceled();
    throw err;
  }
}
