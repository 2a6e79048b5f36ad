import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ProviderError } from '@skyferry/providers';
import { runTransfer, streamTransfer, type StreamRunRequest } from './run.ts';
import { MemoryCheckpointStore, type CheckpointStore } from './stores.ts';
import { MemoryProvider, MemoryStore } from './testing/memory-provider.ts';
import { sameFiles } from './same-files.testing.ts';
import type { TransferProgress } from './types.ts';

const T0 = Date.UTC(2025, 5, 1);

/** /src with `folders` folders of `per` files, each folder with a subfolder of 3 files, and an empty folder. */
function tree(folders: number, per: number): MemoryStore {
  const store = new MemoryStore();
  for (let d = 0; d < folders; d++) {
    for (let i = 0; i < per; i++)
      store.writeFile(`/src/d${d}/f${i}.bin`, randomBytes(50 + ((d * 31 + i) % 200)), { mtime: T0 + i });
    for (let i = 0; i < 3; i++) store.writeFile(`/src/d${d}/sub/g${i}.txt`, `g${d}-${i}`, { mtime: T0 });
  }
  store.mkdirp('/src/empty/deeper');
  return store;
}

const base = (source: MemoryProvider, target: MemoryProvider): StreamRunRequest => ({
  source,
  target,
  mode: 'migrate',
  sourcePaths: ['/src'],
  targetPath: '/t',
  retries: { retries: 1, minSleepMs: 1, maxSleepMs: 2 },
});

describe('streamTransfer: planned and executed folder by folder', () => {
  it('ends as the whole plan would: the same files, folders, counts and totals', async () => {
    const store = tree(12, 30);
    const source = new MemoryProvider({ store });
    const ends = [];
    for (const run of [streamTransfer, runTransfer]) {
      const target = new MemoryProvider();
      // On the target already: one file the same, one of another size (updated), one folder.
      target.store.writeFile('/t/src/d0/f0.bin', store.readFile('/src/d0/f0.bin'), { mtime: T0 });
      target.store.writeFile('/t/src/d1/f1.bin', 'short', { mtime: T0 });
      const { plan, result } = await run({ ...base(source, target), window: 16, filter: null });
      sameFiles(store, '/src', target.store, '/t/src');
      expect(target.store.exists('/t/src/empty/deeper')).toBe(true);
      ends.push({ result, plan, target });
    }
    const [streamed, whole] = ends as [(typeof ends)[0], (typeof ends)[0]];
    expect(streamed.result.outcome).toBe('success');
    for (const k of ['successCount', 'totalCount', 'totalSize', 'transferredBytes', 'summary'] as const)
      expect(streamed.result[k], k).toEqual(whole.result[k]);
    expect(streamed.result.summary).toMatchObject({ added: 12 * 33 - 2, updated: 1, skipped: 1 });
    expect(streamed.plan?.summary).toEqual(whole.plan?.summary);
    expect(streamed.plan?.filesSeen).toEqual(whole.plan?.filesSeen);
    // The streamed plan keeps no items (its run took them as they came).
    expect(streamed.plan?.items).toEqual([]);
  });

  it('lists folders only as the run makes room: the first file is written before the tree is listed', async () => {
    const store = tree(40, 20);
    const source = new MemoryProvider({ store });
    const target = new MemoryProvider();
    let listedAtFirstWrite: number | undefined;
    const put = target.put.bind(target);
    target.put = async (...args) => {
      listedAtFirstWrite ??= source.opCount('list');
      return put(...args);
    };
    const { result } = await streamTransfer({ ...base(source, target), window: 10 });
    expect(result.outcome).toBe('success');
    // 82 folders below /src; with room for 10 items, the walk had listed only a few of them.
    expect(listedAtFirstWrite).toBeLessThan(10);
    expect(source.opCount('list')).toBeGreaterThanOrEqual(82);
    sameFiles(store, '/src', target.store, '/t/src');
  });

  it('says its totals grow while it plans (counting), and gives the final ones at the end', async () => {
    const store = tree(30, 20);
    const source = new MemoryProvider({ store, latencyMs: 1 });
    const target = new MemoryProvider();
    const events: TransferProgress[] = [];
    const { result } = await streamTransfer({
      ...base(source, target),
      window: 20,
      onProgress: (p) => events.push(p),
      progressIntervalMs: 5,
    });
    expect(result.outcome).toBe('success');
    const counting = events.filter((p) => p.counting);
    expect(counting.length).toBeGreaterThan(0);
    expect(counting.some((p) => p.totalCounts < result.totalCount)).toBe(true);
    const last = events.at(-1) as TransferProgress;
    expect(last.counting).toBeUndefined();
    expect(last).toMatchObject({ totalCounts: 30 * 23, finishedCounts: 30 * 23, length: result.totalSize });
  });

  it('checks the roots before anything is written: a refusal there writes nothing', async () => {
    const source = new MemoryProvider({ store: tree(3, 5) });
    const target = new MemoryProvider();
    await expect(
      streamTransfer({
        ...base(source, target),
        beforeWrites: async (plan) => {
          expect(plan.pairs).toEqual([{ source: '/src', target: '/t/src' }]);
          throw new Error('overlap');
        },
      }),
    ).rejects.toThrow('overlap');
    expect(target.writes).toEqual([]);
    expect(target.store.exists('/t')).toBe(false);
  });

  it('asks for the space and the allowance before it writes: a plan within the window is judged whole, and a refusal writes nothing', async () => {
    const store = tree(3, 5);
    const total = [...store.files('/src').values()].reduce((n, f) => n + f.size, 0);
    const full = new MemoryProvider({ store: new MemoryStore({ quota: total - 1 }) });
    const spaced = await streamTransfer({ ...base(new MemoryProvider({ store }), full), window: 1000 });
    expect(spaced.result.outcome).toBe('insufficient_space');
    expect(spaced.result.neededBytes).toBe(total);
    expect(full.writes).toEqual([]);
    const asked: number[] = [];
    const target = new MemoryProvider();
    const capped = await streamTransfer({
      ...base(new MemoryProvider({ store }), target),
      window: 1000,
      traffic: { beforeRun: (bytes) => (asked.push(bytes), false), beforeBytes: () => true },
    });
    expect(capped.result.outcome).toBe('traffic_exceeded');
    expect(asked).toEqual([total]);
    expect(capped.result.neededBytes).toBe(total);
    expect(target.writes).toEqual([]);
  });

  it('judges a plan larger than the window by its first window, then stops where the allowance runs out', async () => {
    const store = tree(60, 20);
    const total = [...store.files('/src').values()].reduce((n, f) => n + f.size, 0);
    const target = new MemoryProvider();
    const asked: number[] = [];
    const allowance = Math.floor(total * 0.6);
    let left = allowance;
    const { result } = await streamTransfer({
      ...base(new MemoryProvider({ store }), target),
      window: 16,
      traffic: {
        beforeRun: (bytes) => (asked.push(bytes), bytes <= left),
        // Each file takes its share when it starts: files in flight together cannot overdraw.
        beforeBytes: (bytes) => bytes <= left && ((left -= bytes), true),
      },
    });
    // Asked once, for what the first window holds, which the allowance covers.
    expect(asked).toHaveLength(1);
    expect(asked[0]).toBeGreaterThan(0);
    expect(asked[0]).toBeLessThan(total / 2);
    expect(result.outcome).toBe('traffic_exceeded');
    const written = [...target.store.files('/t').values()].reduce((n, f) => n + f.size, 0);
    expect(written).toBeGreaterThan(0);
    expect(written).toBeLessThanOrEqual(allowance);
  });

  it('counts files an attempt wrote and was cut off before recording as written by it, not as skipped', async () => {
    const source = new MemoryProvider({ store: tree(6, 20) });
    const target = new MemoryProvider();
    const checkpoints = new MemoryCheckpointStore();
    // A first attempt whose every tenth record is lost and whose announced batches are never
    // settled: what a kill between the writes and their records leaves.
    let n = 0;
    const cut: CheckpointStore = {
      get: (k) => checkpoints.get(k),
      getMany: (ks) => checkpoints.getMany(ks),
      markDone: async (k, info) => {
        if (n++ % 10 !== 0) await checkpoints.markDone(k, info);
      },
      clear: async () => undefined,
      tally: () => checkpoints.tally(),
      intend: (items) => checkpoints.intend(items),
      intentsDone: async () => undefined,
      intents: () => checkpoints.intents(),
    };
    const first = await streamTransfer({ ...base(source, target), window: 16, checkpoints: cut });
    expect(first.result.outcome).toBe('success');
    const files = first.result.summary.added;
    expect((await checkpoints.tally()).count).toBeLessThan(files);
    const writes = target.writes.length;
    // The run again, resumed: it writes nothing, and its figures are the whole run's.
    const again = await streamTransfer({ ...base(source, target), window: 16, checkpoints });
    expect(target.writes.length).toBe(writes);
    expect(again.result.outcome).toBe('success');
    expect(again.result.summary).toMatchObject({ added: files, skipped: 0, updated: 0 });
    expect(again.result.successCount).toBe(first.result.successCount);
    expect(again.result.totalCount).toBe(first.result.totalCount);
    expect(again.result.totalSize).toBe(first.result.totalSize);
    // Its end forgets the announcements with the records.
    expect(await checkpoints.intents()).toBeUndefined();
  });

  it('leaves a folder it cannot list alone, copies the rest, and ends partial naming it', async () => {
    const store = tree(6, 5);
    const source = new MemoryProvider({
      store,
      faults: {
        before: (op, path) =>
          op === 'list' && path === '/src/d2' ? new ProviderError('permission', 'no entry') : undefined,
      },
    });
    const target = new MemoryProvider();
    const { result, plan } = await streamTransfer({ ...base(source, target), window: 4 });
    expect(result.outcome).toBe('partial');
    expect(plan?.errors).toMatchObject([{ side: 'source', path: '/src/d2', code: 'permission' }]);
    expect(result.failed.map((f) => f.sourceFile)).toEqual([{ name: 'd2', parent: '/src' }]);
    expect(target.store.exists('/t/src/d2')).toBe(false);
    expect(result.summary.added).toBe(5 * 8);
  });

  it('stops on a sign-in that expires while it lists: failed, with the error, what was planned not done', async () => {
    const store = tree(20, 10);
    let lists = 0;
    const source = new MemoryProvider({
      store,
      faults: {
        before: (op) =>
          op === 'list' && ++lists === 20 ? new ProviderError('auth_expired', 'sign in again') : undefined,
      },
    });
    const target = new MemoryProvider();
    const { result } = await streamTransfer({ ...base(source, target), window: 8 });
    expect(result.outcome).toBe('failed');
    expect(result.error).toMatchObject({ code: 'auth_expired' });
    expect(result.summary.added).toBeGreaterThan(0);
    expect(result.summary.added + result.summary.notDone).toBe(result.totalCount);
  });

  it('stops when canceled midway: canceled, the files under way reported not done, checkpoints kept', async () => {
    const store = tree(20, 20);
    const source = new MemoryProvider({ store, latencyMs: 1 });
    const target = new MemoryProvider();
    const controller = new AbortController();
    const checkpoints = new MemoryCheckpointStore();
    const put = target.put.bind(target);
    let n = 0;
    target.put = async (...args) => {
      if (++n === 100) controller.abort();
      return put(...args);
    };
    const { result } = await streamTransfer({
      ...base(source, target),
      window: 30,
      signal: controller.signal,
      checkpoints,
    });
    expect(result.outcome).toBe('canceled');
    expect(result.summary.added).toBeGreaterThan(0);
    expect(result.summary.added).toBeLessThan(20 * 23);
    expect(checkpoints.done.size).toBe(result.summary.added);
    expect(result.failed.every((f) => f.notDone)).toBe(true);

    // Started again: what is checkpointed is not written again.
    const before = target.writes.length;
    const seen: TransferProgress[] = [];
    const again = await streamTransfer({
      ...base(source, target),
      window: 30,
      checkpoints,
      progressIntervalMs: 1,
      onProgress: (p) => seen.push(p),
    });
    expect(again.result.outcome).toBe('success');
    expect(again.result.summary.resumed).toBe(result.summary.added);
    // Its progress goes on from what the stopped attempt recorded, never from zero, and never goes back.
    const first = seen.find((p) => p.phase === 'transferring');
    expect(first?.finishedCounts).toBeGreaterThanOrEqual(result.summary.added);
    for (let i = 1; i < seen.length; i++) {
      const [a, b] = [seen[i - 1] as TransferProgress, seen[i] as TransferProgress];
      expect(b.finishedCounts).toBeGreaterThanOrEqual(a.finishedCounts);
      expect(b.transferred).toBeGreaterThanOrEqual(a.transferred);
    }
    expect(seen.at(-1)?.finishedCounts).toBe(20 * 23);
    expect(target.writes.length - before).toBe(20 * 23 - result.summary.added);
    sameFiles(store, '/src', target.store, '/t/src');
  });

  it('runs a mirror as a whole plan (its deletions are judged on whole listings)', async () => {
    const store = tree(3, 4);
    const source = new MemoryProvider({ store });
    const target = new MemoryProvider();
    target.store.writeFile('/t/extra.txt', 'x', { mtime: T0 });
    const { plan, result } = await streamTransfer({
      ...base(source, target),
      mode: 'mirror',
      targetPath: '/t',
      confirmDeletes: true,
    });
    expect(result.outcome).toBe('success');
    expect(plan?.items.some((it) => it.action === 'delete' && it.rel === '/extra.txt')).toBe(true);
    expect(target.store.exists('/t/extra.txt')).toBe(false);
  });
});
