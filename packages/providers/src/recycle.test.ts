import { randomBytes, createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendHttp } from './http-send.ts';
import {
  BufferRing,
  FILE_READ_SIZE,
  SMALL_FILE_READ_SIZE,
  chunksOf,
  fileReadRing,
  fileReadStream,
  fileWriteStream,
  recycle,
} from './recycle.ts';
import { openLocal } from './backends/local/local.ts';

const dir = mkdtempSync(join(tmpdir(), 'skyferry-recycle-'));
const data = randomBytes(4 * 1024 * 1024 + 12345);
const file = join(dir, 'data.bin');
writeFileSync(file, data);

async function collect(stream: NodeJS.ReadableStream, give = false): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    parts.push(Buffer.from(chunk)); // a copy: the chunk itself may be read into again
    if (give) recycle(chunk);
  }
  return Buffer.concat(parts);
}

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('fileReadStream', () => {
  it('reads the whole file, and a range, byte for byte', async () => {
    expect((await collect(fileReadStream(await open(file)))).equals(data)).toBe(true);
    const part = await collect(fileReadStream(await open(file), { start: 1000, end: 300_000 }));
    expect(part.equals(data.subarray(1000, 300_001))).toBe(true);
  });

  it('reads into the same few buffers when chunks are given back, fresh ones when not', async () => {
    const kept = new BufferRing(64 * 1024);
    expect((await collect(fileReadStream(await open(file), {}, kept))).equals(data)).toBe(true);
    expect(kept.allocated).toBeGreaterThanOrEqual(Math.floor(data.length / (64 * 1024)));

    const given = new BufferRing(64 * 1024);
    expect((await collect(fileReadStream(await open(file), {}, given), true)).equals(data)).toBe(true);
    expect(given.allocated).toBeLessThanOrEqual(3);
  });

  it('reads through the local backend in chunks of four SFTP requests; small files share 64 KiB buffers, read again once given back', async () => {
    expect(FILE_READ_SIZE).toBe(4 * 255 * 1024);
    writeFileSync(join(dir, 'small.bin'), data.subarray(0, 10_000));
    const local = await openLocal({ path: dir }, { localRoots: [dir] });
    const sizes: number[] = [];
    for await (const chunk of await local.openRead('/data.bin')) {
      sizes.push((chunk as Buffer).length);
      expect((chunk as Buffer).buffer.byteLength).toBe(FILE_READ_SIZE);
    }
    expect(sizes.slice(0, -1).every((n) => n === FILE_READ_SIZE)).toBe(true);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(data.length);
    // A small file, or a small range of a big one: the small ring.
    const small = fileReadRing(10_000);
    expect(small).toBe(fileReadRing(SMALL_FILE_READ_SIZE));
    expect(small).not.toBe(fileReadRing(SMALL_FILE_READ_SIZE + 1));
    const before = small.allocated;
    for (let i = 0; i < 50; i += 1) {
      const got: Buffer[] = [];
      for await (const chunk of await local.openRead('/small.bin')) {
        got.push(Buffer.from(chunk as Buffer));
        expect((chunk as Buffer).buffer.byteLength).toBe(SMALL_FILE_READ_SIZE);
        recycle(chunk); // as an upload does once the socket took it
      }
      expect(Buffer.concat(got).equals(data.subarray(0, 10_000))).toBe(true);
    }
    // Fifty files read, each into a buffer given back by the one before.
    expect(small.allocated - before).toBeLessThanOrEqual(2);
    const range: Buffer[] = [];
    for await (const chunk of await local.openRead('/data.bin', { range: { start: 5, end: 104 } }))
      range.push(chunk as Buffer);
    expect(Buffer.concat(range).equals(data.subarray(5, 105))).toBe(true);
    expect(range[0]?.buffer.byteLength).toBe(SMALL_FILE_READ_SIZE);
  });

  it('ignores what is not a lent chunk, and a chunk given back twice', () => {
    const ring = new BufferRing(16, 4);
    const b = ring.take();
    const chunk = ring.lend(b, 8);
    recycle(Buffer.alloc(8));
    recycle(chunk.subarray(0, 4)); // a view is not the chunk lent
    expect(ring.take()).not.toBe(b);
    recycle(chunk);
    recycle(chunk);
    expect(ring.take()).toBe(b);
    expect(ring.take()).not.toBe(b);
  });

  it('closes the file when destroyed mid-read and when aborted', async () => {
    const fh = await open(file);
    const s = fileReadStream(fh);
    s.once('data', () => s.destroy());
    await new Promise((r) => s.once('close', r));
    await expect(fh.stat()).rejects.toThrow(/closed/i);

    const ac = new AbortController();
    const fh2 = await open(file);
    const s2 = fileReadStream(fh2, { signal: ac.signal });
    const read = collect(s2);
    ac.abort();
    await expect(read).rejects.toMatchObject({ name: 'AbortError' });
    await new Promise((r) => setTimeout(r, 20));
    await expect(fh2.stat()).rejects.toThrow(/closed/i);
  });
});

describe('fileWriteStream', () => {
  /** The file read through `ring`, its chunks lent as a download's are. */
  const lentChunks = (ring: BufferRing) => fileReadStream(fh0(), {}, ring);
  let opened: Awaited<ReturnType<typeof open>>[] = [];
  const fh0 = () => opened.shift() as Awaited<ReturnType<typeof open>>;

  it('writes every byte and gives each chunk back once written, so the reads reuse a few buffers', async () => {
    const ring = new BufferRing(64 * 1024);
    opened = [await open(file)];
    const out = join(dir, 'written.bin');
    await pipeline(lentChunks(ring), fileWriteStream(await open(out, 'w')));
    expect(readFileSync(out).equals(data)).toBe(true);
    // 4 MiB through 64 KiB buffers: without the chunks given back, one buffer per read (66).
    expect(ring.allocated).toBeLessThanOrEqual(8);
  });

  it('gathers chunks queued behind a write into one, in order', async () => {
    const pieces = Array.from({ length: 40 }, (_, i) => Buffer.alloc(1000 + i, i));
    const out = join(dir, 'gathered.bin');
    await pipeline(Readable.from(pieces), fileWriteStream(await open(out, 'w')));
    expect(readFileSync(out).equals(Buffer.concat(pieces))).toBe(true);
  });

  it('closes the file after the write under way when destroyed, and reports a failed write', async () => {
    const fh = await open(join(dir, 'destroyed.bin'), 'w');
    const sink = fileWriteStream(fh);
    sink.write(Buffer.alloc(1024 * 1024, 7));
    sink.destroy();
    await new Promise((r) => sink.once('close', r));
    await expect(fh.stat()).rejects.toThrow(/closed/i);
    expect(readFileSync(join(dir, 'destroyed.bin')).length).toBe(1024 * 1024);

    const ro = await open(file, 'r');
    const failing = fileWriteStream(ro);
    await expect(pipeline(Readable.from([Buffer.from('x')]), failing)).rejects.toMatchObject({ code: 'EBADF' });
  });

  it('is what the local backend writes through: a download to disk reads into the same few buffers', async () => {
    const ring = new BufferRing(64 * 1024);
    opened = [await open(file)];
    const local = await openLocal({ path: dir }, { localRoots: [dir] });
    await local.put('/put.bin', lentChunks(ring), { size: data.length });
    expect(readFileSync(join(dir, 'put.bin')).equals(data)).toBe(true);
    expect(ring.allocated).toBeLessThanOrEqual(8);
    expect(readdirSync(dir).filter((n) => n.includes('tmp') || n.startsWith('.'))).toEqual([]);
  });
});

describe('sendHttp with a lent body', () => {
  let server: Server;
  let port = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      const h = createHash('sha256');
      let n = 0;
      req.on('data', (c: Buffer) => {
        h.update(c);
        n += c.length;
      });
      req.on('end', () => res.end(JSON.stringify({ n, sha: h.digest('hex') })));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('sends every byte intact while the body reads into recycled buffers', async () => {
    const ring = new BufferRing(64 * 1024);
    // A counting stage in between forwards the same chunks, as the engine's and backends' do.
    let counted = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _e, cb) {
        counted += chunk.length;
        cb(null, chunk);
      },
    });
    const body = fileReadStream(await open(file), {}, ring).pipe(counter);
    const res = await sendHttp({
      secure: false,
      options: { host: '127.0.0.1', port, path: '/', method: 'PUT', headers: { 'content-length': data.length } },
      body,
      timeoutMs: 10_000,
      what: 'test',
    });
    const answer = JSON.parse(await collect(res).then((b) => b.toString())) as { n: number; sha: string };
    expect(answer).toEqual({ n: data.length, sha: createHash('sha256').update(data).digest('hex') });
    expect(counted).toBe(data.length);
    // 65 reads of 64 KiB; without recycling each would be a new buffer.
    expect(ring.allocated).toBeLessThan(20);
  });

  it('rejects and ends the body when the body fails', async () => {
    const body = new PassThrough();
    const sent = sendHttp({
      secure: false,
      options: { host: '127.0.0.1', port, path: '/', method: 'PUT', headers: { 'content-length': 100 } },
      body,
      timeoutMs: 10_000,
      what: 'test',
    });
    body.write(Buffer.alloc(10));
    setTimeout(() => body.destroy(new Error('source broke')), 20);
    await expect(sent).rejects.toThrow();
    expect(body.destroyed).toBe(true);
  });
});

describe('chunksOf', () => {
  it('hands out each chunk as pushed, where for-await joins buffered ones into a copy', async () => {
    const pieces = [Buffer.from('ab'), Buffer.from('cd'), Buffer.from('ef')];
    const make = () => {
      const s = new PassThrough();
      for (const p of pieces) s.write(p);
      s.end();
      return s;
    };
    const joined: Buffer[] = [];
    for await (const c of make() as AsyncIterable<Buffer>) joined.push(c);
    expect(joined.length).toBeLessThan(pieces.length); // what chunksOf avoids

    const seen: Buffer[] = [];
    for await (const c of chunksOf(make())) seen.push(c);
    expect(seen).toHaveLength(3);
    seen.forEach((c, i) => expect(c).toBe(pieces[i]));
  });

  it('keeps lent chunks intact through a pipe and gives an error or an early close to the loop', async () => {
    const ring = new BufferRing(64 * 1024);
    const got: Buffer[] = [];
    for await (const c of chunksOf(fileReadStream(await open(file), {}, ring).pipe(new PassThrough()))) {
      got.push(Buffer.from(c));
      recycle(c);
    }
    expect(Buffer.concat(got).equals(data)).toBe(true);
    expect(ring.allocated).toBeLessThanOrEqual(4);

    const broken = new PassThrough();
    broken.write(Buffer.from('x'));
    setTimeout(() => broken.destroy(new Error('source broke')), 10);
    await expect(
      (async () => {
        for await (const _c of chunksOf(broken)) void _c;
      })(),
    ).rejects.toThrow('source broke');

    const early = fileReadStream(await open(file));
    for await (const _c of chunksOf(early)) break;
    expect(early.destroyed).toBe(true);

    const ended = new PassThrough();
    ended.end();
    for await (const _c of ended) void _c;
    const after: Buffer[] = [];
    for await (const c of chunksOf(ended)) after.push(c);
    expect(after).toEqual([]);
  });

  it('hears a stream that fails before the first read, and reports its error there instead of ending the process', async () => {
    const uncaught: unknown[] = [];
    const heard = (err: unknown) => uncaught.push(err);
    process.prependListener('uncaughtException', heard);
    try {
      // Failed before it was handed over (its error event still due), and failed while the reader
      // waited (for memory, for a hasher) before its first read.
      const before = new PassThrough();
      before.destroy(new Error('failed before'));
      const early = chunksOf(before);
      await new Promise((r) => setTimeout(r, 20));
      await expect(early.next()).rejects.toThrow('failed before');

      const during = new PassThrough();
      during.write(Buffer.from('some bytes'));
      const waiting = chunksOf(during);
      setTimeout(() => during.destroy(new Error('failed while waiting')), 5);
      await new Promise((r) => setTimeout(r, 30));
      const got: string[] = [];
      await expect(
        (async () => {
          for await (const c of waiting) got.push(c.toString());
        })(),
      ).rejects.toThrow('failed while waiting');
      // What arrived before the failure is still handed out first.
      expect(got).toEqual(['some bytes']);

      // Left after a failure its error event had not yet reached: that event is heard too.
      const late = new PassThrough();
      const reader = chunksOf(late);
      late.destroy(new Error('failed late'));
      await expect(reader.next()).rejects.toThrow('failed late');
      await new Promise((r) => setTimeout(r, 20));
    } finally {
      process.off('uncaughtException', heard);
    }
    expect(uncaught).toEqual([]);
  });
});
