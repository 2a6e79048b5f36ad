import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ProviderError } from '@skyferry/providers';
import { executePlan, type ItemEvent } from './executor.ts';
import { planRetry, planTransfer } from './planner.ts';
import { runTransfer, type RunRequest } from './run.ts';
import { MemoryCheckpointStore, type CheckpointInfo } from './stores.ts';
import { MemoryProvider, MemoryStore, md5Hex } from './testing/memory-provider.ts';
import { sameFiles } from './same-files.testing.ts';
import { taskStateOf } from './tools.ts';
import type { TransferProgress } from './types.ts';
import { copyFile, inflightTypes } from './copy-file.ts';
import { Semaphore } from './util.ts';
import { Pacer } from '@skyferry/providers';

const T0 = Date.UTC(2025, 5, 1);

function tree(n: number, opts: { size?: (i: number) => number; dirs?: number } = {}): MemoryStore {
  const store = new MemoryStore();
  for (let i = 0; i < n; i++) {
    const size = opts.size?.(i) ?? 100 + i;
    store.writeFile(`/src/d${i % (opts.dirs ?? 4)}/f${i}.bin`, randomBytes(size), { mtime: T0 + i * 1000 });
  }
  return store;
}

const fastRetries = { retries: 6, minSleepMs: 1, maxSleepMs: 5 };

/** Migrates the source's /src folder into the target's /t with the given options. */
function migrateSrc(source: MemoryProvider, target: MemoryProvider, opts: Partial<RunRequest> = {}) {
  return runTransfer({ source, target, mode: 'migrate', sourcePaths: ['/src'], targetPath: '/t', ...opts });
}

describe('executor', () => {
  it('copies a tree, keeps mod times, reports progress and a result', async () => {
    const store = tree(40);
    const source = new MemoryProvider({ store });
    const target = new MemoryProvider();
    const progress: TransferProgress[] = [];
    const { plan, result } = await runTransfer({
      source,
      target,
      mode: 'migrate',
      sourcePaths: ['/src'],
      targetPath: '/backup',
      onProgress: (p) => progress.push(p),
      progressIntervalMs: 5,
    });
    expect(result.outcome).toBe('success');
    expect(taskStateOf(result.outcome)).toBe(0);
    sameFiles(store, '/src', target.store, '/backup/src');
    for (const [k, v] of store.files('/src')) expect(target.store.files('/backup/src').get(k)?.mtime).toBe(v.mtime);
    const bytes = [...store.files('/src').values()].reduce((s, f) => s + f.size, 0);
    expect(result).toMatchObject({
      successCount: 40,
      totalCount: 40,
      totalSize: bytes,
      transferredBytes: bytes,
      source: { kind: 'memory', paths: ['/src'] },
      target: { kind: 'memory', path: '/backup' },
      failed: [],
      summary: { added: 40, updated: 0, deleted: 0, skipped: 0, conflicts: 0, failed: 0 },
    });
    expect(plan?.summary.copy.count).toBe(40);
    const last = progress.at(-1) as TransferProgress;
    expect(last).toMatchObject({
      percentage: 100,
      transferred: bytes,
      length: bytes,
      finishedCounts: 40,
      totalCounts: 40,
      eta: 0,
    });
    expect(progress.some((p) => p.phase === 'transferring')).toBe(true);
  });

  it('runs files in parallel up to the limit, small files in a wider lane of their own', async () => {
    const store = tree(24, { size: (i) => (i < 12 ? 5000 : 100) });
    const source = new MemoryProvider({ store });
    const target = new MemoryProvider({ latencyMs: 15 });
    const plan = await planTransfer({ source, target, mode: 'one_way', sourcePaths: ['/src'], targetPath: '/t' });
    const result = await executePlan(plan, {
      source,
      target,
      transfers: 3,
      smallFileTransfers: 5,
      smallFileSize: 1000,
    });
    expect(result.outcome).toBe('success');
    expect(target.maxInFlight).toBeGreaterThan(5);
    expect(target.maxInFlight).toBeLessThanOrEqual(8);
    const only = new MemoryProvider({ latencyMs: 15 });
    const big = await planTransfer({ source, target: only, mode: 'one_way', sourcePaths: ['/src'], targetPath: '/t' });
    await executePlan(big, { source, target: only, transfers: 4, smallFileSize: 1 });
    expect(only.maxInFlight).toBe(4);
  });

  it('copies server-side within one account', async () => {
    const store = tree(5);
    const source = new MemoryProvider({ store });
    const target = new MemoryProvider({ store });
    const items: ItemEvent[] = [];
    const { result } = await runTransfer({
      source,
      target,
      mode: 'migrate',
      sourcePaths: ['/src'],
      targetPath: '/copy',
      onItem: (e) => items.push(e),
    });
    expect(result.outcome).toBe('success');
    expect(source.opCount('openRead')).toBe(0);
    expect(target.opCount('copy')).toBe(5);
    expect(items.every((e) => e.serverSide && e.verified === 'hash')).toBe(true);
    sameFiles(store, '/src', store, '/copy/src');
  });

  it('uploads large files in parallel chunks within the memory budget, and verifies them', async () => {
    const store = new MemoryStore();
    const big = randomBytes(5 * 1024 * 1024 + 123);
    store.writeFile('/src/big.bin', big);
    store.writeFile('/src/small.bin', 'small');
    const source = new MemoryProvider({ store });
    const target = new MemoryProvider({ chunkSize: 256 * 1024, chunkConcurrency: 4, latencyMs: 2 });
    const items: ItemEvent[] = [];
    const { result } = await runTransfer({
      source,
      target,
      mode: 'migrate',
      sourcePaths: ['/src'],
      targetPath: '/',
      chunkThreshold: 1024 * 1024,
      memoryBudget: 1024 * 1024,
      onItem: (e) => items.push(e),
    });
    expect(result.outcome).toBe('success');
    expect(target.opCount('writeChunk')).toBe(21);
    expect(md5Hex(target.store.readFile('/src/big.bin'))).toBe(md5Hex(big));
    const bigEvent = items.find((e) => e.item.rel === '/big.bin');
    expect(bigEvent).toMatchObject({ chunked: true, verified: 'hash' });
  });

  it('hashes a chunked write in flight only for a comparison: a hash the target reports, or the source declared', () => {
    const ctx = { returnedHashes: new Map() };
    const none = { size: 10 };
    const declared = { size: 10, hashes: { md5: 'a'.repeat(32) } };
    // Like S3: single writes report (and check) an MD5, a multipart one reports no hash of the file.
    const s3Like = new MemoryProvider({ checkedWrites: ['md5'], chunkedWriteHashes: [] });
    expect(inflightTypes(s3Like, none, ctx, true)).toEqual([]);
    expect(inflightTypes(s3Like, declared, ctx, true)).toEqual(['md5']); // a check of the read
    expect(inflightTypes(s3Like, none, ctx, false)).toEqual([]); // the service checks it
    // A target whose chunked writes report the file's MD5: computed to compare with it.
    const reports = new MemoryProvider({});
    expect(inflightTypes(reports, none, ctx, true)).toEqual(['md5']);
    expect(inflightTypes(reports, declared, ctx, false)).toEqual([]); // compared with the source's
  });

  it('starts the next file while a sent one waits for its answer: n streaming, at most 2n under way', async () => {
    // Files of 2 MiB or more (the large lane), whose put answers 30 ms after taking the last byte.
    const store = tree(12, { size: () => 2 * 1024 * 1024 });
    const source = new MemoryProvider({ store });
    const target = new MemoryProvider({ features: { chunkWriter: false } });
    let streaming = 0;
    let underWay = 0;
    let maxStreaming = 0;
    let maxUnderWay = 0;
    const put = target.put.bind(target);
    target.put = async (path, body, src, opts) => {
      underWay++;
      streaming++;
      maxUnderWay = Math.max(maxUnderWay, underWay);
      maxStreaming = Math.max(maxStreaming, streaming);
      const chunks: Buffer[] = [];
      for await (const c of body as AsyncIterable<Buffer>) chunks.push(Buffer.from(c));
      streaming--;
      await new Promise((r) => setTimeout(r, 30));
      try {
        const { Readable } = await import('node:stream');
        return await put(path, Readable.from(chunks), src, opts);
      } finally {
        underWay--;
      }
    };
    const { result } = await runTransfer({
      source,
      target,
      mode: 'migrate',
      sourcePaths: ['/src'],
      targetPath: '/',
      transfers: 2,
    });
    expect(result.outcome).toBe('success');
    sameFiles(store, '/src', target.store, '/src');
    expect(maxStreaming).toBeLessThanOrEqual(2);
    expect(maxUnderWay).toBeGreaterThan(2);
    expect(maxUnderWay).toBeLessThanOrEqual(4);
  });

  const MiB = 1024 * 1024;
  /**
   * Migrates a file of three ranges (two of 64 MiB, the largest range, then 123 bytes) to a target
   * whose chunk writer takes ranges (as Apache WebDAV's does), 2 at once, answering each range 30 ms
   * after taking its last byte; ranges at the offsets in `fail` are refused.
   */
  const migrateRanged = async (fail: number[] = []) => {
    const store = new MemoryStore();
    store.addSynthetic('/src/big.bin', 128 * MiB + 123, { fill: 7 });
    const target = new MemoryProvider({ hashes: [] });
    const seen = { streaming: 0, underWay: 0, maxStreaming: 0, maxUnderWay: 0, aborted: 0 };
    const ranges: [number, number][] = [];
    target.openChunkWriter = async (path, src) => ({
      chunkSize: MiB,
      concurrency: 2,
      doneWithDataWhenSettled: true,
      writeChunk: () => Promise.reject(new Error('ranges only')),
      async writeRange(offset, length, body) {
        if (fail.includes(offset)) throw new ProviderError('permission', `refused at ${offset}`);
        seen.underWay++;
        seen.streaming++;
        seen.maxUnderWay = Math.max(seen.maxUnderWay, seen.underWay);
        seen.maxStreaming = Math.max(seen.maxStreaming, seen.streaming);
        let n = 0;
        for await (const c of body as AsyncIterable<Buffer>) n += c.length;
        seen.streaming--;
        await new Promise((r) => setTimeout(r, 30));
        seen.underWay--;
        expect(n).toBe(length);
        ranges.push([offset, n]);
      },
      close: async () => ({ path, name: 'big.bin', kind: 'file', size: src.size }),
      abort: async () => {
        seen.aborted++;
      },
    });
    const items: ItemEvent[] = [];
    const { result } = await runTransfer({
      source: new MemoryProvider({ store, hashes: [] }),
      target,
      mode: 'migrate',
      sourcePaths: ['/src'],
      targetPath: '/',
      chunkThreshold: MiB,
      onItem: (e) => items.push(e),
    });
    return { result, items, seen, ranges, target };
  };

  it('sends the next range of a big file while a sent one waits for its answer: 2 streaming, 3 under way', async () => {
    const { result, items, seen, ranges } = await migrateRanged();
    expect(result.outcome).toBe('success');
    expect(items.find((e) => e.item.rel === '/big.bin')).toMatchObject({ chunked: true });
    expect(ranges.sort((a, b) => a[0] - b[0])).toEqual([
      [0, 64 * MiB],
      [64 * MiB, 64 * MiB],
      [128 * MiB, 123],
    ]);
    // The third range went while the first waited for its answer; never more than two streaming.
    expect(seen.maxStreaming).toBe(2);
    expect(seen.maxUnderWay).toBe(3);
    expect(seen.aborted).toBe(0);
  });

  it('starts no range after one is refused, and drops the upload once those under way are done', async () => {
    const { result, seen, ranges, target } = await migrateRanged([0]);
    expect(result.outcome).not.toBe('success');
    expect(result.failed.map((f) => [f.item.rel, f.reason])).toEqual([['/big.bin', 'permission']]);
    // The second range was under way when the first was refused and finished; the third never started.
    expect(ranges).toEqual([[64 * MiB, 64 * MiB]]);
    expect(seen.aborted).toBe(1);
    expect(target.store.find('/src/big.bin')).toBeUndefined();
  });

  it('retries failures of the retry class and still moves every byte once', async () => {
    const store = tree(30);
    const source = new MemoryProvider({ store });
    const target = new MemoryProvider();
    let n = 0;
    target.faults.before = (op) =>
      op === 'put' && n++ % 3 === 0 ? new ProviderError('server', 'HTTP 503', { serviceCode: 503 }) : undefined;
    let reads = 0;
    source.faults.readFailure = () =>
      reads++ % 4 === 0 ? { afterBytes: 50, error: new ProviderError('network', 'ECONNRESET') } : undefined;
    const { result } = await migrateSrc(source, target, {
      retries: fastRetries,
    });
    expect(result.outcome).toBe('success');
    sameFiles(store, '/src', target.store, '/t/src');
    expect(result.transferredBytes).toBe(result.totalSize);
  });

  it('detects corrupted writes by hash, retries them, and fails a file that stays corrupted', async () => {
    const store = tree(6);
    const source = new MemoryProvider({ store });
    const target = new MemoryProvider();
    let once = true;
    target.faults.corruptWrite = (path) => {
      if (path.endsWith('f1.bin')) return true; // always
      if (path.endsWith('f2.bin') && once) return !(once = false);
      return false;
    };
    const { result } = await migrateSrc(source, target, {
      retries: { ...fastRetries, retries: 2 },
    });
    expect(result.outcome).toBe('partial');
    expect(taskStateOf(result.outcome)).toBe(5);
    expect(result.failed).toHaveLength(1);
    expect(result.failed[0]).toMatchObject({
      sourceFile: { name: 'f1.bin', parent: '/src/d1' },
      sourceSide: 'source',
      reason: 'corrupted',
    });
    expect(target.store.files('/t/src').get('/d2/f2.bin')?.md5).toBe(store.files('/src').get('/d2/f2.bin')?.md5);
  });

  it('leaves the hash check of a single write to a target that checks it end to end (checkedWrites), and checks it itself otherwise', async () => {
    // The source declares no hash; the target reports MD5s and stores a flipped byte in f1.bin.
    const run = async (checkedWrites: 'md5'[] | undefined) => {
      const source = new MemoryProvider({ store: tree(4), hashes: [] });
      const target = new MemoryProvider({ checkedWrites });
      target.faults.corruptWrite = (path) => path.endsWith('f1.bin');
      const items: ItemEvent[] = [];
      const { result } = await migrateSrc(source, target, {
        retries: { ...fastRetries, retries: 0 },
        onItem: (e) => items.push(e),
      });
      return { result, items };
    };
    // Without the claim the engine digests the bytes it sends and catches the corrupted copy.
    const own = await run(undefined);
    expect(own.result.failed.map((f) => f.sourceFile.name)).toEqual(['f1.bin']);
    expect(own.result.failed[0]?.reason).toBe('corrupted');
    // With it the engine computes nothing more (this fake claims a check it does not make, so the
    // flipped byte passes: the provider is the one that must check) and reports the files as hash-verified.
    const trusted = await run(['md5']);
    expect(trusted.result.outcome).toBe('success');
    expect(
      trusted.items.filter((e) => e.item.kind === 'file' && e.type === 'done').every((e) => e.verified === 'hash'),
    ).toBe(true);
  });

  it('tries files that failed for a passing reason once more at the end of the run', async () => {
    const store = tree(8);
    const source = new MemoryProvider({ store });
    const target = new MemoryProvider();
    let tries = 0;
    target.faults.before = (op, path) =>
      op === 'put' && path.endsWith('/f5.bin') && ++tries <= 3 ? new ProviderError('server', 'HTTP 502') : undefined;
    const events: string[] = [];
    const { result } = await migrateSrc(source, target, {
      retries: { retries: 1, minSleepMs: 1, maxSleepMs: 2 },
      onItem: (e) => e.item.rel.endsWith('f5.bin') && events.push(e.type),
    });
    expect(result.outcome).toBe('success');
    expect(result.failed).toEqual([]);
    expect(events).toEqual(['failed', 'done']);
    expect(tries).toBe(4);
    const stubborn = await runTransfer({
      source,
      target: new MemoryProvider({
        faults: {
          before: (op, path) =>
            op === 'put' && path.endsWith('/f5.bin') ? new ProviderError('server', 'HTTP 502') : undefined,
        },
      }),
      mode: 'migrate',
      sourcePaths: ['/src'],
      targetPath: '/t',
      retries: { retries: 1, minSleepMs: 1, maxSleepMs: 2 },
    });
    expect(stubborn.result.outcome).toBe('partial');
    expect(stubborn.result.failed.map((f) => f.reason)).toEqual(['server']);
    expect(stubborn.result.successCount).toBe(7);
  });

  it('lists failed files and retries only them', async () => {
    const store = tree(10);
    const source = new MemoryProvider({ store });
    const target = new MemoryProvider();
    let deny = true;
    target.faults.before = (op, path) =>
      deny && op === 'put' && /f[37]\.bin$/.test(path) ? new ProviderError('permission', 'denied') : undefined;
    const first = await migrateSrc(source, target, {
      tokenIds: { source: 'cloud-1' },
    });
    expect(first.result.outcome).toBe('partial');
    expect(
      first.result.failed
        .map((f) => `${f.sourceFile.parent}/${f.sourceFile.name} ${f.reason} ${f.sourceTokenId}`)
        .sort(),
    ).toEqual(['/src/d3/f3.bin permission cloud-1', '/src/d3/f7.bin permission cloud-1']);
    deny = false;
    const before = target.writes.length;
    const retry = await planRetry({
      source,
      target,
      failed: first.result.failed,
      options: (first.plan as NonNullable<typeof first.plan>).options,
    });
    expect(retry.kind).toBe('retry');
    expect(retry.items.map((i) => i.rel).sort()).toEqual(['/d3/f3.bin', '/d3/f7.bin']);
    const second = await executePlan(retry, { source, target });
    expect(second.outcome).toBe('success');
    expect(target.writes.length - before).toBe(2);
    sameFiles(store, '/src', target.store, '/t/src');
  });

  it('stops at a fatal error and lists what was not done', async () => {
    const store = tree(20);
    const source = new MemoryProvider({ store });
    const target = new MemoryProvider();
    let puts = 0;
    target.faults.before = (op) =>
      op === 'put' && ++puts > 5 ? new ProviderError('auth_expired', 'token expired') : undefined;
    const { result } = await migrateSrc(source, target, {
      transfers: 1,
      smallFileTransfers: 1,
    });
    expect(result.outcome).toBe('failed');
    expect(result.error).toMatchObject({ code: 'auth_expired' });
    expect(result.successCount).toBe(5);
    expect(result.failed).toHaveLength(15);
    // The file that met the error failed; the others were not done.
    expect(result.failed.filter((f) => !f.notDone).map((f) => f.reason)).toEqual(['auth_expired']);
  });

  it('detects insufficient target space before the run and while it runs', async () => {
    const store = tree(10, { size: () => 1000 });
    const source = new MemoryProvider({ store });
    const small = new MemoryProvider({ store: new MemoryStore({ quota: 5500 }) });
    const { result } = await runTransfer({
      source,
      target: small,
      mode: 'migrate',
      sourcePaths: ['/src'],
      targetPath: '/t',
    });
    expect(result).toMatchObject({
      outcome: 'insufficient_space',
      neededBytes: 10_000,
      fullSide: 'target',
      successCount: 0,
    });
    expect(taskStateOf(result.outcome)).toBe(6);
    expect(small.writes).toHaveLength(0);

    // The service does not report free space: the quota error while writing stops the run.
    const noAbout = new MemoryProvider({ store: new MemoryStore({ quota: 5500 }), features: { about: false } });
    const during = await runTransfer({
      source,
      target: noAbout,
      mode: 'migrate',
      sourcePaths: ['/src'],
      targetPath: '/t',
      transfers: 1,
      smallFileTransfers: 1,
    });
    expect(during.result.outcome).toBe('insufficient_space');
    expect(during.result.successCount).toBe(5);
    expect(during.result.neededBytes).toBe(5000);
    // The user chose to go on: the run tries anyway.
    const anyway = await runTransfer({
      source,
      target: small,
      mode: 'migrate',
      sourcePaths: ['/src'],
      targetPath: '/u',
      ignoreSpaceCheck: true,
      transfers: 1,
      smallFileTransfers: 1,
    });
    expect(anyway.result.outcome).toBe('insufficient_space');
    expect(anyway.result.successCount).toBe(5);
  });

  it('stops when the traffic hook says the allowance is used up', async () => {
    const store = tree(10, { size: () => 1000 });
    const source = new MemoryProvider({ store });
    const target = new MemoryProvider();
    let allowance = 3500;
    const { result } = await migrateSrc(source, target, {
      transfers: 1,
      smallFileTransfers: 1,
      traffic: {
        beforeBytes: (n) => {
          if (n > allowance) return false;
          allowance -= n;
          return true;
        },
      },
    });
    expect(result).toMatchObject({ outcome: 'traffic_exceeded', successCount: 3, neededBytes: 7000 });
    expect(taskStateOf(result.outcome)).toBe(10);
    const upfront = await runTransfer({
      source,
      target,
      mode: 'migrate',
      sourcePaths: ['/src'],
      targetPath: '/v',
      traffic: { beforeRun: (n) => n <= 5000, beforeBytes: () => true },
    });
    expect(upfront.result).toMatchObject({ outcome: 'traffic_exceeded', neededBytes: 10_000, successCount: 0 });
  });

  it('gives the allowance a failed file held back: the other files are not stopped for its size', async () => {
    const store = tree(10, { size: () => 1000 });
    const source = new MemoryProvider({ store });
    const target = new MemoryProvider();
    // Two files the target refuses every time; enough allowance for the eight others only.
    target.faults.before = (op, path) =>
      op === 'put' && /\/f[01]\.bin$/.test(path ?? '') ? new ProviderError('permission', 'refused') : undefined;
    let remaining = 8000;
    const held = new Map<string, number>();
    const calls = { allowed: 0, after: 0, released: 0 };
    const { result } = await migrateSrc(source, target, {
      retries: fastRetries,
      traffic: {
        beforeBytes: (n, info) => {
          if (n > remaining) return false;
          remaining -= n;
          held.set(info.path, n);
          calls.allowed++;
          return true;
        },
        afterBytes: (n, info) => {
          remaining += (held.get(info.path) ?? 0) - n;
          held.delete(info.path);
          calls.after++;
        },
        released: (info) => {
          remaining += held.get(info.path) ?? 0;
          held.delete(info.path);
          calls.released++;
        },
      },
    });
    expect(result.outcome).toBe('partial');
    expect(result.summary).toMatchObject({ added: 8, failed: 2 });
    // Each file allowed ends once: charged when written, given back when it failed.
    expect(calls.after).toBe(8);
    expect(calls.released).toBe(calls.allowed - 8);
    expect(held.size).toBe(0);
    expect(remaining).toBe(0);
  });

  it('cancels mid-run leaving no partial files, then resumes from checkpoints without copying finished files again', async () => {
    const store = tree(40, { size: () => 20_000 });
    const source = new MemoryProvider({ store });
    const target = new MemoryProvider({ latencyMs: 5 });
    const checkpoints = new MemoryCheckpointStore();
    const ac = new AbortController();
    let done = 0;
    const first = await runTransfer({
      source,
      target,
      mode: 'migrate',
      sameNamePolicy: 'overwrite',
      sourcePaths: ['/src'],
      targetPath: '/t',
      checkpoints,
      signal: ac.signal,
      transfers: 4,
      onItem: (e) => {
        if (e.type === 'done' && ++done === 10) ac.abort();
      },
    });
    expect(first.result.outcome).toBe('canceled');
    const written = new Set(target.writes);
    expect(written.size).toBeGreaterThanOrEqual(10);
    expect(written.size).toBeLessThan(40);
    // Every file visible on the target is complete.
    for (const [k, v] of target.store.files('/t/src')) expect(v.md5).toBe(store.files('/src').get(k)?.md5);
    expect([...checkpoints.done.values()].filter((c) => c.action === 'copy').length).toBe(written.size);

    const writesBefore = target.writes.length;
    const second = await runTransfer({
      source,
      target,
      mode: 'migrate',
      sameNamePolicy: 'overwrite',
      sourcePaths: ['/src'],
      targetPath: '/t',
      checkpoints,
    });
    expect(second.result.outcome).toBe('success');
    expect(second.result.summary.resumed).toBe(written.size);
    // Files the first attempt added count as added, though the resumed plan sees them as updates.
    expect(second.result.summary).toMatchObject({ added: 40, updated: 0 });
    const again = target.writes.slice(writesBefore);
    expect(again.filter((p) => written.has(p))).toEqual([]);
    expect(again.length).toBe(40 - written.size);
    sameFiles(store, '/src', target.store, '/t/src');
    expect(checkpoints.done.size).toBe(0); // a finished run forgets its checkpoints
  });

  it('a resumed run writes again what an earlier attempt finished but is no longer there as written, and deletes again what came back', async () => {
    const store = tree(30, { size: (i) => 10_000 + i });
    const tstore = new MemoryStore();
    const EXTRA_T = Date.UTC(2024, 0, 1);
    for (let i = 0; i < 6; i++) tstore.writeFile(`/t/extra${i}.txt`, `extra ${i}`, { mtime: EXTRA_T });
    const source = new MemoryProvider({ store });
    const target = new MemoryProvider({ store: tstore, latencyMs: 2 });
    const checkpoints = new MemoryCheckpointStore();
    const ac = new AbortController();
    const deleted: string[] = [];
    const run = (signal?: AbortSignal) =>
      runTransfer({
        source,
        target,
        mode: 'mirror',
        sourcePaths: ['/src'],
        targetPath: '/t',
        checkpoints,
        confirmDeletes: true,
        useTrash: false,
        transfers: 1,
        ...(signal ? { signal } : {}),
        onItem: (e) => {
          if (e.type === 'done' && e.item.action === 'delete' && deleted.push(e.item.rel) === 2) ac.abort();
        },
      });
    const first = await run(ac.signal);
    expect(first.result.outcome).toBe('canceled');
    expect(deleted).toHaveLength(2);
    const copied = [...target.store.files('/t').keys()].filter((k) => !k.startsWith('/extra'));
    expect(copied).toHaveLength(30);

    // Between the attempts, someone removes two copied files on the target and cuts a third short,
    // and the two extra files the first attempt deleted come back as they were.
    const [gone1, gone2, cut] = copied as [string, string, string];
    tstore.remove(`/t${gone1}`);
    tstore.remove(`/t${gone2}`);
    tstore.writeFile(`/t${cut}`, 'short');
    for (const rel of deleted) tstore.writeFile(`/t${rel}`, `extra ${rel.slice(6, 7)}`, { mtime: EXTRA_T });
    const writesBefore = target.writes.length;
    const second = await run();
    expect(second.result.outcome).toBe('success');
    // The three are written again; the other copied files are not.
    const again = target.writes.slice(writesBefore).map((p) => p.slice('/t'.length));
    expect(again.sort()).toEqual([gone1, gone2, cut].sort());
    // The plan made again skips the copied files still there: they count as the earlier attempt's
    // work (resumed), not as skips; the deletes are all done now. Every file counts once.
    expect(second.result.summary).toMatchObject({
      added: 29,
      updated: 1,
      deleted: 6,
      skipped: 0,
      failed: 0,
      resumed: 27,
      redone: 5,
    });
    expect(second.result.successCount).toBe(36);
    expect(second.result.totalCount).toBe(36);
    // Every extra is gone, the two that came back too: the target is the source's copy.
    sameFiles(store, '/src', target.store, '/t');
  });

  it('while the target is down the finished count does not grow, and it never goes back when the failed files are tried again', async () => {
    const store = tree(60, { size: () => 2_000 });
    const source = new MemoryProvider({ store });
    const target = new MemoryProvider({ latencyMs: 1 });
    // The target takes 20 files, then is down for the next 30 writes (each fails), then comes back.
    let puts = 0;
    target.faults.before = (op) => {
      if (op !== 'put') return undefined;
      puts++;
      return puts > 20 && puts <= 50 ? new ProviderError('network', 'connection refused') : undefined;
    };
    const seen: TransferProgress[] = [];
    let done = 0;
    const { result } = await migrateSrc(source, target, {
      transfers: 4,
      smallFileTransfers: 4,
      retries: { retries: 1, minSleepMs: 1, maxSleepMs: 2 },
      progressIntervalMs: 2,
      onItem: (e) => {
        if (e.type === 'done') done++;
      },
      onProgress: (p) => {
        seen.push(p);
        // Only files done count as finished, never failed ones.
        expect(p.finishedCounts).toBeLessThanOrEqual(done);
      },
    });
    expect(result.outcome).toBe('success');
    expect(seen.some((p) => p.failedCounts > 0)).toBe(true);
    const finished = seen.map((p) => p.finishedCounts);
    for (let i = 1; i < finished.length; i++) expect(finished[i]).toBeGreaterThanOrEqual(finished[i - 1] as number);
    const percent = seen.map((p) => p.percentage);
    for (let i = 1; i < percent.length; i++) expect(percent[i]).toBeGreaterThanOrEqual(percent[i - 1] as number);
    expect(seen.at(-1)).toMatchObject({ finishedCounts: 60, totalCounts: 60, failedCounts: 0 });
    expect(result.summary).toMatchObject({ added: 60, skipped: 0, failed: 0, notDone: 0 });
  });

  it('a run resumed after a crash counts each file once: what the first attempt copied is added, not skipped', async () => {
    const store = tree(300, { size: () => 500 });
    const source = new MemoryProvider({ store });
    const target = new MemoryProvider({ latencyMs: 1 });
    const checkpoints = new MemoryCheckpointStore();
    const ac = new AbortController();
    let copied = 0;
    const first = await migrateSrc(source, target, {
      checkpoints,
      sameNamePolicy: 'skip',
      transfers: 2,
      smallFileTransfers: 2,
      signal: ac.signal,
      onItem: (e) => {
        if (e.type === 'done' && ++copied === 101) ac.abort();
      },
    });
    expect(first.result.outcome).toBe('canceled');
    expect(first.result.summary.notDone + first.result.summary.added).toBe(300);
    expect(first.result.summary.failed).toBe(0);
    const already = checkpoints.done.size;
    expect(already).toBeGreaterThanOrEqual(101);
    const progress: TransferProgress[] = [];
    const second = await migrateSrc(source, target, {
      checkpoints,
      sameNamePolicy: 'skip',
      progressIntervalMs: 2,
      onProgress: (p) => progress.push(p),
    });
    expect(second.result.outcome).toBe('success');
    // The files the first attempt copied are skips of the plan made again: they count as added.
    expect(second.plan?.summary.skip.count).toBe(already);
    expect(second.result.summary).toMatchObject({ added: 300, skipped: 0, failed: 0, resumed: already });
    expect(second.result).toMatchObject({ successCount: 300, totalCount: 300 });
    // Its progress starts from what was done, out of the whole run.
    expect(progress[0]).toMatchObject({ totalCounts: 300 });
    expect(progress[0]?.finishedCounts).toBe(already);
    expect(progress.at(-1)).toMatchObject({ finishedCounts: 300, totalCounts: 300, percentage: 100 });
    sameFiles(store, '/src', target.store, '/t/src');
  });

  for (const policy of ['skip', 'overwrite'] as const) {
    it(`a file an attempt wrote but was cut off before recording counts as added on resume, not ${policy === 'skip' ? 'skipped' : 'updated'} (${policy})`, async () => {
      const store = tree(120, { size: () => 400 });
      const source = new MemoryProvider({ store });
      const target = new MemoryProvider({ latencyMs: 1 });
      // Every third record is lost, as when the process is killed between a write and its record.
      class Losing extends MemoryCheckpointStore {
        n = 0;
        override async markDone(key: string, info: CheckpointInfo): Promise<void> {
          if (info.action === 'copy' && ++this.n % 3 === 0) return;
          return super.markDone(key, info);
        }
      }
      const checkpoints = new Losing();
      const ac = new AbortController();
      let copied = 0;
      const first = await migrateSrc(source, target, {
        checkpoints,
        sameNamePolicy: policy,
        transfers: 2,
        smallFileTransfers: 2,
        signal: ac.signal,
        onItem: (e) => {
          if (e.type === 'done' && ++copied === 45) ac.abort();
        },
      });
      expect(first.result.outcome).toBe('canceled');
      const written = target.store.files('/t/src').size;
      expect(checkpoints.done.size).toBeLessThan(written);
      checkpoints.n = -1_000_000; // the second attempt loses nothing
      const progress: TransferProgress[] = [];
      const second = await migrateSrc(source, target, {
        checkpoints,
        sameNamePolicy: policy,
        progressIntervalMs: 2,
        onProgress: (p) => progress.push(p),
      });
      expect(second.result.outcome).toBe('success');
      expect(second.result.summary).toMatchObject({ added: 120, updated: 0, skipped: 0, failed: 0 });
      expect(second.result).toMatchObject({ successCount: 120, totalCount: 120 });
      expect(progress[0]?.totalCounts).toBe(120);
      expect(progress.at(-1)).toMatchObject({ finishedCounts: 120, totalCounts: 120 });
      sameFiles(store, '/src', target.store, '/t/src');
      expect(checkpoints.figures).toBeUndefined(); // forgotten with the run
    });
  }

  it("the first attempt's figures do not apply to a run planned with other options (the task was edited)", async () => {
    const store = tree(40, { size: () => 300 });
    const source = new MemoryProvider({ store });
    const target = new MemoryProvider({ latencyMs: 1 });
    const checkpoints = new MemoryCheckpointStore();
    // Figures kept by an attempt of a migration that skipped same names and planned 40 copies.
    const migrate = await planTransfer({ source, target, mode: 'migrate', sourcePaths: ['/src'], targetPath: '/t' });
    await checkpoints.savePlanned({
      copy: 40,
      update: 0,
      skip: 0,
      of: JSON.stringify({ ...migrate.options, sameNamePolicy: 'skip' }),
    });
    // Files already at the target, copied by an earlier run: this run skips them, as its own plan says.
    expect((await migrateSrc(source, target)).result.summary.added).toBe(40);
    const { result } = await migrateSrc(source, target, { checkpoints });
    expect(result.summary).toMatchObject({ added: 0, skipped: 40 });
  });

  it('a canceled run counts what it did not reach as not done, not as failed', async () => {
    const store = tree(40);
    const source = new MemoryProvider({ store });
    const target = new MemoryProvider({ latencyMs: 1 });
    const ac = new AbortController();
    let n = 0;
    const { result } = await migrateSrc(source, target, {
      transfers: 1,
      smallFileTransfers: 1,
      signal: ac.signal,
      onItem: (e) => {
        if (e.type === 'done' && ++n === 10) ac.abort();
      },
    });
    expect(result.outcome).toBe('canceled');
    const s = result.summary;
    expect(s.failed).toBe(0);
    expect(s.notDone).toBeGreaterThan(0);
    expect(s.added + s.notDone).toBe(40);
    expect(result.failed.every((f) => f.notDone)).toBe(true);
  });

  it('mirror deletes to the trash, only after every copy succeeded, and asks before deleting most of the target', async () => {
    const store = new MemoryStore();
    for (const n of ['a', 'b', 'c', 'd']) store.writeFile(`/s/${n}.txt`, n);
    const tstore = new MemoryStore();
    for (const n of ['a', 'b', 'c', 'x', 'y']) tstore.writeFile(`/t/${n}.txt`, n);
    const source = new MemoryProvider({ store });
    const target = new MemoryProvider({ store: tstore });
    target.faults.before = (op, path) =>
      op === 'put' && path === '/t/d.txt' ? new ProviderError('permission', 'no') : undefined;
    const failed = await runTransfer({ source, target, mode: 'mirror', sourcePaths: ['/s'], targetPath: '/t' });
    // Nothing could be done: the one copy failed, so the deletes were held back.
    expect(failed.result.outcome).toBe('failed');
    expect(failed.result.failed.map((f) => `${f.item.rel} ${f.reason}`).sort()).toEqual([
      '/d.txt permission',
      '/x.txt skipped_after_failure',
      '/y.txt skipped_after_failure',
    ]);
    expect(tstore.exists('/t/x.txt')).toBe(true);

    target.faults.before = undefined;
    const ok = await runTransfer({ source, target, mode: 'mirror', sourcePaths: ['/s'], targetPath: '/t' });
    expect(ok.result.outcome).toBe('success');
    expect(ok.result.summary).toMatchObject({ added: 1, deleted: 2, skipped: 3 });
    expect([...tstore.files('/t').keys()].sort()).toEqual(['/a.txt', '/b.txt', '/c.txt', '/d.txt']);
    expect(tstore.trashed.map((t) => t.path).sort()).toEqual(['/t/x.txt', '/t/y.txt']);

    const empty = new MemoryProvider({ store: new MemoryStore() });
    empty.store.mkdirp('/s');
    const wipe = await runTransfer({ source: empty, target, mode: 'mirror', sourcePaths: ['/s'], targetPath: '/t' });
    expect(wipe.result.outcome).toBe('needs_delete_confirmation');
    expect(tstore.files('/t').size).toBe(4);
    const confirmed = await runTransfer({
      source: empty,
      target,
      mode: 'mirror',
      sourcePaths: ['/s'],
      targetPath: '/t',
      confirmDeletes: true,
      useTrash: false,
    });
    expect(confirmed.result.outcome).toBe('success');
    expect(tstore.files('/t').size).toBe(0);
  });

  it('buffers to a temporary file only when the target needs a size the source cannot give', async () => {
    const store = new MemoryStore();
    const data = randomBytes(70_000);
    store.writeFile('/doc', data);
    const source = new MemoryProvider({ store });
    const target = new MemoryProvider({ features: { needsSize: true, chunkWriter: false } });
    const ctx = {
      signal: new AbortController().signal,
      pacer: new Pacer({ retries: 0 }),
      chunkThreshold: 1 << 30,
      memory: new Semaphore(1 << 20),
      memoryBudget: 1 << 20,
      tempDir: (await import('node:os')).tmpdir(),
      verify: 'auto' as const,
      onBytes: () => {},
      returnedHashes: new Map(),
    };
    const r = await copyFile(source, target, '/doc', '/out', { size: -1 }, ctx);
    expect(r.bytes).toBe(70_000);
    expect(md5Hex(target.store.readFile('/out'))).toBe(md5Hex(data));
    // With a chunk writer, no temporary file is needed.
    const chunky = new MemoryProvider({ features: { needsSize: true }, chunkSize: 16 * 1024 });
    const c = await copyFile(source, chunky, '/doc', '/out', { size: -1 }, ctx);
    expect(c.chunked).toBe(true);
    expect(md5Hex(chunky.store.readFile('/out'))).toBe(md5Hex(data));
  });
});
