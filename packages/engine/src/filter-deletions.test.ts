import type { FileFilter } from '@skyferry/contract';
import { describe, expect, it } from 'vitest';
import { planTransfer } from './planner.ts';
import { runTransfer } from './run.ts';
import { MemoryTwoWayStateStore } from './stores.ts';
import { MemoryProvider, MemoryStore } from './testing/memory-provider.ts';
import type { TransferPlan } from './types.ts';

// Deletions of a mirror or a two-way sync never touch what the filter excludes: patterns, folder
// rules, sizes and ages, on either side.

const T0 = Date.UTC(2026, 0, 10);
const DAY = 86_400_000;
const NOW = new Date(T0 + 30 * DAY);
const rules = (f: Partial<FileFilter>): FileFilter => ({ mode: 'include', categories: [], ...f });

function store(files: Record<string, string | [string, number]>): MemoryStore {
  const s = new MemoryStore();
  for (const [path, v] of Object.entries(files)) {
    if (path.endsWith('/')) s.mkdirp(path);
    else if (typeof v === 'string') s.writeFile(path, v, { mtime: T0 });
    else s.writeFile(path, v[0], { mtime: v[1] });
  }
  return s;
}

/** A mirror of /s onto /t planned at NOW. */
function mirror(source: MemoryProvider, target: MemoryProvider, filter: FileFilter): Promise<TransferPlan> {
  return planTransfer({ source, target, mode: 'mirror', sourcePaths: ['/s'], targetPath: '/t', now: NOW, filter });
}

function deletes(plan: TransferPlan): string[] {
  return plan.items
    .filter((i) => i.action === 'delete')
    .map((i) => `${i.side} ${i.kind} ${i.targetRel ?? i.rel}`)
    .sort();
}

function writes(plan: TransferPlan): string[] {
  return plan.items
    .filter((i) => i.action === 'copy' || i.action === 'update')
    .map((i) => `${i.action} ${i.rel}`)
    .sort();
}

describe('mirror deletions and the filter', () => {
  it('deletes only extra files the rules let through; excluded files and folders stay', async () => {
    const source = new MemoryProvider({ store: store({ '/s/keep.txt': 'k' }) });
    const target = new MemoryProvider({
      store: store({
        '/t/keep.txt': 'k',
        '/t/extra.txt': 'e',
        '/t/debug.log': 'l',
        '/t/cache/blob.bin': 'c',
        '/t/cache/sub/more.txt': 'm',
        '/t/docs/a.txt': 'a',
        '/t/docs/b.log': 'b',
        '/t/gone/x.txt': 'x',
      }),
    });
    const plan = await mirror(source, target, rules({ rules: ['- *.log', '- /cache/'] }));
    expect(deletes(plan)).toEqual([
      'target dir /gone',
      'target file /docs/a.txt',
      'target file /extra.txt',
      'target file /gone/x.txt',
    ]);
  });

  it('a name excluded by size or age on either side is neither overwritten nor deleted', async () => {
    const source = new MemoryProvider({
      store: store({
        '/s/small.bin': 'x',
        '/s/grew.bin': 'x'.repeat(5000),
        '/s/old.txt': ['new content', T0 + 29 * DAY],
      }),
    });
    const target = new MemoryProvider({
      store: store({
        // On the target only small.bin is too big: the source's small copy must not replace it.
        '/t/small.bin': 'y'.repeat(5000),
        // Too big on the source (left out there): the target's small copy must not go as extra.
        '/t/grew.bin': 'y',
        // Older than --max-age on the target: left alone though the source's copy is recent.
        '/t/old.txt': ['ancient', T0 - 400 * DAY],
        '/t/stale.txt': ['extra and old', T0 - 400 * DAY],
        '/t/fresh.txt': ['extra and recent', T0 + 29 * DAY],
      }),
    });
    const plan = await mirror(source, target, rules({ max_size: '4k', max_age: '1y' }));
    expect(deletes(plan)).toEqual(['target file /fresh.txt']);
    expect(writes(plan)).toEqual([]);
  });

  it('a folder the filter leaves out is never walked, so nothing in it is deleted', async () => {
    const source = new MemoryProvider({ store: store({ '/s/a.txt': 'a' }) });
    const target = new MemoryProvider({
      store: store({ '/t/a.txt': 'a', '/t/private/deep/secret.txt': 's', '/t/photos/p.jpg': 'p' }),
    });
    // rclone's order puts --include before --exclude: "+ *.txt" (which lets the walk into every
    // folder) comes first, so private/deep/secret.txt is in scope; photos/p.jpg is out ("- **").
    const plan = await mirror(source, target, rules({ include: ['*.txt'], exclude: ['private/'] }));
    expect(deletes(plan)).toEqual([
      'target dir /private',
      'target dir /private/deep',
      'target file /private/deep/secret.txt',
    ]);

    const only = await mirror(source, target, rules({ rules: ['- private/', '+ *.txt', '- **'] }));
    expect(deletes(only)).toEqual([]);
  });
});

describe('two-way deletions and the filter', () => {
  it('a deletion on one side never reaches files the filter excludes on the other', async () => {
    const a = store({ '/A/': '' });
    const b = store({ '/B/': '' });
    const source = new MemoryProvider({ store: a });
    const target = new MemoryProvider({ store: b });
    const state = new MemoryTwoWayStateStore();
    const sync = (filter: FileFilter | null) =>
      runTransfer({
        source,
        target,
        mode: 'two_way',
        sourcePaths: ['/A'],
        targetPath: '/B',
        twoWayState: state,
        filter,
        confirmDeletes: true,
        now: NOW,
        retries: { retries: 1, minSleepMs: 1, maxSleepMs: 2 },
      });
    a.writeFile('/A/stay.txt', 's', { mtime: T0 });
    a.writeFile('/A/notes.txt', 'n', { mtime: T0 });
    a.writeFile('/A/build.tmp', 't', { mtime: T0 });
    a.writeFile('/A/d/x.txt', 'x', { mtime: T0 });
    a.writeFile('/A/d/y.tmp', 'y', { mtime: T0 });
    a.writeFile('/A/big.bin', 'z'.repeat(10), { mtime: T0 });
    a.writeFile('/A/keep/k.txt', 'k', { mtime: T0 });
    // The first run (no filter) puts everything on both sides and in the state.
    expect((await sync(null)).result.outcome).toBe('success');
    expect([...b.files('/B').keys()].sort()).toEqual([
      '/big.bin',
      '/build.tmp',
      '/d/x.txt',
      '/d/y.tmp',
      '/keep/k.txt',
      '/notes.txt',
      '/stay.txt',
    ]);
    // Everything is deleted on A; B's big.bin grew past the size limit meanwhile.
    for (const f of ['/A/notes.txt', '/A/build.tmp', '/A/d/x.txt', '/A/d/y.tmp', '/A/big.bin', '/A/keep/k.txt'])
      a.remove(f);
    a.remove('/A/d');
    a.remove('/A/keep');
    b.writeFile('/B/big.bin', 'z'.repeat(5000), { mtime: T0 + DAY });
    const { plan, result } = await sync(rules({ rules: ['- *.tmp', '- /keep/'], max_size: '1k' }));
    expect(result.outcome).toBe('success');
    expect(deletes(plan!)).toEqual(['target file /d/x.txt', 'target file /notes.txt']);
    expect([...b.files('/B').keys()].sort()).toEqual([
      '/big.bin',
      '/build.tmp',
      '/d/y.tmp',
      '/keep/k.txt',
      '/stay.txt',
    ]);
  });
});
