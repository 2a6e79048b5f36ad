import { describe, expect, it } from 'vitest';
import { checkTrees, type CheckRequest } from './check.ts';
import { MemoryProvider, MemoryStore } from './testing/memory-provider.ts';

// The check on in-memory services: which pairs it finds, how it compares them (listed hashes,
// reading when asked) and what it leaves out; check.int.test.ts runs it on real servers against rclone.

function sides(
  opts: { sourceHashes?: ('md5' | 'sha1')[]; targetHashes?: ('md5' | 'sha1')[]; caseInsensitive?: boolean } = {},
) {
  const s = new MemoryStore();
  const t = new MemoryStore({ caseInsensitive: opts.caseInsensitive ?? false });
  const source = new MemoryProvider({ store: s, hashes: opts.sourceHashes ?? ['md5'] });
  const target = new MemoryProvider({ store: t, hashes: opts.targetHashes ?? ['md5'] });
  return { s, t, source, target };
}

const kinds = (r: Awaited<ReturnType<typeof checkTrees>>) => r.differences.map((d) => `${d.kind} ${d.path}`);

describe('checkTrees', () => {
  it('finds files missing on either side, sizes and contents that differ, and counts the equal ones', async () => {
    const { s, t, source, target } = sides();
    for (const [p, data] of [
      ['/a/same.txt', 'same bytes'],
      ['/a/b/deep.jpg', 'deep'],
      ['/sized.txt', 'short'],
      ['/content.txt', 'aaaa'],
      ['/only-source.txt', 'x'],
    ] as const)
      s.writeFile(`/src${p}`, data);
    for (const [p, data] of [
      ['/a/same.txt', 'same bytes'],
      ['/a/b/deep.jpg', 'deep'],
      ['/sized.txt', 'longer one'],
      ['/content.txt', 'aaab'],
      ['/extra/only-target.txt', 'y'],
    ] as const)
      t.writeFile(`/dst${p}`, data);
    const req: CheckRequest = { source, sourcePath: '/src', target, targetPath: '/dst' };
    const r = await checkTrees(req);
    expect(kinds(r)).toEqual([
      'content /content.txt',
      'missing_on_source /extra/only-target.txt',
      'missing_on_target /only-source.txt',
      'size /sized.txt',
    ]);
    expect(r.differences.find((d) => d.kind === 'size')).toMatchObject({ sourceSize: 5, targetSize: 10 });
    expect(r.differences.find((d) => d.kind === 'content')).toMatchObject({ hash: 'md5' });
    expect(r).toMatchObject({ compared: 4, sameByHash: 2, sameByContent: 0, sizeOnly: 0, errors: [] });

    // One way: extras on the target are no difference.
    const oneWay = await checkTrees({ ...req, oneWay: true });
    expect(kinds(oneWay)).not.toContain('missing_on_source /extra/only-target.txt');
    expect(oneWay.differences).toHaveLength(3);
    // Nothing was written on either side.
    expect(source.writes).toEqual([]);
    expect(target.writes).toEqual([]);
  });

  it('without a shared hash, equal sizes count as unchecked, and reading (download) finds the different content', async () => {
    const { s, t, source, target } = sides({ targetHashes: [] });
    s.writeFile('/src/same.bin', 'identical');
    s.writeFile('/src/changed.bin', 'version 1');
    t.writeFile('/dst/same.bin', 'identical');
    t.writeFile('/dst/changed.bin', 'version 2');
    const req: CheckRequest = { source, sourcePath: '/src', target, targetPath: '/dst' };
    const bySize = await checkTrees(req);
    expect(bySize.differences).toEqual([]);
    expect(bySize).toMatchObject({ compared: 2, sameByHash: 0, sizeOnly: 2 });
    expect(target.opCount('openRead')).toBe(0);

    const read = await checkTrees({ ...req, download: true });
    expect(kinds(read)).toEqual(['content /changed.bin']);
    expect(read).toMatchObject({ compared: 2, sameByContent: 1, sizeOnly: 0 });
    // The source lists an MD5: only the target's files were read.
    expect(source.opCount('openRead')).toBe(0);
    expect(target.opCount('openRead')).toBe(2);
  });

  it('reads both sides when neither gives a hash', async () => {
    const { s, t, source, target } = sides({ sourceHashes: [], targetHashes: [] });
    s.writeFile('/src/x', 'abc');
    s.writeFile('/src/y', 'abc');
    t.writeFile('/dst/x', 'abc');
    t.writeFile('/dst/y', 'abd');
    const r = await checkTrees({ source, sourcePath: '/src', target, targetPath: '/dst', download: true });
    expect(kinds(r)).toEqual(['content /y']);
    expect(r.differences[0]?.hash).toBeUndefined();
    expect(source.opCount('openRead')).toBe(2);
    expect(target.opCount('openRead')).toBe(2);
  });

  it('compares only the file types of the filter, on both sides', async () => {
    const { s, t, source, target } = sides();
    s.writeFile('/src/photo.jpg', 'p');
    s.writeFile('/src/notes.txt', 'n');
    t.writeFile('/dst/photo.jpg', 'p');
    t.writeFile('/dst/song.mp3', 'm');
    const r = await checkTrees({
      source,
      sourcePath: '/src',
      target,
      targetPath: '/dst',
      filter: { mode: 'include', categories: ['picture'] },
    });
    expect(r.differences).toEqual([]);
    expect(r).toMatchObject({ compared: 1, sameByHash: 1 });
  });

  it('a folder that cannot be listed is an error, and the files below it are not called missing', async () => {
    const s = new MemoryStore();
    const t = new MemoryStore();
    const source = new MemoryProvider({ store: s });
    const target = new MemoryProvider({ store: t, forbidden: ['/dst/locked'], features: { listRecursive: false } });
    s.writeFile('/src/locked/a.txt', 'a');
    s.writeFile('/src/open/b.txt', 'b');
    t.writeFile('/dst/locked/a.txt', 'a');
    t.writeFile('/dst/open/b.txt', 'b');
    const r = await checkTrees({ source, sourcePath: '/src', target, targetPath: '/dst' });
    expect(r.differences).toEqual([]);
    expect(r.errors).toEqual([expect.objectContaining({ side: 'target', path: '/locked', code: 'permission' })]);
    expect(r.compared).toBe(1);
  });

  it('pairs names that differ only in case when a side ignores case', async () => {
    const { s, t, source, target } = sides({ caseInsensitive: true });
    s.writeFile('/src/Report.PDF', 'r');
    t.writeFile('/dst/report.pdf', 'r');
    const r = await checkTrees({ source, sourcePath: '/src', target, targetPath: '/dst' });
    expect(r.differences).toEqual([]);
    expect(r.sameByHash).toBe(1);
  });

  it('a missing target folder has every source file missing; a missing source folder is an error', async () => {
    const { s, source, target } = sides();
    s.writeFile('/src/a', '1');
    s.writeFile('/src/b/c', '2');
    const r = await checkTrees({ source, sourcePath: '/src', target, targetPath: '/nowhere' });
    expect(kinds(r)).toEqual(['missing_on_target /a', 'missing_on_target /b/c']);
    await expect(checkTrees({ source, sourcePath: '/nowhere', target, targetPath: '/src' })).rejects.toMatchObject({
      code: 'not_found',
    });
  });

  it('checks two files against each other', async () => {
    const { s, t, source, target } = sides();
    s.writeFile('/one.txt', 'same');
    t.writeFile('/two.txt', 'same');
    t.writeFile('/three.txt', 'diff');
    const same = await checkTrees({ source, sourcePath: '/one.txt', target, targetPath: '/two.txt' });
    expect(same).toMatchObject({ compared: 1, sameByHash: 1, differences: [] });
    const differ = await checkTrees({ source, sourcePath: '/one.txt', target, targetPath: '/three.txt' });
    expect(kinds(differ)).toEqual(['content /']);
    // A file against a folder: against the file of the same name in it.
    t.writeFile('/folder/one.txt', 'same');
    t.writeFile('/folder/other.txt', 'other');
    const inFolder = await checkTrees({ source, sourcePath: '/one.txt', target, targetPath: '/folder' });
    expect(inFolder).toMatchObject({ compared: 1, sameByHash: 1, differences: [] });
    const notThere = await checkTrees({ source, sourcePath: '/one.txt', target, targetPath: '/' });
    expect(kinds(notThere)).toContain('missing_on_target /one.txt');
  });

  it('walks both trees folder by folder beside the comparisons: the listing never runs far ahead of them', async () => {
    // Neither side lists a hash, so each pair is read (download); the target's reads wait at a gate.
    const { s, t, source, target } = sides({ sourceHashes: [], targetHashes: [], caseInsensitive: false });
    for (let i = 0; i < 40; i++) {
      s.writeFile(`/src/d${i}/f.txt`, `file ${i}`);
      t.writeFile(`/dst/d${i}/f.txt`, `file ${i}`);
    }
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const gated = new Proxy(target, {
      get(obj, prop, receiver) {
        const value = Reflect.get(obj, prop, receiver) as unknown;
        if (prop !== 'openRead' || typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          await gate;
          return (value as (...a: unknown[]) => unknown).apply(obj, args);
        };
      },
    });
    const seen: { listed: number; pairs: number; compared: number }[] = [];
    const running = checkTrees({
      source,
      sourcePath: '/src',
      target: gated,
      targetPath: '/dst',
      download: true,
      checkers: 2,
      onProgress: (p) => seen.push(p),
    });
    await new Promise((r) => setTimeout(r, 50));
    // Two comparisons wait at the gate, and the two folders holding the next pairs wait for them:
    // a handful of the 41 folders listed on each side, not all (listing everything first did).
    expect(target.opCount('list')).toBeLessThanOrEqual(6);
    expect(source.opCount('list')).toBeLessThanOrEqual(6);
    open();
    const r = await running;
    expect(r).toMatchObject({ compared: 40, sameByContent: 40, differences: [], errors: [] });
    expect(target.opCount('list')).toBe(41);
    expect(seen.at(-1)).toEqual({ listed: 80, pairs: 40, compared: 40 });
  });

  it('lists a bucket-based side whole in one pass, and finds what a folder-by-folder walk finds', async () => {
    const s = new MemoryStore();
    const t = new MemoryStore();
    const source = new MemoryProvider({ store: s });
    const target = new MemoryProvider({ store: t, features: { bucketBased: true, listRecursive: true } });
    s.writeFile('/src/a/b/c/deep.txt', 'deep');
    s.writeFile('/src/a/only-source.txt', 'x');
    s.writeFile('/src/top.txt', 'top');
    t.writeFile('/dst/a/b/c/deep.txt', 'deep');
    t.writeFile('/dst/a/b/only-target.txt', 'y');
    t.writeFile('/dst/top.txt', 'TOP');
    const r = await checkTrees({ source, sourcePath: '/src', target, targetPath: '/dst' });
    expect(kinds(r)).toEqual([
      'missing_on_source /a/b/only-target.txt',
      'missing_on_target /a/only-source.txt',
      'content /top.txt',
    ]);
    expect(r).toMatchObject({ compared: 2, sameByHash: 1 });
    expect(target.opCount('listRecursive')).toBe(1);
    expect(target.opCount('list')).toBe(0);
    expect(source.opCount('list')).toBe(4);
  });

  it('a cancel stops the check', async () => {
    const { s, t, source, target } = sides();
    for (let i = 0; i < 50; i++) {
      s.writeFile(`/src/f${i}`, `${i}`);
      t.writeFile(`/dst/f${i}`, `${i}`);
    }
    const ac = new AbortController();
    ac.abort();
    await expect(
      checkTrees({ source, sourcePath: '/src', target, targetPath: '/dst', signal: ac.signal }),
    ).rejects.toMatchObject({ code: 'canceled' });
  });
});
