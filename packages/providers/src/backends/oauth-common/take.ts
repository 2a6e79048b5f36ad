import type { Readable } from 'node:stream';
import { canceled } from '../../api/errors.ts';

/**
 * Reads a stream in pieces of up to `size` bytes, allocating only the bytes it returns (the
 * backends ask for "up to the upload cutoff" to tell small files from large ones, so a reader that
 * reserved the full size per call would allocate megabytes for every small file).
 */
export interface ByteSource {
  read(size: number, signal?: AbortSignal): Promise<Buffer | null>;
  cancel(): Promise<void>;
}

export class ByteTaker implements ByteSource {
  private readonly it: AsyncIterator<unknown>;
  private leftover: Buffer | undefined;
  private ended = false;

  constructor(stream: Readable) {
    this.it = stream[Symbol.asyncIterator]();
  }

  async read(size: number, signal?: AbortSignal): Promise<Buffer | null> {
    const parts: Buffer[] = [];
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
        const v = r.value;
        const b = Buffer.isBuffer(v) ? v : typeof v === 'string' ? Buffer.from(v) : Buffer.from(v as Uint8Array);
        if (b.length === 0) continue;
        this.leftover = b;
      }
      const piece = this.leftover;
      const n = Math.min(piece.length, size - filled);
      parts.push(n === piece.length ? piece : piece.subarray(0, n));
      filled += n;
      this.leftover = n < piece.length ? piece.subarray(n) : undefined;
    }
    if (signal?.aborted) throw canceled();
    if (filled === 0) return null;
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts, filled);
  }

  async cancel(): Promise<void> {
    await this.it.return?.();
  }
}
