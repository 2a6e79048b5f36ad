import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWebdav, type Provider } from '@skyferry/providers';
import { startRcloneServe, type RcloneServer } from '@skyferry/testing';
import { runTransfer } from '../run.ts';
import { MemoryTwoWayStateStore } from '../stores.ts';
import { localTree as tree, startBackend, writeFileAt, type BackendFixture } from '../testing/backends.ts';
import { actions, useSides } from './support.ts';

// The wrong results of issue 45 and issue 35 (item 3) on real disks and a real case-insensitive
// WebDAV server: one name spelled two ways (NFC, NFD), a file and a folder of one name, names that
// differ only in case, and a name that is not valid UTF-8. Each is matched or reported, never
// silently lost or left out.

const T0 = new Date('2024-03-01T10:00:00Z');
const NFC = 'caf\u00e9.txt';
const NFD = 'cafe\u0301.txt';
const DIR_NFC = 'R\u00e9sum\u00e9';
const DIR_NFD = 'Re\u0301sume\u0301';

describe('names between two local disks', () => {
  const sides = useSides('local', 'local');

  it('mirror matches a name spelled NFC on one side and NFD on the other, and keeps the target its spelling', async () => {
    const A = sides.a.remote('/nfc-mirror');
    const B = sides.b.remote('/nfc-mirror');
    await writeFileAt(A, NFC, 'v2, longer', T0);
    await writeFileAt(A, `${DIR_NFC}/f.txt`, 'new content', T0);
    await writeFileAt(B, NFD, 'v1', T0);
    await writeFileAt(B, `${DIR_NFD}/f.txt`, 'old', T0);
    const { plan, result } = await sides.run('mirror', 'nfc-mirror', { confirmDeletes: true });
    expect(result.outcome).toBe('success');
    expect(plan?.summary.delete.count).toBe(0);
    expect(await tree(B)).toEqual({ [NFD]: 'v2, longer', [`${DIR_NFD}/f.txt`]: 'new content' });
  });

  it('two-way matches NFC and NFD spellings: no look-alike copy, the state is saved, an edit reaches the other spelling', async () => {
    const A = sides.a.remote('/nfc-two');
    const B = sides.b.remote('/nfc-two');
    await writeFileAt(A, NFC, 'same', T0);
    await writeFileAt(B, NFD, 'same', T0);
    const twoWayState = new MemoryTwoWayStateStore();
    const first = await sides.run('two_way', 'nfc-two', { twoWayState });
    expect(actions(first.plan)).toEqual([]);
    expect(first.result.twoWayStateCommitted).toBe(true);
    await writeFileAt(A, NFC, 'edited on A', new Date(T0.getTime() + 60_000));
    const second = await sides.run('two_way', 'nfc-two', { twoWayState });
    expect(second.result.outcome).toBe('success');
    expect(second.result.twoWayStateCommitted).toBe(true);
    expect(await tree(B)).toEqual({ [NFD]: 'edited on A' });
    expect(await tree(A)).toEqual({ [NFC]: 'edited on A' });
  });

  it('a file and a folder of one name is a conflict with its reason, in the plan and the result; the run is partial', async () => {
    const A = sides.a.remote('/kind');
    const B = sides.b.remote('/kind');
    await writeFileAt(A, 'x', 'a file', T0);
    await writeFileAt(A, 'ok.txt', 'ok', T0);
    await writeFileAt(B, 'x/inner.txt', 'in a folder', T0);
    const { plan, result } = await sides.run('mirror', 'kind', { confirmDeletes: true });
    expect(actions(plan)).toEqual(['conflict target /x kind_mismatch', 'copy target /ok.txt new']);
    expect(result.outcome).toBe('partial');
    // Counted as what the plan says it is, a conflict, and listed with its reason; no failure.
    expect(result.failed.map((f) => `${f.reason} ${f.item.rel} ${f.conflict}`)).toEqual(['kind_mismatch /x true']);
    expect(plan?.summary.conflict.count).toBe(1);
    expect(result.summary).toMatchObject({ added: 1, conflicts: 1, failed: 0, deleted: 0, skipped: 0 });
    expect(await tree(B)).toEqual({ 'ok.txt': 'ok', 'x/inner.txt': 'in a folder' });
  });

  it('a migrated folder whose name is a file in the target is a conflict with its reason, counted as one', async () => {
    const A = sides.a.remote('/fold');
    const B = sides.b.remote('/fold-target');
    await writeFileAt(A, 'Photos/p1.jpg', 'p1', T0);
    await writeFileAt(A, 'Photos/p2.jpg', 'p2', T0);
    await writeFileAt(A, 'notes.txt', 'n', T0);
    await writeFileAt(B, 'Photos', 'a file in the way', T0);
    const { plan, result } = await runTransfer({
      source: sides.a.provider,
      target: sides.b.provider,
      mode: 'migrate',
      sourcePaths: ['/fold/Photos', '/fold/notes.txt'],
      targetPath: '/fold-target',
    });
    expect(plan?.errors).toEqual([]);
    expect(actions(plan)).toEqual(['conflict target / kind_mismatch', 'copy target /notes.txt new']);
    expect(result.outcome).toBe('partial');
    expect(result.failed.map((f) => `${f.reason} ${f.sourceFile.parent}/${f.sourceFile.name} ${f.conflict}`)).toEqual([
      'kind_mismatch /fold/Photos true',
    ]);
    expect(result.summary).toMatchObject({ added: 1, conflicts: 1, failed: 0, skipped: 0 });
    expect(await tree(B)).toEqual({ Photos: 'a file in the way', 'notes.txt': 'n' });
  });

  it('a local file whose name is not valid UTF-8 is reported with its reason, not left out', async () => {
    const A = sides.a.remote('/bytes');
    await writeFileAt(A, 'good.txt', 'good', T0);
    await writeFile(Buffer.concat([Buffer.from(`${A}/bad`), Buffer.from([0xff, 0xfe]), Buffer.from('.txt')]), 'bad');
    await mkdir(sides.b.remote('/bytes'));
    const { plan, result } = await sides.run('one_way', 'bytes');
    expect(plan?.summary.copy.count).toBe(1);
    expect(result.outcome).toBe('partial');
    expect(result.failed.map((f) => f.reason)).toEqual(['invalid_name']);
    expect(result.failed[0]?.message).toMatch(/not valid UTF-8/);
    // Two files: one added, one a conflict with its reason; none failed, none left out.
    expect(plan?.summary.conflict.count).toBe(1);
    expect(result.summary).toMatchObject({ added: 1, conflicts: 1, failed: 0, skipped: 0 });
    expect(await readdir(sides.b.remote('/bytes'))).toEqual(['good.txt']);
  });
});

describe('names differing only in case, onto rclone serve webdav finding names whatever their case', () => {
  let local: BackendFixture;
  let server: RcloneServer;
  let target: Provider;
  beforeAll(async () => {
    [local, server] = await Promise.all([
      startBackend('local'),
      startRcloneServe('webdav', { args: ['--vfs-case-insensitive'] }),
    ]);
    target = await openWebdav({ url: server.url, username: server.username, password: server.password });
  }, 60_000);
  afterAll(async () => {
    await target?.close?.();
    await Promise.all([local?.stop(), server?.stop()]);
  });
  const put = (path: string, data: string) =>
    target.put(path, Readable.from([Buffer.from(data)]), { size: Buffer.byteLength(data) });

  it.each([
    ['a target folder holding files', '/Backup', true],
    ['an empty target folder', '/Empty', false],
  ])('are planned as conflicts and not copied onto one file (%s)', async (_, root, withFiles) => {
    const A = local.remote(root);
    await writeFileAt(A, 'Report.txt', 'the upper one', T0);
    await writeFileAt(A, 'report.txt', 'the lower one', T0);
    await writeFileAt(A, 'other.txt', 'other', T0);
    if (withFiles) await put(`${root}/Notes.txt`, 'notes');
    else await target.mkdir(root);
    const { plan, result } = await runTransfer({
      source: local.provider,
      target,
      mode: 'one_way',
      sourcePaths: [root],
      targetPath: root,
    });
    expect(actions(plan)).toEqual([
      'conflict target /Report.txt case_clash',
      'conflict target /report.txt case_clash',
      'copy target /other.txt new',
    ]);
    expect(result.outcome).toBe('partial');
    expect(result.failed.map((f) => `${f.reason} ${f.item.rel}`).sort()).toEqual([
      'case_clash /Report.txt',
      'case_clash /report.txt',
    ]);
    const names = (await target.list(root)).entries.map((e) => e.name).sort();
    expect(names).toEqual(withFiles ? ['Notes.txt', 'other.txt'] : ['other.txt']);
    expect(join(server.dir, root)).toBeTruthy();
  });
});
