import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNextcloudEmulator, type NextcloudEmulator } from '@skyferry/testing';
import { runConformance } from '../../testkit/index.ts';
import { openedOnFirstCall } from './deferred.ts';
import { openWebdav, type WebdavProvider } from './webdav.ts';

// Nextcloud (a PHP application) cannot be installed here: these run against an emulator built
// from Nextcloud's WebDAV documentation (status.php, X-OC-Mtime, chunked upload v2) over Apache.
runConformance('webdav on a Nextcloud emulator (chunked upload v2)', async () => {
  const server = await startNextcloudEmulator();
  const creds = { url: server.url, username: server.username, password: server.password };
  return {
    provider: await openWebdav(creds),
    cleanup: () => server.stop(),
    badCredentials: async () => openedOnFirstCall(() => openWebdav({ ...creds, password: 'wrong password' })),
  };
});

describe('webdav Nextcloud specifics', () => {
  let server: NextcloudEmulator;
  let dav: WebdavProvider;

  beforeAll(async () => {
    server = await startNextcloudEmulator();
    dav = await openWebdav({ url: server.url, username: server.username, password: server.password });
  });
  afterAll(async () => {
    await dav?.close();
    await server?.stop();
  });

  it('detects Nextcloud from status.php and offers its chunked upload and kept times', () => {
    expect(dav.vendor).toBe('nextcloud');
    expect(dav.features.chunkWriter).toBe(true);
    expect(dav.features.setModTime).toBe(true);
  });

  it('assembles chunks written out of order through uploads/<user>/<id> and .file', async () => {
    const w = await dav.openChunkWriter?.('/chunked/big file.bin', {
      size: 11 * 1024 * 1024,
      modTime: new Date('2023-04-05T06:07:08Z'),
    });
    expect(w).toBeDefined();
    if (!w) return;
    const data = Buffer.alloc(11 * 1024 * 1024);
    for (let i = 0; i < data.length; i += 1) data[i] = (i * 7) & 255;
    const n = Math.ceil(data.length / w.chunkSize);
    expect(n).toBeGreaterThanOrEqual(2);
    for (let i = n - 1; i >= 0; i -= 1) await w.writeChunk(i, data.subarray(i * w.chunkSize, (i + 1) * w.chunkSize));
    const e = await w.close();
    expect(server.assembled).toContain('chunked/big file.bin');
    expect(e.size).toBe(data.length);
    expect(e.modTime?.toISOString()).toBe('2023-04-05T06:07:08.000Z');
    const chunks: Buffer[] = [];
    for await (const c of await dav.openRead('/chunked/big file.bin')) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).equals(data)).toBe(true);
  });

  it('keeps the modification time of a plain upload (X-OC-Mtime)', async () => {
    const t = new Date('2019-09-09T09:09:09Z');
    const e = await dav.put('/times/t.txt', Readable.from([Buffer.from('t')]), { size: 1, modTime: t });
    expect(e.modTime?.getTime()).toBe(t.getTime());
    expect((await dav.list('/times')).entries[0]?.modTime?.getTime()).toBe(t.getTime());
  });

  it('reports the space (RFC 4331 quota) the server answers', async () => {
    await dav.put('/space/q.bin', Readable.from([Buffer.alloc(1000)]), { size: 1000 });
    const about = await dav.about?.();
    expect(about?.used).toBeGreaterThanOrEqual(1000);
    expect(about?.total).toBe(server.quotaBytes);
  });

  it('lists, restores and purges what its trashbin holds; a DELETE puts items there', async () => {
    expect(dav.features.trash).toBe(true);
    await dav.put('/bin/Docs/report.txt', Readable.from([Buffer.from('first')]), { size: 5 });
    await dav.put('/bin/old.txt', Readable.from([Buffer.from('old')]), { size: 3 });
    await dav.trash?.('/bin/Docs/report.txt');
    await dav.trash?.('/bin/old.txt');
    const listed = (await dav.listTrash?.())?.entries ?? [];
    const byName = new Map(listed.map((e) => [e.name, e]));
    expect(byName.get('report.txt')).toMatchObject({ originalPath: '/bin/Docs/report.txt', kind: 'file', size: 5 });
    expect(byName.get('report.txt')?.deletedAt).toBeInstanceOf(Date);
    expect((await dav.list('/bin/Docs')).entries).toEqual([]);

    // A file of that name came back meanwhile: the restored one lands beside it.
    await dav.put('/bin/Docs/report.txt', Readable.from([Buffer.from('second')]), { size: 6 });
    const restored = await dav.restoreTrash?.(byName.get('report.txt')?.id as string);
    expect(restored?.path).toBe('/bin/Docs/report (restored).txt');
    expect((await dav.list('/bin/Docs')).entries.map((e) => e.name).sort()).toEqual([
      'report (restored).txt',
      'report.txt',
    ]);

    // Ids that would name the trashbin itself (or above it) once in a URL are no items.
    for (const id of ['..', '.', '']) {
      const purge = await dav.purgeTrash?.(id).catch((e: unknown) => e);
      expect((purge as { code?: string }).code, id).toBe('not_found');
    }
    expect((await dav.listTrash?.())?.entries.length).toBeGreaterThan(0);
    await dav.purgeTrash?.(byName.get('old.txt')?.id as string);
    expect((await dav.listTrash?.())?.entries.map((e) => e.name)).not.toContain('old.txt');
    await dav.trash?.('/bin/Docs');
    await dav.emptyTrash?.();
    expect((await dav.listTrash?.())?.entries).toEqual([]);
  });
});
