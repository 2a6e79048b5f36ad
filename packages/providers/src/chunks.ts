import type { Readable } from 'node:stream';
import { canceled } from './api/errors.ts';
import type { ChunkWriter } from './api/types.ts';
import { chunksOf, recycle } from './recycle.ts';

/**
 * Reads a byte stream in pieces of an exact size (the last may be shorter), copying into buffers
 * it recycles: give a chunk back with `release` once nothing refers to it any more, and memory
 * stays at the chunks in flight instead of growing with garbage waiting for the collector.
 * The stream's own chunks are taken one at a time as they were pushed (no joined copies), and a
 * chunk whose bytes were all copied is given back to its ring (recycle.ts): a chunk handed out as
 * it is, whole or in part, is the caller's and never is.
 */
export class ChunkReader {
  private readonly it: AsyncIterator<Buffer>;
  private leftover: Buffer | undefined;
  /** The stream chunk the leftover is part of; `shared` once some of it was handed out uncopied. */
  private origin: { chunk: Buffer; shared: boolean } | undefined;
  private ended = false;
  private readonly free: Buffer[] = [];
  /** Buffers this reader allocated (only those are recycled; pieces handed out as they came are not its own). */
  private readonly owned = new WeakSet<Buffer>();
  private poolSize = 0;
  /** Bytes handed out so far. */
  bytesRead = 0;

  constructor(stream: Readable) {
    this.it = chunksOf(stream);
  }

  private alloc(size: number): Buffer {
    if (size !== this.poolSize) {
      this.poolSize = size;
      this.free.length = 0;
    }
    const reused = this.free.pop();
    if (reused) return reused;
    const b = Buffer.allocUnsafeSlow(size);
    this.owned.add(b);
    return b;
  }

  /** Hands a full chunk back for reuse; the caller must not touch it afterwards. */
  release(chunk: Buffer): void {
    if (chunk.length === this.poolSize && this.owned.has(chunk) && this.free.length < 16) this.free.push(chunk);
  }

  /**
   * The next `size` bytes, fewer at the end, or null once the stream is exhausted. Pieces are
   * gathered first and copied once: a full chunk into a recycled buffer, a short last chunk into a
   * buffer of its own length, and a piece that is already exactly the chunk is handed out as it is
   * (a small file read with a large chunk size costs no large allocation).
   */
  async read(size: number, signal?: AbortSignal): Promise<Buffer | null> {
    const pieces: Buffer[] = [];
    /** The stream chunks whose last bytes are among the pieces. */
    const finished: { chunk: Buffer; shared: boolean }[] = [];
    let filled = 0;
    while (filled < size) {
      if (!this.leftover) {
        if (this.ended) break;
        if (signal?.aborted) throw canceled();
        const r = await this.it.next();
        if (r.done) {
          this.ended = true;
          break;
        }
        if (r.value.length === 0) continue;
        this.leftover = r.value;
        this.origin = { chunk: r.value, shared: false };
      }
      const piece = this.leftover;
      const n = Math.min(piece.length, size - filled);
      pieces.push(n < piece.length ? piece.subarray(0, n) : piece);
      filled += n;
      this.leftover = n < piece.length ? piece.subarray(n) : undefined;
      if (!this.leftover && this.origin) finished.push(this.origin);
    }
    if (signal?.aborted) throw canceled();
    if (filled === 0) return null;
    this.bytesRead += filled;
    if (pieces.length === 1) {
      // Handed out as it is: the caller holds (part of) that stream chunk now (the only one read).
      if (this.origin) this.origin.shared = true;
      return pieces[0] as Buffer;
    }
    const target = filled === size ? this.alloc(size) : Buffer.allocUnsafeSlow(filled);
    let at = 0;
    for (const p of pieces) at += p.copy(target, at);
    for (const f of finished) if (!f.shared) recycle(f.chunk);
    return target;
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
        // The buffer can take a later chunk, unless the writer keeps it (ChunkWriter).
        if (writer.doneWithDataWhenSettled) reader.release(data);
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
