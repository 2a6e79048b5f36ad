import type { FileHandle } from 'node:fs/promises';
import { write as fsWrite, writev as fsWritev } from 'node:fs';
import { Readable, Writable, addAbortSignal } from 'node:stream';

/**
 * Read buffers that are used again once written.
 *
 * A stream that allocates a fresh buffer for every read leaves a gigabyte of garbage behind a
 * gigabyte copied. V8 answers each ~64 MB of such external memory with a full mark-compact whose
 * cost grows with the whole heap, so a busy server spends a good part of a large transfer
 * collecting. A source that reads through a `BufferRing` lends its chunks; the last holder of a
 * chunk (an HTTP request once the socket has taken it, an SFTP write once the server acknowledged
 * it) gives it back with `recycle(chunk)`, and the ring reads into it again. A chunk nobody gives
 * back is collected as usual, so the stages in between need not know about rings.
 *
 * The rule that keeps this safe: only the final writer of a chunk recycles it, after the chunk's
 * bytes are out of the process. A stage that passes a chunk on and keeps it (or a view of it) for
 * later must pass a copy; stages that forward the same object (counters, hashers) or a new view
 * (a slice) are safe as they are, since only the exact object lent is ever taken back.
 */
export class BufferRing {
  private readonly spare: Buffer[] = [];
  /** Size of each buffer. */
  readonly size: number;
  /** Buffers kept for reuse (the rest of those given back are left to the collector). */
  private readonly keep: number;
  /** Buffers allocated so far (the rest of the reads went into given-back ones). */
  allocated = 0;
  constructor(size: number, keep = 16) {
    this.size = size;
    this.keep = keep;
  }

  /** A buffer to read into: a given-back one when there is one. */
  take(): Buffer {
    const spare = this.spare.pop();
    if (spare) return spare;
    this.allocated += 1;
    return Buffer.allocUnsafeSlow(this.size);
  }

  /**
   * Bytes `start` to `end` of `buffer` (from `take`) as a chunk that may be given back: the only
   * chunk lent from that buffer, which the ring reads into again once it comes back.
   */
  lend(buffer: Buffer, end: number, start = 0): Buffer {
    const chunk = start === 0 && end === buffer.length ? buffer : buffer.subarray(start, end);
    lent.set(chunk, { ring: this, buffer });
    return chunk;
  }

  /** Takes back a buffer that was never lent (a read that failed or found nothing). */
  putBack(buffer: Buffer): void {
    if (this.spare.length < this.keep) this.spare.push(buffer);
  }
}

const lent = new WeakMap<Uint8Array, { ring: BufferRing; buffer: Buffer }>();

/** Gives a written chunk back to the ring it came from; does nothing for any other chunk. */
export function recycle(chunk: unknown): void {
  if (!(chunk instanceof Uint8Array)) return;
  const loan = lent.get(chunk);
  if (!loan) return;
  lent.delete(chunk);
  loan.ring.putBack(loan.buffer);
}

export interface FileReadOptions {
  /** First byte (default 0) and last byte, inclusive (default: to the end). */
  start?: number;
  end?: number;
  signal?: AbortSignal | undefined;
  /** Called once the last byte was read, before the stream ends: a rejection fails the stream instead. */
  atEnd?: () => Promise<void>;
}

/**
 * Bytes per read of a file: 1020 KiB, four SFTP write requests of 255 KiB exactly (OpenSSH takes at
 * most 256 KiB less 1 KiB per request; 256 KiB chunks went as two requests, one of 1 KiB). Reads
 * this large cost about half the CPU of 255 KiB ones on the way to an HTTP upload or an SFTP write
 * (fewer reads, socket writes and stream hand-offs).
 */
export const FILE_READ_SIZE = 4 * 255 * 1024;

/**
 * The rings file reads of the process read into: a buffer given back by one upload is read into by
 * the next. Files up to 64 KiB read into 64 KiB buffers, many kept (thousands of small files then
 * allocate nothing each: a buffer per file, sized to it, left the allocator's heap fragmented and
 * the process a quarter larger); bigger ones into FILE_READ_SIZE buffers, fewer kept.
 */
export const SMALL_FILE_READ_SIZE = 64 * 1024;
const smallFileRing = new BufferRing(SMALL_FILE_READ_SIZE, 256);
const fileRing = new BufferRing(FILE_READ_SIZE, 32);

/** The shared ring for reading `bytes` of a file. */
export function fileReadRing(bytes: number): BufferRing {
  return bytes <= SMALL_FILE_READ_SIZE ? smallFileRing : fileRing;
}

/**
 * Reads an open file as a stream of chunks from a `BufferRing` (the shared one for big files unless
 * given one), closing the file when the stream ends or is destroyed. Reads go through the
 * FileHandle, which waits for a read in progress before it closes.
 */
export function fileReadStream(fh: FileHandle, opts: FileReadOptions = {}, ring = fileRing): Readable {
  let pos = opts.start ?? 0;
  const end = opts.end ?? Infinity;
  let closed: Promise<void> | undefined;
  const close = () => (closed ??= fh.close().catch(() => undefined));
  const finish = (s: Readable) => {
    if (!opts.atEnd) {
      s.push(null);
      return;
    }
    opts.atEnd().then(
      () => s.push(null),
      (err: unknown) => s.destroy(err as Error),
    );
  };
  const stream = new Readable({
    highWaterMark: ring.size,
    read() {
      const want = Math.min(ring.size, end - pos + 1);
      if (want <= 0) {
        finish(this);
        return;
      }
      const buffer = ring.take();
      fh.read(buffer, 0, want, pos).then(
        ({ bytesRead }) => {
          if (this.destroyed) return;
          if (bytesRead === 0) {
            ring.putBack(buffer);
            finish(this);
            return;
          }
          pos += bytesRead;
          this.push(ring.lend(buffer, bytesRead));
        },
        (err: unknown) => this.destroy(err as Error),
      );
    },
    destroy(err, cb) {
      close().then(() => cb(err), cb);
    },
  });
  stream.once('end', () => void close());
  if (opts.signal) addAbortSignal(opts.signal, stream);
  return stream;
}

/**
 * Writes a stream of chunks to an open file and gives each chunk back to its ring (see above) once
 * its bytes are in the file: the final writer of a download to a local disk, whose reads then go
 * into the same few buffers instead of a fresh one each (garbage the collector chases, on this
 * kind of machine fresh memory too). Chunks that queue up while a write is under way go in one
 * `writev`. The file is closed when the stream finishes or is destroyed.
 */
export function fileWriteStream(fh: FileHandle, highWaterMark = 256 * 1024): Writable {
  let closed: Promise<void> | undefined;
  /** A write is under way: the file is closed only after it (its descriptor must not be reused under it). */
  let writing = false;
  let idle: (() => void) | undefined;
  const close = () =>
    (closed ??= (writing ? new Promise<void>((resolve) => (idle = resolve)) : Promise.resolve()).then(() =>
      fh.close(),
    ));
  /** Writes `bufs` whole (a short write, as on a nearly full disk, goes on from where it stopped). */
  const writeAll = (bufs: Buffer[], cb: (err?: Error | null) => void) => {
    const done = (err: Error | null, n: number) => {
      if (err) return cb(err);
      let left = n;
      while (bufs.length > 0 && left >= (bufs[0] as Buffer).length) left -= (bufs.shift() as Buffer).length;
      if (bufs.length === 0) return cb();
      if (n === 0) return cb(new Error('the file took no more bytes'));
      bufs[0] = (bufs[0] as Buffer).subarray(left);
      writeAll(bufs, cb);
    };
    if (bufs.length === 1) fsWrite(fh.fd, bufs[0] as Buffer, 0, (bufs[0] as Buffer).length, null, done);
    else fsWritev(fh.fd, bufs, null, done);
  };
  return new Writable({
    highWaterMark,
    // Only writev: Writable hands a lone chunk to it as a batch of one.
    writev(items, cb) {
      const chunks = items.map((i) => i.chunk as Buffer);
      writing = true;
      writeAll(chunks.slice(), (err) => {
        writing = false;
        idle?.();
        if (!err) for (const c of chunks) recycle(c);
        cb(err);
      });
    },
    final(cb) {
      close().then(() => cb(), cb);
    },
    destroy(err, cb) {
      close().then(
        () => cb(err),
        () => cb(err),
      );
    },
  });
}

/** Keeps an error event nobody waits for any more from ending the process. */
const quiet = () => undefined;

/**
 * Passes the failure of `from` on to `to`, a stream made from it (a byte counter, a slice), and
 * keeps an error event of `to` emitted before its reader listens from ending the process: a cancel
 * destroys the source at once, often while the writer still waits (for a connection, a folder),
 * and the reader then finds the error on the destroyed stream (chunksOf, pipeline, an upload).
 */
export function relayErrors<T extends { destroy(err?: Error): unknown; on(event: 'error', fn: () => void): unknown }>(
  from: Readable,
  to: T,
): T {
  from.on('error', (err) => to.destroy(err));
  to.on('error', quiet);
  return to;
}

/**
 * The chunks of a byte stream one at a time, each as it was pushed. `for await` over a Readable
 * reads in paused mode, where `read()` joins every buffered chunk into one new buffer: a copy of
 * the data, more garbage, and lent chunks (see above) lost to their ring. Flowing mode hands out
 * one buffer at a time; this keeps at most two waiting. Ending the loop early destroys the stream.
 *
 * The stream is listened to from this call on, not from the first read: a caller may wait (for
 * memory, for a hasher) before reading, and a stream that fails meanwhile (a cancel destroys it at
 * once) would otherwise emit an 'error' event nobody hears, which ends the process. The first read
 * reports that error. Once the loop is left, a quiet listener stays for an error event still due.
 */
export function chunksOf(stream: Readable): AsyncGenerator<Buffer> {
  const queue: Buffer[] = [];
  let ended = false;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const poke = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const onData = (chunk: Buffer | string) => {
    queue.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    if (queue.length >= 2) stream.pause();
    poke();
  };
  const onEnd = () => {
    ended = true;
    poke();
  };
  const onError = (err: Error) => {
    failure ??= err;
    poke();
  };
  const onClose = () => {
    if (!ended) failure ??= Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
    poke();
  };
  if (stream.readableEnded) ended = true;
  else if (stream.destroyed) failure = stream.errored ?? new Error('Premature close');
  stream.on('data', onData);
  stream.on('end', onEnd);
  stream.on('error', onError);
  stream.on('close', onClose);
  async function* chunks(): AsyncGenerator<Buffer> {
    try {
      for (;;) {
        const chunk = queue.shift();
        if (chunk) {
          if (queue.length < 2 && stream.isPaused() && !ended) stream.resume();
          yield chunk;
          continue;
        }
        if (failure) throw failure;
        if (ended) return;
        await new Promise<void>((resolve) => (wake = resolve));
      }
    } finally {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      stream.off('close', onClose);
      stream.on('error', quiet);
      if (!ended) stream.destroy();
    }
  }
  return chunks();
}
