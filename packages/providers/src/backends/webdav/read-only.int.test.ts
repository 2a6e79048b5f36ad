import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApacheWebdav, startRcloneServe } from '@skyferry/testing';
import { ProviderError } from '../../api/errors.ts';
import { openWebdav, type WebdavProvider } from './webdav.ts';

/**
 * A share the user may read but not change (issue 34): every write is refused as `permission`,
 * never as "already exists" or "not found", whatever the server answers: Apache mod_dav with its
 * writing methods denied answers 403; `rclone serve webdav --read-only` answers PUT with 404,
 * MKCOL and DELETE with 405, MOVE with 403.
 */
const servers = {
  apache: () => startApacheWebdav({ readOnly: true }),
  rclone: () => startRcloneServe('webdav', { readOnly: true }),
};

for (const [name, start] of Object.entries(servers)) {
  describe(`a read-only WebDAV share (${name})`, () => {
    let server: Awaited<ReturnType<(typeof servers)[keyof typeof servers]>>;
    let dav: WebdavProvider;

    beforeAll(async () => {
      server = await start();
      mkdirSync(join(server.dir, 'folder'));
      writeFileSync(join(server.dir, 'folder', 'a.txt'), 'kept');
      dav = await openWebdav({ url: server.url, username: server.username, password: server.password });
    }, 60_000);
    afterAll(async () => {
      await dav?.close();
      await server?.stop();
    });

    const code = (p: Promise<unknown>) =>
      p.then(
        () => 'done',
        (err: unknown) => (err instanceof ProviderError ? err.code : String(err)),
      );
    const body = () => Readable.from([Buffer.from('new')]);

    it('reads as usual', async () => {
      // rclone's directory cache shows files written beside it after a second.
      await expect
        .poll(async () => (await dav.list('/folder').catch(() => ({ entries: [] }))).entries.map((e) => e.name), {
          timeout: 5000,
        })
        .toEqual(['a.txt']);
      const chunks: Buffer[] = [];
      for await (const c of await dav.openRead('/folder/a.txt')) chunks.push(c as Buffer);
      expect(Buffer.concat(chunks).toString()).toBe('kept');
    });

    it('refuses every change as permission', async () => {
      expect(await code(dav.put('/folder/b.txt', body(), { size: 3 }))).toBe('permission');
      expect(await code(dav.put('/folder/a.txt', body(), { size: 3 }))).toBe('permission');
      expect(await code(dav.put('/new/b.txt', body(), { size: 3 }))).toBe('permission');
      expect(await code(dav.mkdir('/made'))).toBe('permission');
      expect(await code(dav.remove('/folder/a.txt'))).toBe('permission');
      expect(await code(dav.rename('/folder/a.txt', 'c.txt'))).toBe('permission');
      expect(await code(dav.rmdir('/folder'))).toBe('permission');
      // An existing folder needs no change: mkdir still succeeds.
      expect(await code(dav.mkdir('/folder'))).toBe('done');
      expect((await dav.list('/folder')).entries.map((e) => e.name)).toEqual(['a.txt']);
    });
  });
}
