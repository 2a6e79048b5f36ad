import { canceled, ProviderError } from '../../api/errors.ts';
import type { ChunkWriter, Entry } from '../../api/types.ts';

/**
 * A ChunkWriter for services whose upload sessions take bytes strictly in order (Google Drive's
 * resumable uploads, Microsoft Graph upload sessions, Google Photos resumable uploads). Chunks may
 * arrive in any order: early ones are held until their turn (so a caller writing in order, as the
 * engine does, holds nothing). The final chunk is held until `close`, because sending it is what
 * publishes the file, and nothing may be visible before `close`.
 */
export interface SequentialTarget {
  /** Sends `data` at `offset`; `final` is set for the last piece (total size known). */
  send(offset: number, data: Buffer, final: boolean, signal?: AbortSignal): Promise<void>;
  /** After the final piece: the published file. */
  finish(): Promise<Entry>;
  abort(): Promise<void>;
}

export class SequentialChunkWriter implements ChunkWriter {
  readonly chunkSize: number;
  readonly concurrency = 1;
  private readonly total: number;
  private readonly chunks: number;
  private readonly target: SequentialTarget;
  private readonly pending = new Map<number, Buffer>();
  private next = 0;
  private flushing: Promise<void> = Promise.resolve();
  private failure: unknown;
  private closed = false;
  private aborted = false;

  constructor(target: SequentialTarget, chunkSize: number, totalSize: number) {
    if (totalSize < 0) throw new ProviderError('not_supported', 'a chunked upload needs the size up front');
    this.target = target;
    this.chunkSize = chunkSize;
    this.total = totalSize;
    this.chunks = Math.max(1, Math.ceil(totalSize / chunkSize));
  }

  async writeChunk(index: number, data: Buffer, signal?: AbortSignal): Promise<void> {
    if (this.aborted || this.closed) throw new ProviderError('unknown', 'chunk writer is closed');
    if (signal?.aborted) throw canceled();
    if (!Number.isInteger(index) || index < 0 || index >= this.chunks) {
      throw new ProviderError('unknown', `chunk ${index} is outside 0..${this.chunks - 1}`);
    }
    const expected = index === this.chunks - 1 ? this.total - index * this.chunkSize : this.chunkSize;
    if (data.length !== expected)
      throw new ProviderError('unknown', `chunk ${index} has ${data.length} bytes, expected ${expected}`);
    if (index < this.next || this.pending.has(index))
      throw new ProviderError('unknown', `chunk ${index} written twice`);
    this.pending.set(index, data);
    await this.flush(signal, false);
  }

  /** Sends every held chunk that is next in line (the final one only when `final`). */
  private flush(signal: AbortSignal | undefined, final: boolean): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.failure) throw this.failure;
      for (;;) {
        const data = this.pending.get(this.next);
        if (!data) return;
        const isLast = this.next === this.chunks - 1;
        if (isLast && !final) return;
        try {
          await this.target.send(this.next * this.chunkSize, data, isLast, signal);
        } catch (err) {
          this.failure = err;
          throw err;
        }
        this.pending.delete(this.next);
        this.next++;
      }
    });
    return this.flushing;
  }

  async close(): Promise<Entry> {
    if (this.aborted) throw new ProviderError('unknown', 'chunk writer was aborted');
    await this.flush(undefined, true);
    if (this.next !== this.chunks)
      throw new ProviderError('unknown', `chunks missing: ${this.chunks - this.next} of ${this.chunks} not written`);
    this.closed = true;
    return this.target.finish();
  }

  async abort(): Promise<void> {
    if (this.aborted) return;
    this.aborted = true;
    this.pending.clear();
    await this.flushing.catch(() => undefined);
    await this.target.abort().catch(() => undefined);
  }
}
