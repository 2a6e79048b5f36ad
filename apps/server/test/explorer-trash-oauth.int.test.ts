import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Code,
  type Cloud,
  type CleanupTask,
  type DeleteCleanupData,
  type DuplicateFilesPage,
  type SearchFilesData,
  type TrashListData,
  type TrashRestoreData,
} from '@skyferry/contract';
import type { SignedUpUser } from './support/app.ts';
import { connectOAuth, startOAuthTestApp, type OAuthTestApp } from './support/oauth.ts';
import { caller } from './support/tasks.ts';

// The explorer's trash view and search on the OAuth clouds, each on its local emulator (built from
// the services' published documentation), over real HTTP: Box (a trash listed, restored, purged and
// emptied), Dropbox (deleted files restored; deleting them for good is for team accounts only),
// OneDrive (a recycle bin Microsoft Graph does not list); and the clean-up's "freed" figure on Box,
// whose deletions go to its trash.
describe('explorer on OAuth clouds: deleted files, search, and what a clean-up frees', () => {
  let app: OAuthTestApp;
  let user: SignedUpUser;
  const call = caller(() => app.t);
  let box: Cloud;
  let dropbox: Cloud;
  let onedrive: Cloud;
  const boxUser = 'box-owner@example.com';
  const dbxUser = 'dropbox-owner@example.com';
  const odUser = 'onedrive-owner@example.com';

  beforeAll(async () => {
    app = await startOAuthTestApp({ env: { SKYFERRY_WORKERS: '1' } });
    user = await app.t.signUp();
    const { emu } = app;
    emu.box.seed(boxUser, '/Docs/report.txt', Buffer.from('report'));
    emu.box.seed(boxUser, '/Docs/old/a.txt', Buffer.from('a'));
    emu.dropbox.seed(dbxUser, '/Work/plan.txt', Buffer.from('the plan'));
    emu.oneDrive.seed(odUser, '/Music/Invoice song.mp3', Buffer.from('la'));
    box = await connectOAuth(app, user.headers, 'box', boxUser, 'Box');
    dropbox = await connectOAuth(app, user.headers, 'dropbox', dbxUser, 'Dropbox');
    onedrive = await connectOAuth(app, user.headers, 'onedrive', odUser, 'OneDrive');
  }, 120_000);
  afterAll(async () => {
    await app?.close();
  });

  const post = <T>(url: string, body: Record<string, unknown>) =>
    call<T>('POST', url, { headers: { ...user.headers, 'accept-language': 'fr' }, body });
  const trashOf = async (cloud: Cloud) => {
    const r = await post<TrashListData>('/api/cloud-manager/trash/list', { cloud_id: cloud.id });
    expect(r.code, r.msg).toBe(0);
    return r.data;
  };

  it('Box: deleted items are in its trash with where they were, restored there, deleted for good, emptied', async () => {
    const del = await post<{ trashed: boolean }>('/api/cloud-manager/delete', {
      cloud_id: box.id,
      files: ['/Docs/report.txt', '/Docs/old'],
    });
    expect(del.data.trashed).toBe(true);
    const listed = await trashOf(box);
    expect(listed).toMatchObject({ supported: true, can_purge: true, can_empty: true, page_token: null });
    const byName = new Map(listed.items.map((i) => [i.name, i]));
    expect(byName.get('report.txt')).toMatchObject({ original_path: '/Docs/report.txt', type: 1, size: 6 });
    expect(byName.get('old')).toMatchObject({ original_path: '/Docs/old', type: 0 });

    const restored = await post<TrashRestoreData>('/api/cloud-manager/trash/restore', {
      cloud_id: box.id,
      ids: [byName.get('report.txt')?.id],
    });
    expect(restored.data).toMatchObject({ restored: [{ path: '/Docs/report.txt', size: 6 }], failed: [] });
    expect(app.emu.box.filesUnder(boxUser, '/Docs').get('/report.txt')?.toString()).toBe('report');

    const purged = await post<{ deleted: string[] }>('/api/cloud-manager/trash/delete', {
      cloud_id: box.id,
      ids: [byName.get('old')?.id],
    });
    expect(purged.data.deleted).toEqual([byName.get('old')?.id]);
    await post('/api/cloud-manager/delete', { cloud_id: box.id, files: ['/Docs/report.txt'] });
    expect((await post('/api/cloud-manager/trash/empty', { cloud_id: box.id })).code).toBe(0);
    expect((await trashOf(box)).items).toEqual([]);
    expect(app.emu.box.trashOf(boxUser)).toEqual([]);
  });

  it('Dropbox: deleted files are restored where they were; deleting them for good or emptying is refused, as Dropbox offers neither to a personal account', async () => {
    await post('/api/cloud-manager/delete', { cloud_id: dropbox.id, files: ['/Work/plan.txt'] });
    const listed = await trashOf(dropbox);
    expect(listed).toMatchObject({ supported: true, can_purge: false, can_empty: false });
    expect(listed.items).toEqual([expect.objectContaining({ id: '/Work/plan.txt', type: 1, size: 8 })]);
    const purge = await post('/api/cloud-manager/trash/delete', { cloud_id: dropbox.id, ids: ['/Work/plan.txt'] });
    expect([purge.status, purge.code]).toEqual([403, Code.FORBIDDEN]);
    const empty = await post('/api/cloud-manager/trash/empty', { cloud_id: dropbox.id });
    expect([empty.status, empty.code]).toEqual([403, Code.FORBIDDEN]);
    const restored = await post<TrashRestoreData>('/api/cloud-manager/trash/restore', {
      cloud_id: dropbox.id,
      ids: ['/Work/plan.txt', '/Work/never-there.txt'],
    });
    expect(restored.data.restored.map((f) => f.path)).toEqual(['/Work/plan.txt']);
    expect(restored.data.failed).toEqual([
      expect.objectContaining({ id: '/Work/never-there.txt', code: Code.NOT_FOUND }),
    ]);
    expect(app.emu.dropbox.filesUnder(dbxUser, '/Work').get('/plan.txt')?.toString()).toBe('the plan');
  });

  it('OneDrive: its trash is its own website’s (Graph lists none); search goes through Graph', async () => {
    const listed = await trashOf(onedrive);
    expect(listed).toEqual({
      supported: false,
      service_trash: true,
      can_purge: false,
      can_empty: false,
      items: [],
      page_token: null,
    });
    const before = app.emu.oneDrive.requests.length;
    const found = await post<SearchFilesData>('/api/cloud-manager/search', {
      cloud_id: onedrive.id,
      path: '/',
      query: 'invoice',
    });
    expect(found.data).toMatchObject({ items: [{ path: '/Music/Invoice song.mp3', size: 2 }], page_token: null });
    expect(app.emu.oneDrive.requests.slice(before).some((r) => r.path.includes('/search('))).toBe(true);
  });

  it('Box and Dropbox: search goes through the service’s own search', async () => {
    app.emu.box.seed(boxUser, '/Notes/Plan B.txt', Buffer.from('b'));
    for (const [cloud, emu, expected] of [
      [box, app.emu.box, '/Notes/Plan B.txt'],
      [dropbox, app.emu.dropbox, '/Work/plan.txt'],
    ] as const) {
      const before = emu.requests.length;
      const found = await post<SearchFilesData>('/api/cloud-manager/search', { cloud_id: cloud.id, query: 'plan' });
      expect(found.code, found.msg).toBe(0);
      expect(found.data).toMatchObject({ items: [{ path: expected }], page_token: null });
      expect(emu.requests.slice(before).some((r) => /\/search/.test(r.path))).toBe(true);
    }
  });

  it('a clean-up on Box frees nothing while what it deleted is in Box’s trash, and says how much went there', async () => {
    const photo = randomBytes(50_000);
    app.emu.box.seed(boxUser, '/Pics/beach.jpg', photo);
    app.emu.box.seed(boxUser, '/Pics/Backup/beach.jpg', photo);
    const run = await call<{ task_id: string }>('POST', '/api/cleanup/run', {
      headers: user.headers,
      body: { cloud_id: box.id, path: '/Pics' },
    });
    expect(run.code, run.msg).toBe(0);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const poll = await call<CleanupTask>('GET', `/api/cleanup/poll-progress/${run.data.task_id}`, {
        headers: user.headers,
      });
      if (poll.data.status !== 1) break;
      if (Date.now() > deadline) throw new Error('scan stuck');
      await sleep(50);
    }
    const groups = await call<DuplicateFilesPage>('GET', `/api/cleanup/duplicate-files?task_id=${run.data.task_id}`, {
      headers: user.headers,
    });
    const copy = groups.data.items[0]?.files.find((f) => f.path === '/Pics/Backup/beach.jpg');
    expect(copy).toBeDefined();
    const res = await call<DeleteCleanupData>('DELETE', '/api/cleanup/duplicate-files', {
      headers: user.headers,
      body: { task_id: run.data.task_id, ids: [copy?.id] },
    });
    expect(res.code, res.msg).toBe(0);
    expect(res.data).toMatchObject({ deleted: 1, freed: 0, trashed: true, in_trash: photo.length, failed: [] });
    expect(app.emu.box.trashOf(boxUser).map((i) => i.name)).toEqual(['beach.jpg']);
  });
});
