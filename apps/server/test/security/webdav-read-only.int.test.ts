import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, message, type Cloud, type DeleteFilesData } from '@skyferry/contract';
import { startRcloneServe, type RcloneServer } from '@skyferry/testing';
import { envelope, startTestApp, type SignedUpUser, type TestApp } from '../support/app.ts';

/**
 * Issue 34, smaller item: a WebDAV share the user may only read was reported as "already exists"
 * (MKCOL and DELETE answered 405) or "The path does not exist." (PUT answered 404) by
 * `rclone serve webdav --read-only`. Every change it refuses is now "This cloud drive does not
 * allow this operation." (403003); reading works as before.
 */
describe('security: a read-only WebDAV share', () => {
  let t: TestApp;
  let u: SignedUpUser;
  let dav: RcloneServer;
  let cloudId: string;
  const READ_ONLY = message('en', 'cloud_read_only');

  const call = async (method: 'POST' | 'PUT', url: string, payload: unknown) => {
    const res = await t.app.inject({
      method,
      url,
      headers: { ...u.headers, 'content-type': method === 'PUT' ? 'application/octet-stream' : 'application/json' },
      payload: payload as string,
    });
    return { status: res.statusCode, ...envelope(res) };
  };

  beforeAll(async () => {
    [t, dav] = await Promise.all([startTestApp(), startRcloneServe('webdav', { readOnly: true })]);
    mkdirSync(join(dav.dir, 'docs'));
    writeFileSync(join(dav.dir, 'docs', 'a.txt'), 'kept');
    u = await t.signUp();
    const res = await call('POST', '/api/clouds', {
      cloud_name: 'webdav',
      credentials: { url: dav.url, username: dav.username, password: dav.password },
    });
    expect(res.code, res.msg).toBe(0);
    cloudId = (res.data as Cloud).id;
  }, 60_000);
  afterAll(async () => {
    await Promise.all([t?.close(), dav?.stop()]);
  });

  it('refuses uploads, new folders, renames and deletions as not allowed', async () => {
    const put = (path: string) =>
      call('PUT', `/api/cloud-manager/files?cloud_id=${cloudId}&path=${encodeURIComponent(path)}`, 'new');
    for (const r of [
      await put('/docs/b.txt'),
      await put('/docs/a.txt'),
      await put('/new/b.txt'),
      await call('POST', '/api/cloud-manager/mkdir', { cloud_id: cloudId, folder_name: 'made' }),
      await call('POST', '/api/cloud-manager/rename', { cloud_id: cloudId, path: '/docs/a.txt', new_name: 'c.txt' }),
    ]) {
      expect([r.status, r.code, r.msg]).toEqual([403, Code.FORBIDDEN, READ_ONLY]);
    }
    const del = await call('POST', '/api/cloud-manager/delete', {
      cloud_id: cloudId,
      files: ['/docs/a.txt', '/docs'],
      permanent: true,
    });
    const failed = (del.data as DeleteFilesData).failed.map((f) => [f.path, f.code, f.msg]);
    expect(failed).toEqual([
      ['/docs/a.txt', Code.FORBIDDEN, READ_ONLY],
      ['/docs', Code.FORBIDDEN, READ_ONLY],
    ]);
  });

  it('still reads', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/cloud-manager/files?cloud_id=${cloudId}&path=${encodeURIComponent('/docs/a.txt')}`,
      headers: u.headers,
    });
    expect([res.statusCode, res.body]).toEqual([200, 'kept']);
  });
});
