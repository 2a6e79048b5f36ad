import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { ProviderError } from '../../api/errors.ts';
import type { ChunkWriter, Entry } from '../../api/types.ts';
import { keepErrorListener } from '../../net/listeners.ts';

/**
 * A chunk writer for a file of unknown size on a service whose upload sessions need the size up
 * front (Microsoft Graph, Box): chunks are written at their offsets into a private temporary file,
 * and `close` uploads that file with its now known size. Only used when the size is unknown.
 */
export class SpoolingChunkWriter implements ChunkWriter {
  readonly chunkSize: number;
  readonly concurrency = 4;
  private readonly upload: (body: Readable, size: number) => Promise<Entry>;
  private file: Promise<{ dir: string; path: string; handle: FileHandle }> | undefined;
  private readonly lengths = new Map<number, number>();
  private done = false;

  constructor(chunkSize: number, upload: (body: Readable, size: number) => Promise<Entry>) {
    this.chunkSize = chunkSize;
    this.upload = upload;
  }

  private spool(): Promise<{ dir: string; path: string; handle: FileHandle }> {
    this.file ??= (async () => {
      const dir = await mkdtemp(join(tmpdir(), 'skyferry-spool-'));
      const path = join(dir, 'data');
      return { dir, path, handle: await open(path, 'w+', 0o600) };
    })();
    return this.file;
  }

  async writeChunk(index: number, data: Buffer): Promise<void> {
    if (this.done) throw new ProviderError('unknown', 'chunk writer is closed');
    const { handle } = await this.spool();
    await handle.write(data, 0, data.length, index * this.chunkSize);
    this.lengths.set(index, data.length);
  }

  async close(): Promise<Entry> {
    if (this.done) throw new ProviderError('unknown', 'chunk writer is closed');
    this.done = true;
    const n = this.lengths.size;
    let size = 0;
    for (let i = 0; i < n; i++) {
      const len = this.lengths.get(i);
      if (len === undefined) throw new ProviderError('unknown', `chunk ${i} missing`);
      if (i < n - 1 && len !== this.chunkSize) throw new ProviderError('unknown', `chunk ${i} is short`);
      size += len;
    }
    try {
      const { path, handle } = await this.spool();
      await handle.close();
      return await this.upload(keepErrorListener(createReadStream(path)), size);
    } finally {
      await this.cleanup();
    }
  }

  private async cleanup(): Promise<void> {
    if (!this.file) return;
    const f = await this.file.catch(() => undefined);
    if (!f) return;
    await f.handle.close().catch(() => undefined);
    await rm(f.dir, { recursive: true, force: true });
  }

  async abort(): Promise<void> {
    this.done = true;
    await this.cleanup();
  }
}
