import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ProviderError } from './api/errors.ts';
import type { ChunkWriter, Entry } from './api/types.ts';
import { ChunkReader, writeStreamChunked } from './chunks.ts';
import { BufferRing } from './recycle.ts';

function pieces(data: Buffer, size: number): Readable {
  const out: Buffer[] = [];
  for (let i = 0; i < data.length; i += size) out.push(data.subarray(i, i + size));
  return Readable.from(out);
}

const DATA = Buffer.from(Array.from({ length: 10_000 }, (_, i) => (i * 7) & 255));

/** A writer that stores copies of chunks and records how many were in flight at once. */
function recordingWriter(chunkSize: number, concurrency: number, failAt?: number) {
  const stored = new Map<number, Buffer>();
  let inFlight = 0;
  let maxInFlight = 0;
  let aborted = false;
  let closed = false;
  const writer: ChunkWriter = {
    chunkSize,
    concurrency,
    async writeChunk(index, data) {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await sleep(2);
      inFlight--;
      if (index === failAt) throw new ProviderError('server', 'part failed');
      stored.set(index, Buffer.from(data));
    },
    async close(): Promise<Entry> {
      closed = true;
      const all = Buffer.concat([...stored.entries()].sort((a, b) => a[0] - b[0]).map(([, b]) => b));
      return { path: '/x', name: 'x', kind: 'file', size: all.length };
    },
    async abort() {
      aborted = true;
    },
  };
  return {
    writer,
    stored,
    state: () => ({ maxInFlight, aborted, closed }),
    content: () => Buffer.concat([...stored.entries()].sort((a, b) => a[0] - b[0]).map(([, b]) => b)),
  };
}

describe('ChunkReader', () => {
  it('hands out exact-size chunks whatever the source piece sizes, the last one shorter', async () => {
    const r = new ChunkReader(pieces(DATA, 333));
    const got: Buffer[] = [];
    for (let c = await r.read(1024); c; c = await r.read(1024)) got.push(Buffer.from(c));
    expect(got.map((b) => b.length)).toEqual([...Array(9).fill(1024), 10_000 - 9 * 1024]);
    expect(Buffer.concat(got).equals(DATA)).toBe(true);
    expect(r.bytesRead).toBe(DATA.length);
    expect(await r.read(1024)).toBeNull();
  });

  it('reuses released buffers instead of allocating new ones', async () => {
    const r = new ChunkReader(pieces(DATA, 500));
    const a = (await r.read(1000)) as Buffer;
    r.release(a);
    const b = (await r.read(1000)) as Buffer;
    expect(b.buffer).toBe(a.buffer);
    expect(b.equals(DATA.subarray(1000, 2000))).toBe(true);
    const c = (await r.read(1000)) as Buffer;
    expect(c.buffer).not.toBe(b.buffer);
  });

  it('reads a stream shorter than the chunk size without allocating the chunk size', async () => {
    const small = DATA.subarray(0, 3000);
    const r = new ChunkReader(pieces(small, 1000));
    const c = (await r.read(64 * 1024 * 1024)) as Buffer;
    expect(c.equals(small)).toBe(true);
    expect(c.buffer.byteLength).toBeLessThan(1024 * 1024);
    expect(await r.read(64 * 1024 * 1024)).toBeNull();
    // One source piece of exactly the chunk size is handed out as it is, and never recycled.
    const one = Buffer.from(DATA.subarray(0, 1000));
    const r2 = new ChunkReader(Readable.from([one, DATA.subarray(1000, 1600), DATA.subarray(1600, 2000)]));
    const first = (await r2.read(1000)) as Buffer;
    expect(first).toBe(one);
    r2.release(first);
    // The next chunk is assembled from two pieces into a buffer of the reader's own, not into `one`.
    const second = (await r2.read(1000)) as Buffer;
    expect(second).not.toBe(one);
    expect(second.equals(DATA.subarray(1000, 2000))).toBe(true);
    expect(one.equals(DATA.subarray(0, 1000))).toBe(true);
  });

  it('returns null for an empty stream and stops on an aborted signal', async () => {
    expect(await new ChunkReader(Readable.from([])).read(10)).toBeNull();
    const ac = new AbortController();
    ac.abort();
    await expect(new ChunkReader(pieces(DATA, 100)).read(10, ac.signal)).rejects.toMatchObject({ code: 'canceled' });
  });

  it('a source that fails while the copy waits (for memory) before its first read fails that read, not the process', async () => {
    const uncaught: unknown[] = [];
    const heard = (err: unknown) => uncaught.push(err);
    process.prependListener('uncaughtException', heard);
    try {
      const source = new Readable({ read() {} });
      const reader = new ChunkReader(source);
      source.destroy(new Error('connection reset')); // a download's connection dropped
      await sleep(20);
      await expect(reader.read(10)).rejects.toThrow('connection reset');
      await sleep(20);
    } finally {
      process.off('uncaughtException', heard);
    }
    expect(uncaught).toEqual([]);
  });
});

describe('writeStreamChunked', () => {
  it('writes every chunk once, in parallel up to the writer concurrency, then closes', async () => {
    const rec = recordingWriter(700, 3);
    const progress: number[] = [];
    const e = await writeStreamChunked(rec.writer, pieces(DATA, 256), { onProgress: (n) => progress.push(n) });
    expect(e.size).toBe(DATA.length);
    expect(rec.content().equals(DATA)).toBe(true);
    expect(rec.stored.size).toBe(Math.ceil(DATA.length / 700));
    expect(rec.state().maxInFlight).toBeGreaterThan(1);
    expect(rec.state().maxInFlight).toBeLessThanOrEqual(3);
    expect(progress[progress.length - 1]).toBe(DATA.length);
  });

  it('aborts the upload and rethrows when a chunk fails', async () => {
    const rec = recordingWriter(700, 2, 4);
    await expect(writeStreamChunked(rec.writer, pieces(DATA, 256))).rejects.toMatchObject({ code: 'server' });
    expect(rec.state()).toMatchObject({ aborted: true, closed: false });
  });

  it('aborts the upload when the signal fires mid-stream', async () => {
    const rec = recordingWriter(700, 2);
    const ac = new AbortController();
    let sent = 0;
    const body = new Readable({
      read() {
        sent += 100;
        if (sent === 3000) ac.abort();
        setTimeout(() => this.push(Buffer.alloc(100, 1)), 1);
      },
    });
    await expect(writeStreamChunked(rec.writer, body, { signal: ac.signal })).rejects.toMatchObject({
      code: 'canceled',
    });
    expect(rec.state()).toMatchObject({ aborted: true, closed: false });
  });
});

describe('ChunkReader over a stream of lent chunks (recycle.ts)', () => {
  /** A stream whose chunks are lent from `ring`, as a file or download stream lends them. */
  function lentStream(data: Buffer, ring: BufferRing): Readable {
    let at = 0;
    return new Readable({
      read() {
        if (at >= data.length) return void this.push(null);
        const buf = ring.take();
        const n = data.copy(buf, 0, at, Math.min(data.length, at + buf.length));
        at += n;
        this.push(ring.lend(buf, n));
      },
    });
  }
  const big = Buffer.from(Array.from({ length: 2_000_000 }, (_, i) => (i * 31 + (i >> 9)) & 255));

  it('gives back the chunks it copied from, so a few buffers carry the whole stream', async () => {
    const ring = new BufferRing(64 * 1024, 64);
    const reader = new ChunkReader(lentStream(big, ring));
    const out: Buffer[] = [];
    for (let c = await reader.read(100_000); c; c = await reader.read(100_000)) out.push(Buffer.from(c));
    expect(Buffer.concat(out).equals(big)).toBe(true);
    expect(ring.allocated).toBeLessThan(8);
  });

  it('never gives back a chunk it handed out as it is', async () => {
    const ring = new BufferRing(64 * 1024, 64);
    const reader = new ChunkReader(lentStream(big, ring));
    // Pieces smaller than the stream's chunks are views of them: held, not copied, until the end.
    const held: Buffer[] = [];
    for (let c = await reader.read(5000); c; c = await reader.read(5000)) held.push(c);
    expect(Buffer.concat(held).equals(big)).toBe(true);
  });
});
