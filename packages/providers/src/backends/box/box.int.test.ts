import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BoxEmulator, sha1Hex } from '@skyferry/testing';
import type { ProviderError } from '../../api/errors.ts';
import { checkNameSearch, errorCode, patternBytes, readAll, runConformance, writeFiles } from '../../testkit/index.ts';
import {
  conformanceTarget,
  runOAuthChecks,
  startEmulatedService,
  type EmulatedService,
} from '../oauth-common/emulated.ts';
import '../index.ts';

// Box against the local emulator built from Box's published API documentation
// (packages/testing/src/emulators/box), with Box's own limits: direct uploads up to 50 MB,
// chunked sessions from 20 MB in 8 MiB parts. Sizes shrink when CI is set.
const CI = Boolean(process.env.CI);
const MiB = 1024 * 1024;
const CUTOFF = 20_000_000;

const start = () =>
  startEmulatedService({
    kind: 'box',
    service: 'box',
    make: (oauth) => new BoxEmulator({ oauth }),
  });

runConformance(
  'box (emulated Box API 2.0)',
  async () => conformanceTarget(await start(), 'box', { upload_cutoff: CUTOFF }),
  { bigFileSize: CI ? 24 * MiB : 60 * MiB, streamFileSize: 24 * MiB, pagingCount: CI ? 1100 : 2500 },
);

runOAuthChecks('box', start, {
  bigSize: CUTOFF + 5 * MiB,
  sessionRequests: (emulator) => emulator.partPuts,
  settings: { upload_cutoff: CUTOFF },
});

describe('box specifics (emulated)', () => {
  let svc: EmulatedService<BoxEmulator>;
  beforeAll(async () => {
    svc = await start();
  });
  afterAll(async () => {
    await svc.close();
  });

  it('uploads small files directly with their SHA-1 and keeps content_modified_at', async () => {
    const p = await svc.open();
    const data = patternBytes(100_000, 1);
    const e = await p.put('/small/a.bin', Readable.from([data]), {
      size: data.length,
      modTime: new Date('2017-07-07T07:07:07Z'),
    });
    expect(e.hashes?.sha1).toBe(sha1Hex(data));
    expect(e.modTime?.toISOString()).toBe('2017-07-07T07:07:07.000Z');
    // A second put replaces it as a new version (Box answers 409 with the file's id first).
    const v2 = Buffer.from('version two');
    await p.put('/small/a.bin', Readable.from([v2]), { size: v2.length });
    expect((await readAll(await p.openRead('/small/a.bin'))).toString()).toBe('version two');
    expect((await p.list('/small')).entries).toHaveLength(1);
  });

  it('uploads large files through a chunked session with per-part digests and commits the whole SHA-1', async () => {
    const p = await svc.open({ upload_cutoff: CUTOFF });
    const data = patternBytes(CUTOFF + 3 * MiB, 2);
    const before = svc.emulator.partPuts;
    svc.emulator.commitsPending = 1;
    const e = await p.put('/large/b.bin', Readable.from([data]), { size: data.length });
    expect(svc.emulator.partPuts - before).toBe(Math.ceil(data.length / (8 * MiB)));
    expect(svc.emulator.commitsPending).toBe(0);
    expect(e.hashes?.sha1).toBe(sha1Hex(data));
    expect(svc.emulator.openSessions()).toBe(0);
  });

  it('trash keeps the item in Box trash; remove purges it', async () => {
    const p = await svc.open();
    await p.put('/t/keep-in-trash.txt', Readable.from([Buffer.from('a')]), { size: 1 });
    await p.put('/t/purge.txt', Readable.from([Buffer.from('b')]), { size: 1 });
    await p.trash!('/t/keep-in-trash.txt');
    await p.remove('/t/purge.txt');
    const names = svc.emulator.trashOf(svc.user).map((i) => i.name);
    expect(names).toContain('keep-in-trash.txt');
    expect(names).not.toContain('purge.txt');
  });

  it('searches by name through Box itself, below the folder searched', async () => {
    const p = await svc.open();
    await checkNameSearch(p);
    // What was trashed is found once it is there again.
    await writeFiles(p, { '/find/gone invoice.txt': 'y' });
    expect((await p.search!('/find', 'gone')).entries.map((e) => e.path)).toEqual(['/find/gone invoice.txt']);
  });

  it('lists its trash with where each item was, restores it there (beside a new one of the same name), purges and empties it', async () => {
    const p = await svc.open();
    await writeFiles(p, { '/bin/Docs/report.txt': 'report', '/bin/Old/a.txt': 'a' });
    await p.trash!('/bin/Docs/report.txt');
    await p.trash!('/bin/Old');
    const listed = (await p.listTrash!()).entries;
    const report = listed.find((e) => e.name === 'report.txt')!;
    const old = listed.find((e) => e.name === 'Old')!;
    expect(report).toMatchObject({ kind: 'file', size: 6, originalPath: '/bin/Docs/report.txt' });
    expect(report.deletedAt).toBeInstanceOf(Date);
    expect(old).toMatchObject({ kind: 'dir', originalPath: '/bin/Old' });
    // What the trashed folder held is not listed on its own.
    expect(listed.map((e) => e.name)).not.toContain('a.txt');

    await writeFiles(p, { '/bin/Docs/report.txt': 'new' });
    const restored = await p.restoreTrash!(report.id);
    expect(restored.path).toBe('/bin/Docs/report (restored).txt');
    expect((await readAll(await p.openRead('/bin/Docs/report (restored).txt'))).toString()).toBe('report');
    expect((await readAll(await p.openRead('/bin/Docs/report.txt'))).toString()).toBe('new');
    const back = await p.restoreTrash!(old.id);
    expect(back).toMatchObject({ path: '/bin/Old', kind: 'dir' });
    expect((await p.list('/bin/Old')).entries.map((e) => e.name)).toEqual(['a.txt']);
    // A live item is no trash.
    expect(await errorCode(p.restoreTrash!(old.id))).toBe('not_found');
    expect(await errorCode(p.purgeTrash!('file:not-a-box-id'))).toBe('not_found');

    // A file whose folder went to the trash after it comes back in the root folder.
    await writeFiles(p, { '/bin/Gone/lost.txt': 'lost' });
    await p.trash!('/bin/Gone/lost.txt');
    await p.trash!('/bin/Gone');
    const lost = (await p.listTrash!()).entries.find((e) => e.name === 'lost.txt')!;
    expect(lost.originalPath).toBeUndefined();
    expect((await p.restoreTrash!(lost.id)).path).toBe('/lost.txt');

    await p.trash!('/bin/Old');
    await p.trash!('/bin/Docs/report.txt');
    const again = (await p.listTrash!()).entries;
    await p.purgeTrash!(again.find((e) => e.name === 'Old')!.id);
    expect((await p.listTrash!()).entries.map((e) => e.name)).not.toContain('Old');
    await p.emptyTrash!();
    expect((await p.listTrash!()).entries).toEqual([]);
    expect(svc.emulator.trashOf(svc.user)).toEqual([]);
  });

  it('reports space from users/me', async () => {
    const p = await svc.open();
    svc.emulator.setSpace(svc.user, 5 * 1024 ** 3);
    const a = await p.about!();
    expect(a.total).toBe(5 * 1024 ** 3);
    expect(a.used).toBeGreaterThan(0);
  });

  it('a full account answers quota', async () => {
    const p = await svc.open();
    svc.emulator.setSpace(svc.user, 1);
    try {
      const err = await p.put('/full/x.bin', Readable.from([Buffer.from('xx')]), { size: 2 }).catch((e: unknown) => e);
      expect((err as ProviderError).code).toBe('quota');
    } finally {
      svc.emulator.setSpace(svc.user, 10 * 1024 ** 3);
    }
  });
});
