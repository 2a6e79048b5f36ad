import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  ChunkReader,
  ProviderError,
  SUPPORTED_HASHES,
  canceled,
  createHasher,
  relayErrors,
  toProviderError,
} from '@skyferry/providers';
import type { Pacer } from '@skyferry/providers';
import type { ChunkWriter, Entry, HashType, Hashes, Provider, SrcInfo, StreamHasher } from '@skyferry/providers';
import type { Fingerprint } from './types.ts';
import { baseName, poolSent, sameHashes } from './util.ts';
import type { Semaphore } from './util.ts';

/** How a file was checked after it was written. */
export type Verification = 'hash' | 'size';

export interface CopyFileResult {
  entry: Entry;
  /** Bytes read from the source (the file size for server-side copies). */
  bytes: number;
  serverSide: boolean;
  chunked: boolean;
  verified: Verification;
}

export interface CopyContext {
  signal: AbortSignal;
  /** The run's tag of the temporary files its writes make (`WriteOptions.tempTag`). */
  tempTag?: string;
  pacer: Pacer;
  /** Files at least this large go through the target's chunk writer when it has one. */
  chunkThreshold: number;
  /** Shared budget (bytes) for chunk buffers of all files in flight. */
  memory: Semaphore;
  memoryBudget: number;
  tempDir: string;
  /** 'auto': compare what the services report; 'strict': also stat the target when its write did not report a hash. */
  verify: 'auto' | 'strict';
  /** Bytes moved (negative to take back the bytes of a failed attempt). */
  onBytes: (delta: number) => void;
  /** Per target account: the hash types its single writes return (learned from the first write). */
  returnedHashes: Map<string, Set<HashType>>;
}

/**
 * A pass-through that counts and hashes bytes on their way to the target. Given the source's path
 * and the bytes it should give (`expect`), it fails the stream with `source_changed` as soon as the
 * source gives more, or ends with fewer: the file changed while it was read.
 */
class Meter extends Transform {
  bytes = 0;
  private readonly hashers: [HashType, StreamHasher][];
  private readonly onBytes: (n: number) => void;
  private readonly expect: { path: string; bytes: number } | undefined;
  constructor(
    hashers: [HashType, StreamHasher][],
    onBytes: (n: number) => void,
    expect?: { path: string; bytes: number },
  ) {
    super({ highWaterMark: 256 * 1024 });
    this.hashers = hashers;
    this.onBytes = onBytes;
    this.expect = expect && expect.bytes >= 0 ? expect : undefined;
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    if (this.expect && this.bytes + chunk.length > this.expect.bytes) {
      cb(sourceChanged(`${this.expect.path} grew while it was copied (more than ${this.expect.bytes} bytes)`));
      return;
    }
    this.bytes += chunk.length;
    for (const [, h] of this.hashers) h.update(chunk);
    this.onBytes(chunk.length);
    cb(null, chunk);
  }
  override _flush(cb: TransformCallback): void {
    if (this.expect && this.bytes !== this.expect.bytes) {
      cb(sourceChanged(`${this.expect.path} shrank while it was copied (${this.bytes} of ${this.expect.bytes} bytes)`));
      return;
    }
    cb();
  }
  digests(): Hashes {
    const out: Hashes = {};
    for (const [t, h] of this.hashers) out[t] = h.digest();
    return out;
  }
}

/**
 * Hash types worth computing while bytes stream (at most one). Where the source declared a hash the
 * target's writes return, the two are compared and nothing is computed (single writes; a chunked
 * write's whole-file hash may only echo the source's, so it is computed then). Otherwise a hash the
 * target's writes return (compared with it), else one the source declared (a check of the read).
 * Which hashes a target's writes really return is learned from its first write; which of them its
 * chunked writes report, the target says (`chunkedWriteHashes`).
 */
export function inflightTypes(
  to: Provider,
  src: Fingerprint,
  ctx: Pick<CopyContext, 'returnedHashes'>,
  chunked: boolean,
): HashType[] {
  const supported = new Set<HashType>(SUPPORTED_HASHES);
  const learned = ctx.returnedHashes.get(to.accountKey);
  const reported = chunked ? (to.chunkedWriteHashes ?? to.hashes) : to.hashes;
  const returns = [...reported].filter((t) => supported.has(t) && (!learned || learned.has(t)));
  const declared = (Object.keys(src.hashes ?? {}) as HashType[]).filter((t) => supported.has(t));
  const pref = (a: HashType, b: HashType) => hashRank(a) - hashRank(b);
  const shared = returns.filter((t) => declared.includes(t)).sort(pref);
  if (shared.length > 0) return chunked ? shared.slice(0, 1) : [];
  // A single write that checks a hash end to end itself (S3's MD5) needs no second digest here.
  if (!chunked && returns.some((t) => to.checkedWrites?.has(t))) return [];
  if (returns.length > 0) return returns.sort(pref).slice(0, 1);
  return declared.sort(pref).slice(0, 1);
}

/** Preference among hash types: MD5, SHA-1, SHA-256, then the rest. */
export function hashRank(t: HashType): number {
  return t === 'md5' ? 0 : t === 'sha1' ? 1 : t === 'sha256' ? 2 : 3;
}

/** Remembers which hashes a target's write returned (the first write of a run decides). */
function learnReturned(to: Provider, entry: Entry, ctx: CopyContext): void {
  if (ctx.returnedHashes.has(to.accountKey)) return;
  ctx.returnedHashes.set(to.accountKey, new Set(Object.keys(entry.hashes ?? {}) as HashType[]));
}

async function hashersFor(types: HashType[]): Promise<[HashType, StreamHasher][]> {
  return Promise.all(types.map(async (t) => [t, await createHasher(t)] as [HashType, StreamHasher]));
}

function corrupted(message: string): ProviderError {
  return new ProviderError('corrupted', message);
}

/** The source changed since it was planned: not retried here; the next run picks the new version up. */
function sourceChanged(message: string): ProviderError {
  return new ProviderError('corrupted', message, { retry: 'no_retry', serviceCode: 'source_changed' });
}

/**
 * A failure of the source's stream as the target's writer will see it: a ProviderError that names
 * the source's path (a writer names its own path only on errors it makes itself).
 */
function sourceError(err: unknown, fromPath: string): ProviderError {
  const e = toProviderError(err);
  if (e.message.includes(fromPath)) return e;
  return new ProviderError(e.code, `reading ${fromPath}: ${e.message}`, {
    retry: e.retry,
    ...(e.retryAfterMs !== undefined ? { retryAfterMs: e.retryAfterMs } : {}),
    ...(e.serviceCode !== undefined ? { serviceCode: e.serviceCode } : {}),
    cause: err,
  });
}

/** `relayErrors` for a source: its failure reaches `to` as `sourceError`. */
function relaySource<T extends Transform>(from: Readable, to: T, fromPath: string): T {
  from.on('error', (err) => to.destroy(sourceError(err, fromPath)));
  to.on('error', () => undefined);
  return to;
}

/**
 * What a write that failed while reading `body` through `meter` is reported as: the source's own
 * failure (it changed, or could not be read) whatever the target's writer made of it, else `err`.
 */
function readFailure(err: unknown, body: Readable, meter: Meter, fromPath: string): unknown {
  const cause = meter.errored;
  if (isSourceChanged(cause)) return cause;
  if (body.errored) return sourceError(body.errored, fromPath);
  return err;
}

/** Whether an error is the source changing under a copy (never retried as the copy's failure). */
export function isSourceChanged(err: unknown): boolean {
  return err instanceof ProviderError && err.serviceCode === 'source_changed';
}

/**
 * Checks a written file: sizes always; then a hash both sides know (declared by the source or
 * computed in flight, against what the target reports). Throws `corrupted` (retried) on mismatch.
 */
async function verify(
  to: Provider,
  toPath: string,
  src: Fingerprint,
  bytes: number,
  computed: Hashes,
  written: Entry,
  ctx: CopyContext,
  chunked = false,
): Promise<Verification> {
  if (src.size >= 0 && bytes !== src.size) {
    throw sourceChanged(`source changed while copying: read ${bytes} bytes, expected ${src.size}`);
  }
  const declared = sameHashes(computed, src.hashes);
  if (declared === false) throw corrupted(`content read does not match the source's hash`);
  if (written.size >= 0 && written.size !== bytes) {
    throw corrupted(`target reports ${written.size} bytes, ${bytes} were sent`);
  }
  let reported = written.hashes;
  const known: Hashes = { ...src.hashes, ...computed };
  if (sameHashes(known, reported) === undefined && ctx.verify === 'strict' && to.hashes.size > 0) {
    reported = (await to.stat(toPath, { signal: ctx.signal })).hashes;
  }
  const cmp = sameHashes(known, reported);
  if (cmp === false) throw corrupted(`target's hash of ${toPath} does not match the source`);
  if (cmp === true) return 'hash';
  return !chunked && Object.keys(reported ?? {}).some((t) => to.checkedWrites?.has(t as HashType)) ? 'hash' : 'size';
}

function srcInfoOf(fp: Fingerprint, size: number): SrcInfo {
  const info: SrcInfo = { size };
  if (fp.mtime !== undefined) info.modTime = new Date(fp.mtime);
  if (fp.hashes) info.hashes = fp.hashes;
  if (fp.mimeType) info.mimeType = fp.mimeType;
  if (fp.md5Hint) info.md5Hint = fp.md5Hint;
  return info;
}

/** Copies within one account with the service's own copy. */
async function serverSideCopy(
  to: Provider,
  fromPath: string,
  toPath: string,
  fp: Fingerprint,
  ctx: CopyContext,
): Promise<CopyFileResult> {
  const src: Entry = { path: fromPath, name: baseName(fromPath), kind: 'file', size: fp.size };
  if (fp.id !== undefined) src.id = fp.id;
  if (fp.mtime !== undefined) src.modTime = new Date(fp.mtime);
  if (fp.hashes) src.hashes = fp.hashes;
  const entry = await (to.copy as NonNullable<Provider['copy']>)(src, toPath, {
    signal: ctx.signal,
    tempTag: ctx.tempTag,
  });
  if (fp.size >= 0 && entry.size !== fp.size)
    throw sourceChanged(`server-side copy gave ${entry.size} bytes, expected ${fp.size}`);
  const h = sameHashes(fp.hashes, entry.hashes);
  if (h === false) throw corrupted(`server-side copy of ${fromPath} has a different hash`);
  ctx.onBytes(entry.size);
  return { entry, bytes: entry.size, serverSide: true, chunked: false, verified: h ? 'hash' : 'size' };
}

/** Files up to this size are read whole where the source can (`Provider.readSmall`), not streamed. */
export const SMALL_READ_MAX = 64 * 1024 - 1;

/** A stream of one buffer (what `put` takes) that ends after it. */
function bufferStream(data: Buffer): Readable {
  return new Readable({
    read() {
      this.push(data);
      this.push(null);
    },
  });
}

/**
 * A small file read whole (`readSmall`) and written whole where the target takes that
 * (`putSmall`); otherwise its buffer goes through `put` as a stream. Undefined, having done
 * nothing, when the source would rather stream it.
 */
async function smallCopy(
  from: Provider,
  to: Provider,
  fromPath: string,
  toPath: string,
  fp: Fingerprint,
  ctx: CopyContext,
  counted: { bytes: number },
  sent?: () => void,
): Promise<CopyFileResult | undefined> {
  const read = from.readSmall as NonNullable<Provider['readSmall']>;
  const data = await read.call(from, fromPath, fp.size, { signal: ctx.signal }).catch((err: unknown) => {
    throw sourceError(err, fromPath);
  });
  if (data === undefined) return undefined; // larger than planned (the stream tells) or the source streams now
  if (data.length !== fp.size) {
    throw sourceChanged(`${fromPath} shrank while it was copied (${data.length} of ${fp.size} bytes)`);
  }
  if (!to.putSmall) return streamedPut(from, to, fromPath, toPath, fp, ctx, counted, sent, data);
  const hashers = await hashersFor(inflightTypes(to, fp, ctx, false));
  for (const [, h] of hashers) h.update(data);
  const digests: Hashes = {};
  for (const [t, h] of hashers) digests[t] = h.digest();
  const bytes = data.length;
  counted.bytes += bytes;
  ctx.onBytes(bytes);
  const entry = await to.putSmall(toPath, data, srcInfoOf(fp, fp.size), { signal: ctx.signal, tempTag: ctx.tempTag });
  learnReturned(to, entry, ctx);
  const verified = await verify(to, toPath, fp, bytes, digests, entry, ctx);
  return { entry, bytes, serverSide: false, chunked: false, verified };
}

/** Streams one file through `put` (from `data` when the file was read whole already). */
async function streamedPut(
  from: Provider,
  to: Provider,
  fromPath: string,
  toPath: string,
  fp: Fingerprint,
  ctx: CopyContext,
  counted: { bytes: number },
  sent?: () => void,
  data?: Buffer,
): Promise<CopyFileResult> {
  const hashers = await hashersFor(inflightTypes(to, fp, ctx, false));
  const body = data ? bufferStream(data) : await from.openRead(fromPath, { signal: ctx.signal });
  const meter = new Meter(
    hashers,
    (n) => {
      counted.bytes += n;
      ctx.onBytes(n);
    },
    { path: fromPath, bytes: fp.size },
  );
  // The target's put sees a failed or aborted stream through its own reading (before it listens too).
  relaySource(body, meter, fromPath);
  // Every byte taken by the target's writer: what remains is its answer.
  if (sent) meter.once('end', sent);
  body.pipe(meter);
  try {
    const entry = await to
      .put(toPath, meter, srcInfoOf(fp, fp.size), { signal: ctx.signal, tempTag: ctx.tempTag })
      .catch((err: unknown) => {
        throw readFailure(err, body, meter, fromPath);
      });
    learnReturned(to, entry, ctx);
    const verified = await verify(to, toPath, fp, meter.bytes, meter.digests(), entry, ctx);
    return { entry, bytes: meter.bytes, serverSide: false, chunked: false, verified };
  } finally {
    body.destroy();
    meter.destroy();
  }
}

/** Buffers a source of unknown size to a temporary file (only for targets that need the size first). */
async function viaTempFile(
  from: Provider,
  to: Provider,
  fromPath: string,
  toPath: string,
  fp: Fingerprint,
  ctx: CopyContext,
  counted: { bytes: number },
): Promise<CopyFileResult> {
  const tmp = join(ctx.tempDir, `skyferry-${randomUUID()}`);
  try {
    const hashers = await hashersFor(inflightTypes(to, fp, ctx, false));
    const meter = new Meter(hashers, () => {});
    const body = await from.openRead(fromPath, { signal: ctx.signal });
    await pipeline(body, meter, createWriteStream(tmp), { signal: ctx.signal }).catch((err: unknown) => {
      throw sourceError(err, fromPath);
    });
    const size = meter.bytes;
    const file = createReadStream(tmp);
    const sent = new Meter([], (n) => {
      counted.bytes += n;
      ctx.onBytes(n);
    });
    relayErrors(file, sent);
    file.pipe(sent);
    const entry = await to.put(toPath, sent, srcInfoOf(fp, size), { signal: ctx.signal, tempTag: ctx.tempTag });
    const verified = await verify(to, toPath, { ...fp, size }, size, meter.digests(), entry, ctx);
    return { entry, bytes: size, serverSide: false, chunked: false, verified };
  } finally {
    await rm(tmp, { force: true });
  }
}

/**
 * Uploads one large file through the target's chunk writer: the source is read once, in order
 * (hashed on the way), and chunks are written `writer.concurrency` at a time, each retried on its
 * own. Chunk buffers come from a budget shared by all files, so memory stays bounded. Resolves
 * undefined, having read nothing, when the target refuses the writer (not_supported).
 */
async function chunkedUpload(
  from: Provider,
  to: Provider,
  fromPath: string,
  toPath: string,
  fp: Fingerprint,
  ctx: CopyContext,
  counted: { bytes: number },
): Promise<CopyFileResult | undefined> {
  const open = to.openChunkWriter as NonNullable<Provider['openChunkWriter']>;
  let writer: ChunkWriter;
  try {
    writer = await open.call(to, toPath, srcInfoOf(fp, fp.size), { signal: ctx.signal, tempTag: ctx.tempTag });
  } catch (err) {
    // A service that turned out not to take chunks (a WebDAV server without ranged writes): stream instead.
    if (ProviderError.is(err, 'not_supported')) return undefined;
    throw err;
  }
  const hashers = await hashersFor(inflightTypes(to, fp, ctx, true));
  if (writer.writeRange && hashers.length === 0 && fp.size > 0) {
    return rangesAtOnce(from, to, fromPath, toPath, writer, fp, ctx, counted);
  }
  const chunkSize = writer.chunkSize;
  const cost = Math.min(chunkSize, ctx.memoryBudget);
  const concurrency = Math.max(1, writer.concurrency);
  let body: Readable | undefined;
  const inflight = new Set<Promise<void>>();
  let failure: unknown;
  try {
    body = await from.openRead(fromPath, { signal: ctx.signal });
    const reader = new ChunkReader(body);
    let index = 0;
    let total = 0;
    for (;;) {
      if (failure) break;
      if (ctx.signal.aborted) throw canceled();
      await ctx.memory.acquire(cost);
      let data: Buffer | null;
      try {
        data = await reader.read(chunkSize, ctx.signal);
      } catch (err) {
        ctx.memory.release(cost);
        throw sourceError(err, fromPath);
      }
      if (fp.size >= 0 && total + (data?.length ?? 0) > fp.size) {
        ctx.memory.release(cost);
        throw sourceChanged(`${fromPath} grew while it was copied (more than ${fp.size} bytes)`);
      }
      if (!data || (data.length === 0 && index > 0)) {
        ctx.memory.release(cost);
        if (index > 0) break;
        data = Buffer.alloc(0); // an empty file still needs one (empty) chunk
      }
      for (const [, h] of hashers) h.update(data);
      // The next chunk was read while the previous ones upload: the source never waits idle.
      while (inflight.size >= concurrency) await Promise.race(inflight);
      if (failure) {
        ctx.memory.release(cost);
        break;
      }
      total += data.length;
      counted.bytes += data.length;
      ctx.onBytes(data.length);
      const i = index++;
      const chunk = data;
      const p = ctx.pacer
        .call(() => writer.writeChunk(i, chunk, ctx.signal), { signal: ctx.signal })
        .catch((err: unknown) => {
          failure ??= err;
        })
        .finally(() => {
          // Written or given up: its buffer can take a later chunk, unless the writer keeps it.
          if (writer.doneWithDataWhenSettled) reader.release(chunk);
          ctx.memory.release(cost);
          inflight.delete(p);
        });
      inflight.add(p);
      if (chunk.length < chunkSize) break;
    }
    await Promise.all(inflight);
    if (failure) throw failure;
    if (ctx.signal.aborted) throw canceled();
    if (fp.size >= 0 && total !== fp.size) {
      throw sourceChanged(`${fromPath} shrank while it was copied (${total} of ${fp.size} bytes)`);
    }
    const entry = await writer.close();
    const digests: Hashes = {};
    for (const [t, h] of hashers) digests[t] = h.digest();
    const verified = await verify(to, toPath, fp, total, digests, entry, ctx, true);
    return { entry, bytes: total, serverSide: false, chunked: true, verified };
  } catch (err) {
    await Promise.allSettled([...inflight]);
    await writer.abort().catch(() => undefined);
    throw err;
  } finally {
    body?.destroy();
  }
}

/** Largest range of one request when ranges go at once (a failed range is sent again whole). */
const MAX_RANGE = 64 * 1024 * 1024;

/**
 * Copies a large file as ranges read from the source and written at their offsets, several at
 * once, each streamed straight through (no chunk gathered in memory, no copy): for writers that
 * take ranges (`writeRange`) when no hash has to be computed over the bytes in order. Each range
 * is retried on its own, read again from the source. A range whose bytes are all sent lets the
 * next one start while it waits for the server's answer (at most twice `concurrency` under way),
 * so no stream idles through a round trip at each range's end.
 */
async function rangesAtOnce(
  from: Provider,
  to: Provider,
  fromPath: string,
  toPath: string,
  writer: ChunkWriter,
  fp: Fingerprint,
  ctx: CopyContext,
  counted: { bytes: number },
): Promise<CopyFileResult> {
  const write = writer.writeRange as NonNullable<ChunkWriter['writeRange']>;
  const size = fp.size;
  const concurrency = Math.max(1, writer.concurrency);
  const rangeSize = Math.max(writer.chunkSize, Math.min(MAX_RANGE, Math.ceil(size / concurrency)));
  const ranges: Array<{ start: number; length: number }> = [];
  for (let start = 0; start < size; start += rangeSize)
    ranges.push({ start, length: Math.min(rangeSize, size - start) });
  const sendRange = async ({ start, length }: { start: number; length: number }, allSent: () => void) => {
    let sent = 0;
    const body = await from.openRead(fromPath, { range: { start, end: start + length - 1 }, signal: ctx.signal });
    const meter = new Meter(
      [],
      (n) => {
        sent += n;
        counted.bytes += n;
        ctx.onBytes(n);
      },
      { path: fromPath, bytes: length },
    );
    relaySource(body, meter, fromPath);
    meter.once('end', allSent);
    body.pipe(meter);
    try {
      await write.call(writer, start, length, meter, ctx.signal);
    } catch (err) {
      // The attempt's bytes do not count; the retry sends the range again.
      counted.bytes -= sent;
      ctx.onBytes(-sent);
      throw readFailure(err, body, meter, fromPath);
    } finally {
      body.destroy();
      meter.destroy();
    }
  };
  try {
    // A range whose bytes are all sent frees its place for the next while it waits for the answer;
    // after a failure no range starts, and it is thrown once those under way have settled.
    await poolSent(
      ranges,
      concurrency,
      (r, sent) => ctx.pacer.call(() => sendRange(r, sent), { signal: ctx.signal }),
      () => ctx.signal.aborted,
    );
    if (ctx.signal.aborted) throw canceled();
    const entry = await writer.close();
    const verified = await verify(to, toPath, fp, size, {}, entry, ctx, true);
    return { entry, bytes: size, serverSide: false, chunked: true, verified };
  } catch (err) {
    await writer.abort().catch(() => undefined);
    throw err;
  }
}

/**
 * Copies one file from `from` to `to` and verifies it: server-side within one account, through the
 * chunk writer above the threshold, via a temporary file only when the target needs the size and
 * the source cannot give it, else streamed through `put`. Not retried here (the caller's pacer does).
 */
export async function copyFile(
  from: Provider,
  to: Provider,
  fromPath: string,
  toPath: string,
  fp: Fingerprint,
  ctx: CopyContext,
  /** Called once every byte was handed to the target (the caller may start another file). */
  sent?: () => void,
): Promise<CopyFileResult> {
  if (from.accountKey === to.accountKey && to.copy) return serverSideCopy(to, fromPath, toPath, fp, ctx);
  const counted = { bytes: 0 };
  try {
    const sizeKnown = fp.size >= 0;
    if (to.openChunkWriter && ((sizeKnown && fp.size >= ctx.chunkThreshold) || (!sizeKnown && to.features.needsSize))) {
      const chunked = await chunkedUpload(from, to, fromPath, toPath, fp, ctx, counted);
      if (chunked) return chunked;
    }
    if (!sizeKnown && to.features.needsSize) return await viaTempFile(from, to, fromPath, toPath, fp, ctx, counted);
    if (sizeKnown && fp.size <= SMALL_READ_MAX && from.readSmall) {
      const small = await smallCopy(from, to, fromPath, toPath, fp, ctx, counted, sent);
      if (small) return small;
    }
    return await streamedPut(from, to, fromPath, toPath, fp, ctx, counted, sent);
  } catch (err) {
    // A failed attempt's bytes do not count as moved.
    if (counted.bytes > 0) ctx.onBytes(-counted.bytes);
    throw err;
  }
}
