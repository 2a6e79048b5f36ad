import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ConflictResolution } from '@skyferry/contract';
import { ProviderError } from '@skyferry/providers';
import { runTransfer } from './run.ts';
import { FileTwoWayStateStore, MemoryTwoWayStateStore, type TwoWayStateStore } from './stores.ts';
import { MemoryProvider, MemoryStore } from './testing/memory-provider.ts';

const T0 = Date.UTC(2026, 2, 1, 8, 0);
const MIN = 60_000;

interface World {
  a: MemoryStore;
  b: MemoryStore;
  source: MemoryProvider;
  target: MemoryProvider;
  state: TwoWayStateStore;
}

function world(state: TwoWayStateStore = new MemoryTwoWayStateStore()): World {
  const a = new MemoryStore();
  const b = new MemoryStore();
  a.mkdirp('/A');
  b.mkdirp('/B');
  return { a, b, source: new MemoryProvider({ store: a }), target: new MemoryProvider({ store: b }), state };
}

async function sync(
  w: World,
  opts: { resolution?: ConflictResolution; confirmDeletes?: boolean; signal?: AbortSignal; now?: Date } = {},
) {
  return runTransfer({
    source: w.source,
    target: w.target,
    mode: 'two_way',
    sourcePaths: ['/A'],
    targetPath: '/B',
    twoWayState: w.state,
    conflictResolution: opts.resolution,
    confirmDeletes: opts.confirmDeletes,
    signal: opts.signal,
    now: opts.now ?? new Date(Date.UTC(2026, 10, 22, 10, 30)),
    sideNames: { source: 'Drive', target: 'NAS' },
    retries: { retries: 1, minSleepMs: 1, maxSleepMs: 2 },
    // Fewer files at once than these worlds hold, so a cancel after some writes lands midway.
    smallFileTransfers: 8,
  });
}

/** path -> content of every file below a folder. */
function contents(s: MemoryStore, dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of [...s.files(dir).keys()].sort()) out[k] = s.readFile(dir + k).toString();
  return out;
}

function expectInSync(w: World): void {
  expect(contents(w.b, '/B')).toEqual(contents(w.a, '/A'));
  expect(w.b.folders('/B')).toEqual(w.a.folders('/A'));
}

describe('two-way sync', () => {
  it('first run merges both sides and deletes nothing; conflicts keep both', async () => {
    const w = world();
    w.a.writeFile('/A/only-a.txt', 'a', { mtime: T0 });
    w.a.writeFile('/A/same.txt', 'same', { mtime: T0 });
    w.a.writeFile('/A/docs/differ.txt', 'from A, newer', { mtime: T0 + 10 * MIN });
    w.b.writeFile('/B/only-b.txt', 'b', { mtime: T0 });
    w.b.writeFile('/B/same.txt', 'same', { mtime: T0 });
    w.b.writeFile('/B/docs/differ.txt', 'from B', { mtime: T0 });
    w.b.mkdirp('/B/empty-b');
    const { plan, result } = await sync(w);
    expect(plan?.twoWay?.firstRun).toBe(true);
    expect(plan?.summary.delete.count).toBe(0);
    expect(result.outcome).toBe('success');
    expect(result.twoWayStateCommitted).toBe(true);
    expectInSync(w);
    expect(contents(w.a, '/A')).toEqual({
      '/docs/differ (conflict 2026-11-22 from NAS).txt': 'from B',
      '/docs/differ.txt': 'from A, newer',
      '/only-a.txt': 'a',
      '/only-b.txt': 'b',
      '/same.txt': 'same',
    });
    expect(w.a.folders('/A')).toEqual(['/docs', '/empty-b']);
    expect(result.summary).toMatchObject({ added: 2, conflicts: 1, deleted: 0 });

    // A run with nothing changed does nothing.
    const again = await sync(w);
    expect(again.plan?.items.filter((i) => i.action !== 'skip')).toEqual([]);
    expect(again.result.outcome).toBe('success');
  });

  it('propagates new, changed and deleted files on either side', async () => {
    const w = world();
    for (const n of ['1', '2', '3', '4', '5', '6', '7', '8']) w.a.writeFile(`/A/f${n}.txt`, `v1 ${n}`, { mtime: T0 });
    await sync(w);
    expectInSync(w);
    w.a.writeFile('/A/new-a.txt', 'new on A', { mtime: T0 + MIN });
    w.b.writeFile('/B/new-b.txt', 'new on B', { mtime: T0 + MIN });
    w.a.writeFile('/A/f1.txt', 'v2 changed on A', { mtime: T0 + 2 * MIN });
    w.b.writeFile('/B/f2.txt', 'v2 changed on B', { mtime: T0 + 2 * MIN });
    w.a.remove('/A/f3.txt');
    w.b.remove('/B/f4.txt');
    const { plan, result } = await sync(w);
    expect(
      plan?.items
        .filter((i) => i.action !== 'skip')
        .map((i) => `${i.action} ${i.side} ${i.rel} ${i.reason}`)
        .sort(),
    ).toEqual([
      'copy source /new-b.txt new',
      'copy target /new-a.txt new',
      'delete source /f4.txt deleted_on_other_side',
      'delete target /f3.txt deleted_on_other_side',
      'update source /f2.txt changed',
      'update target /f1.txt changed',
    ]);
    expect(result.outcome).toBe('success');
    expectInSync(w);
    expect(contents(w.a, '/A')['/f2.txt']).toBe('v2 changed on B');
    expect(w.a.exists('/A/f4.txt')).toBe(false);
    // Deletions went to each side's trash.
    expect(w.b.trashed.map((t) => t.path)).toEqual(['/B/f3.txt']);
  });

  it('resolves files changed on both sides by each resolution', async () => {
    const cases: [ConflictResolution, string, string][] = [
      ['keep_both', 'B newer', 'A older, larger'],
      ['newer', 'B newer', ''],
      ['larger', 'A older, larger', ''],
      ['source', 'A older, larger', ''],
    ];
    for (const [resolution, winner, loserKept] of cases) {
      const w = world();
      w.a.writeFile('/A/x.txt', 'base', { mtime: T0 });
      await sync(w);
      w.a.writeFile('/A/x.txt', 'A older, larger', { mtime: T0 + MIN });
      w.b.writeFile('/B/x.txt', 'B newer', { mtime: T0 + 5 * MIN });
      const { plan, result } = await sync(w, { resolution });
      expect(plan?.items.find((i) => i.action === 'conflict')?.reason, resolution).toBe('both_changed');
      expect(result.outcome, resolution).toBe('success');
      expectInSync(w);
      expect(contents(w.a, '/A')['/x.txt'], resolution).toBe(winner);
      const others = Object.entries(contents(w.a, '/A')).filter(([k]) => k !== '/x.txt');
      if (loserKept) expect(others, resolution).toEqual([['/x (conflict 2026-11-22 from Drive).txt', loserKept]]);
      else expect(others, resolution).toEqual([]);
      expect(result.summary.conflicts).toBe(1);
    }
  });

  it('keeps a file changed on one side and deleted on the other', async () => {
    const w = world();
    w.a.writeFile('/A/keep.txt', 'v1', { mtime: T0 });
    w.a.writeFile('/A/keep2.txt', 'v1', { mtime: T0 });
    w.a.writeFile('/A/pad1.txt', 'p', { mtime: T0 });
    w.a.writeFile('/A/pad2.txt', 'p', { mtime: T0 });
    w.a.writeFile('/A/pad3.txt', 'p', { mtime: T0 });
    await sync(w);
    w.a.writeFile('/A/keep.txt', 'v2 on A', { mtime: T0 + MIN });
    w.b.remove('/B/keep.txt');
    w.b.writeFile('/B/keep2.txt', 'v2 on B', { mtime: T0 + MIN });
    w.a.remove('/A/keep2.txt');
    const { plan, result } = await sync(w);
    expect(
      plan?.items
        .filter((i) => i.action !== 'skip')
        .map((i) => `${i.action} ${i.side} ${i.rel} ${i.reason}`)
        .sort(),
    ).toEqual(['copy source /keep2.txt changed_vs_deleted', 'copy target /keep.txt changed_vs_deleted']);
    expect(result.outcome).toBe('success');
    expectInSync(w);
    expect(contents(w.b, '/B')['/keep.txt']).toBe('v2 on A');
  });

  it('adds and removes folders on either side', async () => {
    const w = world();
    w.a.writeFile('/A/old/a.txt', 'a', { mtime: T0 });
    w.a.writeFile('/A/old/deep/b.txt', 'b', { mtime: T0 });
    w.a.writeFile('/A/keep/c.txt', 'c', { mtime: T0 });
    w.a.writeFile('/A/keep/d.txt', 'd', { mtime: T0 });
    w.a.writeFile('/A/keep/e.txt', 'e', { mtime: T0 });
    w.a.writeFile('/A/mixed/f.txt', 'f', { mtime: T0 });
    w.a.writeFile('/A/mixed/g.txt', 'g', { mtime: T0 });
    w.a.mkdirp('/A/was-empty');
    await sync(w);
    expectInSync(w);
    // B removes /old entirely and /mixed, A changes a file in /mixed; A adds a folder, B adds an empty one.
    w.b.remove('/B/old');
    w.b.remove('/B/mixed');
    w.b.remove('/B/was-empty');
    w.a.writeFile('/A/mixed/f.txt', 'f changed on A', { mtime: T0 + MIN });
    w.a.writeFile('/A/fresh/sub/h.txt', 'h', { mtime: T0 });
    w.b.mkdirp('/B/new-empty');
    const { plan, result } = await sync(w, { confirmDeletes: true });
    expect(
      plan?.items
        .filter((i) => i.action !== 'skip')
        .map((i) => `${i.action} ${i.side} ${i.rel} ${i.reason}`)
        .sort(),
    ).toEqual([
      'copy target /fresh/sub/h.txt new',
      'copy target /mixed/f.txt changed_vs_deleted',
      'delete source /mixed/g.txt deleted_on_other_side',
      'delete source /old deleted_on_other_side',
      'delete source /old/a.txt deleted_on_other_side',
      'delete source /old/deep deleted_on_other_side',
      'delete source /old/deep/b.txt deleted_on_other_side',
      'delete source /was-empty deleted_on_other_side',
      'mkdir source /new-empty missing_folder',
      'mkdir target /fresh missing_folder',
      'mkdir target /fresh/sub missing_folder',
      'mkdir target /mixed missing_folder',
    ]);
    expect(plan?.items.find((i) => i.rel === '/old')).toMatchObject({ kind: 'dir' });
    expect(result.summary.deleted).toBe(3);
    expect(result.outcome).toBe('success');
    expectInSync(w);
    expect(w.a.folders('/A')).toEqual(['/fresh', '/fresh/sub', '/keep', '/mixed', '/new-empty']);
  });

  it('asks before deleting more than half of a side', async () => {
    const w = world();
    for (const n of ['1', '2', '3']) w.a.writeFile(`/A/${n}`, n, { mtime: T0 });
    await sync(w);
    w.a.remove('/A/1');
    w.a.remove('/A/2');
    const { result } = await sync(w);
    expect(result.outcome).toBe('needs_delete_confirmation');
    expect(w.b.exists('/B/1')).toBe(true);
    const ok = await sync(w, { confirmDeletes: true });
    expect(ok.result.outcome).toBe('success');
    expectInSync(w);
  });

  it('a failed run does not advance the state, and the next run finishes the job without false conflicts', async () => {
    const w = world();
    for (let i = 0; i < 12; i++) w.a.writeFile(`/A/f${i}.txt`, `v1 ${i}`, { mtime: T0 });
    await sync(w);
    const before = (w.state as MemoryTwoWayStateStore).records();
    for (let i = 0; i < 12; i++) {
      if (i % 2 === 0) w.a.writeFile(`/A/f${i}.txt`, `v2 A ${i}`, { mtime: T0 + MIN });
      else w.b.writeFile(`/B/f${i}.txt`, `v2 B ${i}`, { mtime: T0 + MIN });
    }
    w.a.writeFile('/A/new.txt', 'new', { mtime: T0 });
    // Half the writes to B fail permanently this time.
    let n = 0;
    w.target.faults.before = (op) =>
      op === 'put' && n++ % 2 === 0 ? new ProviderError('permission', 'denied') : undefined;
    const first = await sync(w);
    expect(first.result.outcome).toBe('partial');
    expect(first.result.twoWayStateCommitted).toBe(false);
    expect((w.state as MemoryTwoWayStateStore).records()).toEqual(before);

    w.target.faults.before = undefined;
    const second = await sync(w);
    expect(second.result.outcome).toBe('success');
    expect(second.plan?.summary.conflict.count).toBe(0);
    expectInSync(w);
    expect(contents(w.b, '/B')['/f0.txt']).toBe('v2 A 0');
    expect(contents(w.a, '/A')['/f1.txt']).toBe('v2 B 1');
  });

  it('an interrupted run (canceled midway) run again ends in sync, with the file state store', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'skyferry-2way-'));
    try {
      const w = world(new FileTwoWayStateStore(join(dir, 'state.jsonl')));
      for (let i = 0; i < 30; i++) w.a.writeFile(`/A/d${i % 3}/f${i}.txt`, `file ${i}`, { mtime: T0 });
      for (let i = 0; i < 10; i++) w.b.writeFile(`/B/b/g${i}.txt`, `b file ${i}`, { mtime: T0 });
      const ac = new AbortController();
      w.target.faults.before = (op) => {
        if (op === 'put' && w.target.writes.length >= 8) ac.abort();
        return undefined;
      };
      const first = await sync(w, { signal: ac.signal });
      expect(first.result.outcome).toBe('canceled');
      expect(await w.state.hasState()).toBe(false);
      w.target.faults.before = undefined;
      const second = await sync(w);
      expect(second.plan?.twoWay?.firstRun).toBe(true);
      expect(second.result.outcome).toBe('success');
      expect(second.plan?.summary.conflict.count).toBe(0);
      expectInSync(w);
      // The committed state survives a new store object (a new process).
      const reopened = { ...w, state: new FileTwoWayStateStore(join(dir, 'state.jsonl')) };
      w.b.remove('/B/d0/f0.txt');
      const third = await sync(reopened);
      expect(third.plan?.items.filter((i) => i.action === 'delete').map((i) => `${i.side} ${i.rel}`)).toEqual([
        'source /d0/f0.txt',
      ]);
      expect(third.result.outcome).toBe('success');
      expectInSync(w);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
