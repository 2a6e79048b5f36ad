import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ProviderError } from '../../api/errors.ts';
import { LOCAL_TRASH_DIR, openLocal, type LocalProvider } from './local.ts';

// The local kind's own trash (`.skyferry-trash` at the top of the root): what it holds, restoring
// an item where it was, deleting one for good, emptying it.
describe('local folder trash', () => {
  let root: string;
  let local: LocalProvider;
  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'skyferry-local-trash-'));
    local = await openLocal({ path: root }, { localRoots: [root] });
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const write = (rel: string, content: string) => {
    mkdirSync(join(root, rel, '..'), { recursive: true });
    writeFileSync(join(root, rel), content);
  };

  it('lists what was trashed (each item once, not its contents), newest first, with where it was', async () => {
    write('Docs/2024/report.txt', 'twelve bytes');
    write('Docs/2024/extra/a.txt', 'a');
    write('top.txt', 'top');
    expect((await local.listTrash()).entries).toEqual([]);
    await local.trash('/Docs/2024/report.txt');
    await new Promise((r) => setTimeout(r, 5));
    await local.trash('/Docs/2024/extra');
    const { entries } = await local.listTrash();
    expect(entries.map((e) => [e.name, e.originalPath, e.kind, e.size])).toEqual([
      ['extra', '/Docs/2024/extra', 'dir', 0],
      ['report.txt', '/Docs/2024/report.txt', 'file', 12],
    ]);
    expect(entries[0]?.deletedAt?.getTime()).toBeGreaterThanOrEqual(entries[1]?.deletedAt?.getTime() ?? Infinity);
    // The trash stays out of the listings.
    expect((await local.list('/')).entries.map((e) => e.name).sort()).toEqual(['Docs', 'top.txt']);
  });

  it('restores an item where it was (its folders made again), or beside it when the name is taken', async () => {
    write('Docs/report.txt', 'first');
    await local.trash('/Docs/report.txt');
    rmSync(join(root, 'Docs'), { recursive: true });
    const id = (await local.listTrash()).entries[0]?.id as string;
    const restored = await local.restoreTrash(id);
    expect(restored.path).toBe('/Docs/report.txt');
    expect(readFileSync(join(root, 'Docs/report.txt'), 'utf8')).toBe('first');
    expect((await local.listTrash()).entries).toEqual([]);

    await local.trash('/Docs/report.txt');
    write('Docs/report.txt', 'second');
    const again = (await local.listTrash()).entries[0]?.id as string;
    expect((await local.restoreTrash(again)).path).toBe('/Docs/report (restored).txt');
    expect(readFileSync(join(root, 'Docs/report (restored).txt'), 'utf8')).toBe('first');
    expect(readFileSync(join(root, 'Docs/report.txt'), 'utf8')).toBe('second');
  });

  it('deletes one item for good, empties the rest, and refuses ids that are not trash items', async () => {
    write('a.txt', 'a');
    write('b.txt', 'b');
    write('c.txt', 'c');
    for (const p of ['/a.txt', '/b.txt', '/c.txt']) await local.trash(p);
    const [first] = (await local.listTrash()).entries;
    await local.purgeTrash(first?.id as string);
    expect((await local.listTrash()).entries).toHaveLength(2);
    for (const id of ['../a.txt', 'x', first?.id as string]) {
      const err = await local.restoreTrash(id).catch((e: unknown) => e);
      expect(ProviderError.is(err, 'not_found'), id).toBe(true);
    }
    await local.emptyTrash();
    expect((await local.listTrash()).entries).toEqual([]);
    expect(existsSync(join(root, 'a.txt'))).toBe(false);
  });

  it('finds items trashed before notes were kept (the chain of folders inside their stamp)', async () => {
    const legacy = join(root, LOCAL_TRASH_DIR, '2024-01-02T03-04-05-000Z-abcdef', 'Old', 'Photos');
    mkdirSync(join(legacy, 'x'), { recursive: true });
    writeFileSync(join(legacy, 'x', '1.jpg'), 'jpg');
    writeFileSync(join(legacy, '2.jpg'), 'jpg');
    const [item] = (await local.listTrash()).entries;
    expect([item?.name, item?.originalPath, item?.kind]).toEqual(['Photos', '/Old/Photos', 'dir']);
    await local.restoreTrash(item?.id as string);
    expect(readFileSync(join(root, 'Old/Photos/x/1.jpg'), 'utf8')).toBe('jpg');
  });
});
