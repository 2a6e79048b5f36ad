import { describe, expect, it } from 'vitest';
import { ProviderError } from '@skyferry/providers';
import { MemoryProvider, MemoryStore } from './testing/memory-provider.ts';
import { planTransfer, conflictName } from './planner.ts';
import { MemoryTwoWayStateStore } from './stores.ts';
import { planPage } from './tools.ts';
import type { PlanItem, TransferPlan } from './types.ts';

const T0 = Date.UTC(2026, 0, 1);
const HOUR = 3600_000;

function cloud(
  files: Record<string, string | [string, number]>,
  opts: { caseInsensitive?: boolean } = {},
): MemoryProvider {
  const store = new MemoryStore(opts);
  for (const [path, v] of Object.entries(files)) {
    if (path.endsWith('/')) store.mkdirp(path);
    else if (typeof v === 'string') store.writeFile(path, v, { mtime: T0 });
    else store.writeFile(path, v[0], { mtime: v[1] });
  }
  return new MemoryProvider({ store });
}

/** "action side rel reason" lines, sorted: easy to compare whole plans. */
function lines(plan: TransferPlan, opts: { skips?: boolean } = {}): string[] {
  return plan.items
    .filter((i) => opts.skips !== false || i.action !== 'skip')
    .map(
      (i: PlanItem) => `${i.action} ${i.side} ${plan.pairs[i.pair]?.target}${i.rel === '/' ? '' : i.rel} ${i.reason}`,
    )
    .sort();
}

/**
 * Makes each provider's `stat` or `list` (or both) take `delayMs` (a round trip) and counts the
 * calls under way: `meter.most` is the most at once since it was last set to 0; `meter.calls` names
 * each call ("side path", with the method first when both are metered), `meter.beforeFirstAnswer`
 * how many were sent before the first answer came; `meter.reset()` starts counting again.
 */
function meterCalls(
  providers: { source: MemoryProvider; target: MemoryProvider },
  method: 'stat' | 'list' | 'both',
  delayMs: number,
): { most: number; calls: string[]; beforeFirstAnswer: number; reset: () => void } {
  let inFlight = 0;
  let answered = false;
  const meter = {
    most: 0,
    calls: [] as string[],
    beforeFirstAnswer: 0,
    reset: () => {
      Object.assign(meter, { most: 0, calls: [], beforeFirstAnswer: 0 });
      answered = false;
    },
  };
  for (const [side, p] of Object.entries(providers)) {
    for (const m of method === 'both' ? (['stat', 'list'] as const) : [method]) {
      const call = p[m].bind(p) as (path: string, opts?: object) => Promise<unknown>;
      (p as unknown as Record<string, unknown>)[m] = async (path: string, opts?: object) => {
        meter.calls.push(method === 'both' ? `${m} ${side} ${path}` : `${side} ${path}`);
        if (!answered) meter.beforeFirstAnswer++;
        meter.most = Math.max(meter.most, ++inFlight);
        try {
          await new Promise((r) => setTimeout(r, delayMs));
          return await call(path, opts);
        } finally {
          answered = true;
          inFlight--;
        }
      };
    }
  }
  return meter;
}

describe('planner: migrate', () => {
  it('copies each selected folder under its own name and root contents as they are', async () => {
    const source = cloud({ '/Photos/a.jpg': 'a', '/Photos/2024/b.jpg': 'bb', '/Docs/c.txt': 'c', '/top.txt': 't' });
    const target = cloud({ '/Backup/': '' });
    const plan = await planTransfer({
      source,
      target,
      mode: 'migrate',
      sourcePaths: ['/Photos', '/top.txt'],
      targetPath: '/Backup',
    });
    expect(lines(plan)).toEqual([
      'copy target /Backup/Photos/2024/b.jpg new',
      'copy target /Backup/Photos/a.jpg new',
      'copy target /Backup/top.txt new',
      'mkdir target /Backup/Photos missing_folder',
      'mkdir target /Backup/Photos/2024 missing_folder',
    ]);
    expect(plan.summary.copy).toEqual({ count: 3, bytes: 4 });
    const root = await planTransfer({ source, target, mode: 'migrate', sourcePaths: ['/'], targetPath: '/Backup' });
    expect(lines(root).filter((l) => l.startsWith('copy'))).toEqual([
      'copy target /Backup/Docs/c.txt new',
      'copy target /Backup/Photos/2024/b.jpg new',
      'copy target /Backup/Photos/a.jpg new',
      'copy target /Backup/top.txt new',
    ]);
  });

  it('applies each same-name policy', async () => {
    const source = cloud({
      '/s/same.txt': ['1234', T0],
      '/s/bigger.txt': ['123456', T0],
      '/s/newer.txt': ['abcd', T0 + HOUR],
      '/s/older.txt': ['abcd', T0 - HOUR],
    });
    const target = cloud({
      '/t/same.txt': ['abcd', T0],
      '/t/bigger.txt': ['1234', T0],
      '/t/newer.txt': ['1234', T0],
      '/t/older.txt': ['1234', T0],
    });
    const byPolicy = async (sameNamePolicy: 'overwrite' | 'skip' | 'size_differs' | 'size_differs_or_newer') => {
      const plan = await planTransfer({
        source,
        target,
        mode: 'one_way',
        sourcePaths: ['/s'],
        targetPath: '/t',
        sameNamePolicy,
      });
      return lines(plan);
    };
    expect(await byPolicy('overwrite')).toEqual([
      'update target /t/bigger.txt overwrite',
      'update target /t/newer.txt overwrite',
      'update target /t/older.txt overwrite',
      'update target /t/same.txt overwrite',
    ]);
    expect(await byPolicy('skip')).toEqual([
      'skip target /t/bigger.txt exists',
      'skip target /t/newer.txt exists',
      'skip target /t/older.txt exists',
      'skip target /t/same.txt exists',
    ]);
    expect(await byPolicy('size_differs')).toEqual([
      'skip target /t/newer.txt same_size',
      'skip target /t/older.txt same_size',
      'skip target /t/same.txt same_size',
      'update target /t/bigger.txt size_differs',
    ]);
    expect(await byPolicy('size_differs_or_newer')).toEqual([
      'skip target /t/older.txt not_newer',
      'skip target /t/same.txt not_newer',
      'update target /t/bigger.txt size_differs',
      'update target /t/newer.txt newer',
    ]);
  });

  it('incremental copies only new files and newer same-name files', async () => {
    const source = cloud({
      '/s/new.txt': 'n',
      '/s/newer.txt': ['xx', T0 + HOUR],
      '/s/bigger-but-older.txt': ['xxxxxx', T0 - HOUR],
    });
    const target = cloud({ '/t/newer.txt': ['y', T0], '/t/bigger-but-older.txt': ['y', T0], '/t/extra.txt': 'e' });
    const plan = await planTransfer({
      source,
      target,
      mode: 'incremental',
      sourcePaths: ['/s'],
      targetPath: '/t',
      sameNamePolicy: 'overwrite',
    });
    expect(lines(plan)).toEqual([
      'copy target /t/new.txt new',
      'skip target /t/bigger-but-older.txt not_newer',
      'update target /t/newer.txt newer',
    ]);
  });

  it('mirror updates what differs and deletes extras: the files listed, then their folders if emptied', async () => {
    const source = cloud({ '/s/keep.txt': 'k', '/s/changed.txt': 'new content', '/s/sub/x.txt': 'x' });
    const target = cloud({
      '/t/keep.txt': 'k',
      '/t/changed.txt': 'old',
      '/t/extra.txt': 'e',
      '/t/gone/a.txt': 'a',
      '/t/gone/deep/b.txt': 'b',
      '/t/sub/x.txt': 'x',
      '/t/sub/y.txt': 'y',
    });
    const plan = await planTransfer({
      source,
      target,
      mode: 'mirror',
      sourcePaths: ['/s'],
      targetPath: '/t',
      sameNamePolicy: 'skip',
    });
    expect(lines(plan, { skips: false })).toEqual([
      'delete target /t/extra.txt extra_on_target',
      'delete target /t/gone extra_on_target',
      'delete target /t/gone/a.txt extra_on_target',
      'delete target /t/gone/deep extra_on_target',
      'delete target /t/gone/deep/b.txt extra_on_target',
      'delete target /t/sub/y.txt extra_on_target',
      'update target /t/changed.txt differs',
    ]);
    const gone = plan.items.find((i) => i.rel === '/gone');
    expect(gone).toMatchObject({ kind: 'dir', size: 0 });
    expect(gone?.files).toBeUndefined();
    expect(plan.deletes).toMatchObject({ count: 6, files: 4 });
    // 4 of 7 target files would go: more than half, so the run needs confirmation.
    expect(plan.filesSeen.target).toBe(7);
    expect(plan.deletes.needsConfirmation).toBe(true);
  });

  it('a plan for its figures only (countOnly) holds no items and counts as the whole plan does', async () => {
    const source = cloud({ '/s/new.txt': 'n', '/s/changed.txt': 'new content', '/s/same.txt': 's', '/s/d/x': 'xx' });
    const target = cloud({
      '/t/changed.txt': 'old',
      '/t/same.txt': 's',
      '/t/extra.txt': 'e',
      '/t/x2': 'e',
      '/t/gone/a': 'a',
    });
    for (const mode of ['mirror', 'one_way', 'migrate'] as const) {
      const req = { source, target, mode, sourcePaths: ['/s'], targetPath: '/t', sameNamePolicy: 'skip' as const };
      const whole = await planTransfer(req);
      const counted = await planTransfer({ ...req, countOnly: true });
      expect(whole.items.length).toBeGreaterThan(0);
      expect(counted.items).toEqual([]);
      for (const k of ['summary', 'bytesTo', 'filesToTransfer', 'filesSeen', 'deletes'] as const)
        expect(counted[k], `${mode} ${k}`).toEqual(whole[k]);
    }
    const mirror = await planTransfer({
      source,
      target,
      mode: 'mirror',
      sourcePaths: ['/s'],
      targetPath: '/t',
      countOnly: true,
    });
    expect(mirror.deletes).toMatchObject({ files: 3, needsConfirmation: true });
    expect(mirror.bytesTo.target).toBe('n'.length + 'new content'.length + 'xx'.length);
  });

  it('mirror under half of the target needs no confirmation', async () => {
    const source = cloud({ '/s/a': '1', '/s/b': '2', '/s/c': '3' });
    const target = cloud({ '/t/a': '1', '/t/b': '2', '/t/c': '3', '/t/d': '4' });
    const plan = await planTransfer({ source, target, mode: 'mirror', sourcePaths: ['/s'], targetPath: '/t' });
    expect(plan.deletes).toMatchObject({ count: 1, files: 1, needsConfirmation: false });
  });

  it('filters by category on both sides; mirror leaves files the filter hides', async () => {
    const source = cloud({ '/s/a.jpg': 'a', '/s/b.txt': 'b', '/s/c.mp4': 'c' });
    const target = cloud({ '/t/old.jpg': 'o', '/t/notes.txt': 'n', '/t/dir/x.jpg': 'x', '/t/dir/y.pdf': 'y' });
    const plan = await planTransfer({
      source,
      target,
      mode: 'mirror',
      sourcePaths: ['/s'],
      targetPath: '/t',
      filter: { mode: 'include', categories: ['picture'] },
    });
    expect(lines(plan)).toEqual([
      'copy target /t/a.jpg new',
      'delete target /t/dir/x.jpg extra_on_target',
      'delete target /t/old.jpg extra_on_target',
    ]);
    const excl = await planTransfer({
      source,
      target: cloud({}),
      mode: 'migrate',
      sourcePaths: ['/s'],
      targetPath: '/t',
      filter: { mode: 'exclude', categories: ['picture', 'video'] },
    });
    expect(lines(excl)).toEqual(['copy target /t/s/b.txt new', 'mkdir target /t/s missing_folder']);
  });

  it('creates empty source folders but not folders emptied by the filter', async () => {
    const source = cloud({ '/s/empty/': '', '/s/docs/a.txt': 'a' });
    const target = cloud({ '/t/': '' });
    const all = await planTransfer({ source, target, mode: 'one_way', sourcePaths: ['/s'], targetPath: '/t' });
    expect(lines(all)).toEqual([
      'copy target /t/docs/a.txt new',
      'mkdir target /t/docs missing_folder',
      'mkdir target /t/empty missing_folder',
    ]);
    const pics = await planTransfer({
      source,
      target,
      mode: 'one_way',
      sourcePaths: ['/s'],
      targetPath: '/t',
      filter: { mode: 'include', categories: ['picture'] },
    });
    expect(lines(pics)).toEqual([]);
  });

  it('pages through big folders and matches names case-insensitively when a side ignores case', async () => {
    const store = new MemoryStore();
    for (let i = 0; i < 2500; i++) store.writeFile(`/s/f${String(i).padStart(5, '0')}.txt`, 'x', { mtime: T0 });
    const source = new MemoryProvider({ store, pageSize: 100 });
    const tstore = new MemoryStore({ caseInsensitive: true });
    tstore.writeFile('/t/F00001.TXT', 'x', { mtime: T0 });
    const target = new MemoryProvider({ store: tstore, pageSize: 100 });
    const plan = await planTransfer({ source, target, mode: 'one_way', sourcePaths: ['/s'], targetPath: '/t' });
    expect(plan.summary.copy.count).toBe(2499);
    expect(plan.summary.skip.count).toBe(1);
    expect(source.opCount('list')).toBe(25);
    // Each side keeps its spelling: the item names the source's, and the target's where it differs.
    const skip = plan.items.find((i) => i.action === 'skip');
    expect(skip?.rel).toBe('/f00001.txt');
    expect(skip?.targetRel).toBe('/F00001.TXT');
  });

  it('records folders it cannot list and leaves them alone (no deletes under them)', async () => {
    const source = cloud({ '/s/ok/a': 'a', '/s/bad/b': 'b' });
    const target = cloud({ '/t/bad/zzz': 'z', '/t/ok/x': 'x' });
    source.faults.before = (op, path) =>
      op === 'list' && path === '/s/bad' ? new ProviderError('permission', 'denied') : undefined;
    const plan = await planTransfer({
      source,
      target,
      mode: 'mirror',
      sourcePaths: ['/s'],
      targetPath: '/t',
      keepSkipped: false,
    });
    expect(plan.errors).toEqual([{ side: 'source', path: '/s/bad', code: 'permission', message: 'denied' }]);
    expect(lines(plan)).toEqual(['copy target /t/ok/a new', 'delete target /t/ok/x extra_on_target']);
  });

  it('throws when the run cannot start', async () => {
    const source = cloud({ '/s/a': 'a' });
    await expect(
      planTransfer({ source, target: cloud({}), mode: 'one_way', sourcePaths: ['/nope'], targetPath: '/t' }),
    ).rejects.toMatchObject({ code: 'not_found' });
    await expect(
      planTransfer({ source, target: cloud({}), mode: 'one_way', sourcePaths: ['/s/a'], targetPath: '/t' }),
    ).rejects.toMatchObject({ code: 'not_dir' });
    const ac = new AbortController();
    ac.abort();
    await expect(
      planTransfer({
        source,
        target: cloud({}),
        mode: 'one_way',
        sourcePaths: ['/s'],
        targetPath: '/t',
        signal: ac.signal,
      }),
    ).rejects.toMatchObject({ code: 'canceled' });
  });

  it('looks at the target folder and the selected sources at once, not one after another', async () => {
    const source = cloud({ '/Photos/a.jpg': 'a', '/Docs/c.txt': 'c', '/top.txt': 't' });
    const target = cloud({ '/Backup/': '' });
    // Each look a round trip: they overlap only if they are sent together.
    const meter = meterCalls({ source, target }, 'stat', 5);
    const plan = await planTransfer({
      source,
      target,
      mode: 'migrate',
      sourcePaths: ['/Photos', '/Docs', '/top.txt'],
      targetPath: '/Backup',
    });
    expect(lines(plan).filter((l) => l.startsWith('copy'))).toEqual([
      'copy target /Backup/Docs/c.txt new',
      'copy target /Backup/Photos/a.jpg new',
      'copy target /Backup/top.txt new',
    ]);
    // The target folder and the three sources: four looks under way together.
    expect(meter.calls.slice(0, 4).sort()).toEqual([
      'source /Docs',
      'source /Photos',
      'source /top.txt',
      'target /Backup',
    ]);
    expect(meter.most).toBe(4);

    // A sync: its one source and the target folder together; a file as the target still refused.
    meter.most = 0;
    await planTransfer({ source, target, mode: 'one_way', sourcePaths: ['/Photos'], targetPath: '/Backup' });
    expect(meter.most).toBe(2);
    await expect(
      planTransfer({
        source,
        target: cloud({ '/f': 'x' }),
        mode: 'one_way',
        sourcePaths: ['/Photos'],
        targetPath: '/f',
      }),
    ).rejects.toMatchObject({ code: 'not_dir' });
  });

  it('with one source, lists the folders the walk starts with beside the first looks', async () => {
    const source = cloud({ '/Photos/a.jpg': 'a', '/Photos/2024/b.jpg': 'bb', '/top.txt': 't' });
    const target = cloud({ '/Backup/Photos/a.jpg': 'a' });
    const meter = meterCalls({ source, target }, 'both', 5);
    const plan = await planTransfer({
      source,
      target,
      mode: 'migrate',
      sourcePaths: ['/Photos'],
      targetPath: '/Backup',
      sameNamePolicy: 'skip',
    });
    expect(lines(plan)).toEqual([
      'copy target /Backup/Photos/2024/b.jpg new',
      'mkdir target /Backup/Photos/2024 missing_folder',
      'skip target /Backup/Photos/a.jpg exists',
    ]);
    expect(plan.errors).toEqual([]);
    // One round trip: the three looks and both listings of the migrated folder sent together...
    expect(meter.calls.slice(0, meter.beforeFirstAnswer).sort()).toEqual([
      'list source /Photos',
      'list target /Backup/Photos',
      'stat source /Photos',
      'stat target /Backup',
      'stat target /Backup/Photos',
    ]);
    // ...and each listing taken by the walk, not asked for again.
    expect(meter.calls.filter((c) => c.startsWith('list')).sort()).toEqual([
      'list source /Photos',
      'list source /Photos/2024',
      'list target /Backup/Photos',
    ]);

    // A sync: its source and target folders listed beside their looks.
    meter.reset();
    await planTransfer({ source, target, mode: 'one_way', sourcePaths: ['/Photos'], targetPath: '/Backup/Photos' });
    expect(meter.calls.slice(0, meter.beforeFirstAnswer).sort()).toEqual([
      'list source /Photos',
      'list target /Backup/Photos',
      'stat source /Photos',
      'stat target /Backup/Photos',
    ]);

    // A file as the one source, or a target that is not there yet: the listings that were not
    // needed change nothing in the plan and record no error.
    const file = await planTransfer({
      source,
      target,
      mode: 'migrate',
      sourcePaths: ['/top.txt'],
      targetPath: '/Backup',
    });
    expect(lines(file)).toEqual(['copy target /Backup/top.txt new']);
    expect(file.errors).toEqual([]);
    const fresh = await planTransfer({ source, target, mode: 'migrate', sourcePaths: ['/Photos'], targetPath: '/New' });
    expect(lines(fresh)).toEqual([
      'copy target /New/Photos/2024/b.jpg new',
      'copy target /New/Photos/a.jpg new',
      'mkdir target /New/Photos missing_folder',
      'mkdir target /New/Photos/2024 missing_folder',
    ]);
    expect(fresh.errors).toEqual([]);
  });

  it('reports scan progress and pages items', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 30; i++) files[`/s/d${i % 3}/f${i}.txt`] = 'abc';
    const source = cloud(files);
    const scans: number[] = [];
    const plan = await planTransfer({
      source,
      target: cloud({}),
      mode: 'migrate',
      sourcePaths: ['/s'],
      targetPath: '/t',
      onScan: (p) => scans.push(p.files),
    });
    expect(scans.at(-1)).toBe(30);
    const page = planPage(plan, { actions: ['copy'], offset: 10, limit: 5 });
    expect(page.total).toBe(30);
    expect(page.items).toHaveLength(5);
    expect(planPage(plan, { actions: ['mkdir'] }).total).toBe(4); // /t/s and its 3 subfolders
    expect(JSON.parse(JSON.stringify(plan))).toEqual(plan);
  });

  it('lists at most listConcurrency folders at once, and plans deep trees with one at a time', async () => {
    // 3 levels of 6 folders (258 folders, 2 files each): wide enough that every subfolder walk is
    // started long before it can list; 30 nested folders: a walk that kept its slot while waiting
    // for its subfolders would never finish with one slot.
    const files: Record<string, string> = {};
    for (let a = 0; a < 6; a++)
      for (let b = 0; b < 6; b++)
        for (let c = 0; c < 6; c++) {
          files[`/s/w/${a}/${b}/${c}/x.txt`] = 'x';
          files[`/s/w/${a}/${b}/${c}/y.txt`] = 'yy';
        }
    files[`/s/deep/${Array.from({ length: 30 }, (_, i) => `d${i}`).join('/')}/z.txt`] = 'zzz';
    const source = cloud(files);
    const target = cloud({ '/t/w/0/0/0/x.txt': 'x', '/t/deep/d0/old.txt': 'o' });
    const meter = meterCalls({ source, target }, 'list', 1);
    for (const mode of ['mirror', 'two_way'] as const) {
      meter.most = 0;
      const plan = await planTransfer({
        source,
        target,
        mode,
        sourcePaths: ['/s'],
        targetPath: '/t',
        listConcurrency: 3,
        twoWayState: new MemoryTwoWayStateStore(),
      });
      expect(meter.most).toBeLessThanOrEqual(3);
      expect(meter.most).toBeGreaterThan(1);
      expect(plan.errors).toEqual([]);
      // Every source file but the one already there, the deep one, and (two-way) old.txt the other way.
      expect(plan.summary.copy.count).toBe(6 * 6 * 6 * 2 - 1 + 1 + (mode === 'two_way' ? 1 : 0));
      if (mode === 'mirror') expect(lines(plan)).toContain('delete target /t/deep/d0/old.txt extra_on_target');
      else expect(lines(plan)).toContain('copy source /t/deep/d0/old.txt new');
    }
    meter.most = 0;
    const one = await planTransfer({
      source,
      target,
      mode: 'mirror',
      sourcePaths: ['/s/deep'],
      targetPath: '/t/deep',
      listConcurrency: 1,
    });
    expect(meter.most).toBe(1);
    expect(lines(one)).toContain(
      `copy target /t/deep/${Array.from({ length: 30 }, (_, i) => `d${i}`).join('/')}/z.txt new`,
    );
  });

  it('names conflict copies clearly and uniquely', () => {
    const now = new Date(Date.UTC(2026, 10, 22, 10, 30));
    expect(conflictName('report.docx', now, 'Dropbox', () => false)).toBe(
      'report (conflict 2026-11-22 from Dropbox).docx',
    );
    const taken = new Set(['notes (conflict 2026-11-22 from target)']);
    expect(conflictName('notes', now, 'target', (c) => taken.has(c))).toBe('notes (conflict 2026-11-22 from target 2)');
  });
});
