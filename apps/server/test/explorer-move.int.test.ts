import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, type Cloud, type CreateTaskData, type ServerTask, type TaskDetail } from '@skyferry/contract';
import { startApacheWebdav, startS3rver, type ApacheWebdavServer, type S3rverServer } from '@skyferry/testing';
import { startTestApp, type SignedUpUser, type TestApp } from './support/app.ts';
import { caller, connectLocal, waitForState, writeTree } from './support/tasks.ts';

// "Copy to" and "Move to" of the explorer: a migration whose sources are the selected items, on
// real servers. A move deletes each source file only once the target holds the same; anything
// else stays, named in the task's result.

function listFiles(root: string, prefix = ''): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? listFiles(join(root, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`]))
    .sort();
}

describe('copy and move a selection as a server task', () => {
  let t: TestApp;
  const call = caller(() => t);
  let user: SignedUpUser;
  let dav: ApacheWebdavServer;
  let s3: S3rverServer;
  let laptop: Cloud;
  let webdav: Cloud;
  let bucket: Cloud;
  let laptopDir: string;

  beforeAll(async () => {
    [t, dav, s3] = await Promise.all([
      startTestApp({ env: { SKYFERRY_WORKERS: '2' } }),
      startApacheWebdav(),
      startS3rver({ buckets: ['moves'] }),
    ]);
    user = await t.signUp();
    laptopDir = t.makeLocalFolder('laptop');
    laptop = await connectLocal(call, user.headers, laptopDir, 'Laptop');
    const w = await call<Cloud>('POST', '/api/clouds', {
      headers: user.headers,
      body: {
        cloud_name: 'webdav',
        alias: 'NAS',
        credentials: { url: dav.url, username: dav.username, password: dav.password, vendor: 'other' },
      },
    });
    expect(w.code).toBe(0);
    webdav = w.data;
    const b = await call<Cloud>('POST', '/api/clouds', {
      headers: user.headers,
      body: {
        cloud_name: 's3_compatible',
        alias: 'Bucket',
        credentials: {
          bucket: 'moves',
          access_key_id: s3.accessKeyId,
          secret_access_key: s3.secretAccessKey,
          endpoint: s3.endpoint,
          region: s3.region,
          path_style: true,
        },
      },
    });
    expect(b.code).toBe(0);
    bucket = b.data;
  });
  afterAll(async () => {
    await Promise.all([t?.close(), dav?.stop(), s3?.stop()]);
  });

  const create = (body: Record<string, unknown>) =>
    call<CreateTaskData>('POST', '/api/tasks', { headers: user.headers, body: { task_type: 0, ...body } });
  const finished = async (task: ServerTask) =>
    (await waitForState(call, user.headers, task.id, undefined, 60_000)).task;
  const detail = (id: string) => call<TaskDetail>('GET', `/api/tasks/${id}`, { headers: user.headers });

  it('copies a selection (a folder and a file) to a WebDAV folder and leaves the sources', async () => {
    writeTree(laptopDir, { 'Trip/day1.txt': 'sun', 'Trip/maps/route.gpx': 'x'.repeat(3000), 'notes.txt': 'hello' });
    const res = await create({
      from_cloud: { cloud_id: laptop.id, paths: ['/Trip', '/notes.txt'] },
      to_cloud: { cloud_id: webdav.id, path: '/Inbox' },
    });
    expect(res.code).toBe(0);
    const task = res.data.task as ServerTask;
    expect(task.move).toBe(false);
    expect((await finished(task)).state).toBe(0);
    expect(listFiles(join(dav.dir, 'Inbox'))).toEqual(['Trip/day1.txt', 'Trip/maps/route.gpx', 'notes.txt']);
    expect(listFiles(laptopDir)).toEqual(['Trip/day1.txt', 'Trip/maps/route.gpx', 'notes.txt']);
  });

  it('moves a selection to WebDAV (no hash in common): deletes each source this run wrote and checked, and the emptied folders', async () => {
    writeTree(laptopDir, { 'Moving/a.txt': 'A', 'Moving/deep/b.bin': Buffer.alloc(70_000, 7), 'single.txt': 'one' });
    const res = await create({
      from_cloud: { cloud_id: laptop.id, paths: ['/Moving', '/single.txt'] },
      to_cloud: { cloud_id: webdav.id, path: '/Moved' },
      move: true,
    });
    expect(res.code).toBe(0);
    const task = res.data.task as ServerTask;
    expect(task.move).toBe(true);
    const done = await finished(task);
    expect(done.state).toBe(0);
    expect(done.result?.moved).toMatchObject({ deleted: 3, kept: 0, failed: 0 });
    expect(listFiles(join(dav.dir, 'Moved'))).toEqual(['Moving/a.txt', 'Moving/deep/b.bin', 'single.txt']);
    expect(readFileSync(join(dav.dir, 'Moved/Moving/deep/b.bin'))).toEqual(Buffer.alloc(70_000, 7));
    expect(existsSync(join(laptopDir, 'Moving'))).toBe(false);
    expect(existsSync(join(laptopDir, 'single.txt'))).toBe(false);
  });

  it('a move keeps a source whose name on the target holds something else (skipped there), and says so', async () => {
    writeTree(laptopDir, { 'Clash/same.txt': 'mine', 'Clash/new.txt': 'new' });
    const seeded = await t.app.inject({
      method: 'PUT',
      url: `/api/cloud-manager/files?cloud_id=${webdav.id}&path=${encodeURIComponent('/Here/Clash/same.txt')}`,
      headers: { ...user.headers, 'content-type': 'application/octet-stream' },
      payload: 'theirs, longer',
    });
    expect(seeded.statusCode).toBe(200);
    const res = await create({
      from_cloud: { cloud_id: laptop.id, paths: ['/Clash'] },
      to_cloud: { cloud_id: webdav.id, path: '/Here' },
      move: true,
      // The target's file of that name stays (the default replaces an older or other-sized one).
      same_name_policy: 'skip',
    });
    const done = await finished(res.data.task as ServerTask);
    expect(done.state).toBe(5);
    expect(done.result?.moved).toMatchObject({ deleted: 1, kept: 1 });
    expect((await detail(done.id)).data.result?.moved?.kept_items[0]).toMatch(/^\/Clash\/same\.txt: /);
    expect(listFiles(join(laptopDir, 'Clash'))).toEqual(['same.txt']);
    expect(readFileSync(join(dav.dir, 'Here/Clash/same.txt'), 'utf8')).toBe('theirs, longer');
  });

  it('moves from an S3-compatible bucket to a local folder, checking each object by its MD5', async () => {
    const put = await t.app.inject({
      method: 'PUT',
      url: `/api/cloud-manager/files?cloud_id=${bucket.id}&path=${encodeURIComponent('/photos/2024/a.jpg')}`,
      headers: { ...user.headers, 'content-type': 'application/octet-stream' },
      payload: Buffer.alloc(5000, 3),
    });
    expect(put.statusCode).toBe(200);
    const target = t.makeLocalFolder('restore');
    const archive = await connectLocal(call, user.headers, target, 'Archive');
    const res = await create({
      from_cloud: { cloud_id: bucket.id, paths: ['/photos'] },
      to_cloud: { cloud_id: archive.id, path: '/' },
      move: true,
    });
    const done = await finished(res.data.task as ServerTask);
    expect(done.state).toBe(0);
    expect(done.result?.moved?.deleted).toBe(1);
    expect(readFileSync(join(target, 'photos/2024/a.jpg'))).toEqual(Buffer.alloc(5000, 3));
    const left = await call<{ items: unknown[] }>('POST', '/api/cloud-manager/list', {
      headers: user.headers,
      body: { cloud_id: bucket.id, path: '/', refresh: true },
    });
    expect(left.data.items).toEqual([]);
  });

  it('refuses a move of a cloud’s root, and a move as a sync', async () => {
    const root = await create({
      from_cloud: { cloud_id: laptop.id, paths: ['/'] },
      to_cloud: { cloud_id: webdav.id, path: '/RootCopy' },
      move: true,
    });
    expect([root.status, root.code]).toEqual([400, Code.BAD_REQUEST]);
    writeFileSync(join(laptopDir, 'x.txt'), 'x');
    const sync = await create({
      task_type: 1,
      from_cloud: { cloud_id: laptop.id, paths: ['/'] },
      to_cloud: { cloud_id: webdav.id, path: '/SyncCopy' },
      move: true,
    });
    expect([sync.status, sync.code]).toEqual([400, Code.BAD_REQUEST]);
  });
});
