import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EXIT } from './io.ts';
import { runIn } from './run.testing.ts';

// size, tree, rmdirs and dedupe in-process on a folder of this machine.

let dir: string;
const cli = (...argv: string[]) => runIn(dir, undefined, argv);

async function files(root: string): Promise<string[]> {
  return (await readdir(root, { recursive: true, withFileTypes: true }))
    .map((e) => `${join(e.parentPath, e.name).slice(root.length + 1)}${e.isDirectory() ? '/' : ''}`)
    .sort();
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'skyferry-cli-cleanup-'));
  const t = join(dir, 't');
  await mkdir(join(t, 'a', 'b'), { recursive: true });
  await mkdir(join(t, 'empty', 'inner'), { recursive: true });
  await mkdir(join(t, 'also-empty'));
  await writeFile(join(t, 'x.txt'), 'same words\n');
  await writeFile(join(t, 'a', 'y.txt'), 'same words\n');
  await writeFile(join(t, 'a', 'b', 'z.txt'), 'same words\n');
  await writeFile(join(t, 'a', 'other.txt'), 'other words');
  await writeFile(join(t, 'a', 'big.bin'), Buffer.alloc(50_000, 1));
  // z.txt is the newest copy, x.txt the oldest.
  await utimes(join(t, 'x.txt'), new Date('2020-01-01'), new Date('2020-01-01'));
  await utimes(join(t, 'a', 'y.txt'), new Date('2022-01-01'), new Date('2022-01-01'));
  await utimes(join(t, 'a', 'b', 'z.txt'), new Date('2024-01-01'), new Date('2024-01-01'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('size and tree', () => {
  it('size counts the files below a folder and their bytes', async () => {
    const r = await cli('size', 't', '--json');
    expect(r.code).toBe(EXIT.ok);
    expect(JSON.parse(r.out)).toEqual({ files: 5, folders: 5, bytes: 3 * 11 + 11 + 50_000, errors: [] });
    expect((await cli('size', 't')).out).toBe('5 files in 5 folders: 48.87 KB (50044 bytes)\n');
  });

  it('tree shows each folder with its total, largest first, to the level asked', async () => {
    const r = await cli('tree', 't', '--level', '1');
    expect(r.code).toBe(EXIT.ok);
    expect(r.out.split('\n').map((l) => l.replace(/ +/g, ' ').trim())).toEqual([
      '48.87 KB t (5 files)',
      '├── 48.86 KB a/ (4 files)',
      '├── 11 B x.txt',
      '├── 0 B also-empty/ (0 files)',
      '└── 0 B empty/ (0 files)',
      '',
    ]);
    const json = JSON.parse((await cli('tree', 't', '--json')).out) as {
      size: number;
      children: Array<{ name: string; size: number; children?: Array<{ name: string }> }>;
    };
    expect(json.size).toBe(50_044);
    expect(json.children[0]).toMatchObject({ name: 'a', size: 50_033 });
    expect(json.children[0]?.children?.map((c) => c.name)).toEqual(['big.bin', 'b', 'other.txt', 'y.txt']);
    const top = JSON.parse((await cli('tree', 't', '--json', '--level', '1')).out) as typeof json;
    expect(top.children[0]).toMatchObject({ name: 'a', size: 50_033, children: [] });
  });
});

describe('rmdirs', () => {
  it('lists the empty folders with --dry-run and changes nothing; then removes them (never the folder named)', async () => {
    const before = await files(join(dir, 't'));
    const dry = await cli('rmdirs', 't', '--dry-run', '--json');
    expect(dry.code).toBe(EXIT.ok);
    expect(JSON.parse(dry.out)).toMatchObject({
      dryRun: true,
      emptyFolders: [
        { path: 't/also-empty', nested: 0 },
        { path: 't/empty', nested: 1 },
      ],
      total: 3,
    });
    expect(await files(join(dir, 't'))).toEqual(before);
    const done = await cli('rmdirs', 't', '--no-trash');
    expect(done.code).toBe(EXIT.ok);
    expect(done.out).toContain('Removed 3 empty folders.');
    expect(await files(join(dir, 't'))).toEqual(before.filter((f) => !f.includes('empty')));
    expect((await cli('rmdirs', 't')).out).toBe('Removed 0 empty folders.\n');
  });
});

describe('dedupe', () => {
  it('--dry-run names the copy kept and the copies it would remove, changing nothing', async () => {
    const before = await files(join(dir, 't'));
    const r = await cli('dedupe', 't', '--dry-run');
    expect(r.code).toBe(EXIT.ok);
    expect(r.out).toContain('  keep          t/a/b/z.txt\n  would remove  t/a/y.txt\n  would remove  t/x.txt\n');
    expect(r.out).toContain('removing the 2 extra copies would free 22 B');
    expect(await files(join(dir, 't'))).toEqual(before);
  });

  it.each([
    ['newest', 'a/b/z.txt'],
    ['oldest', 'x.txt'],
    ['first', 'a/b/z.txt'],
  ])('--keep %s keeps %s and removes the other copies; other files stay', async (keep, kept) => {
    const r = await cli('dedupe', 't', '--keep', keep, '--no-trash', '--json');
    expect(r.code).toBe(EXIT.ok);
    const out = JSON.parse(r.out) as { groups: Array<{ keep: string; remove: Array<{ removed: boolean }> }> };
    expect(out.groups).toHaveLength(1);
    expect(out.groups[0]?.keep).toBe(`t/${kept}`);
    expect(out.groups[0]?.remove.every((x) => x.removed)).toBe(true);
    const left = (await files(join(dir, 't'))).filter((f) => !f.endsWith('/'));
    expect(left).toEqual(['a/big.bin', 'a/other.txt', kept].sort());
  });

  it('refuses --keep elsewhere and unknown policies', async () => {
    expect((await cli('dedupe', 't', '--keep', 'largest')).err).toMatch(/--keep: "largest" is not one of first/);
    expect((await cli('size', 't', '--keep', 'first')).code).toBe(EXIT.usage);
    expect((await cli('copy', 't', 'u', '--level', '2')).err).toMatch(/--level does not apply to copy/);
  });
});
