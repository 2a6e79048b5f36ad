import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Code,
  SEARCH_FOLDERS_PER_CALL,
  type Cloud,
  type CloudInfoData,
  type SearchFilesData,
  type TrashDeleteData,
  type TrashListData,
  type TrashRestoreData,
} from '@skyferry/contract';
import {
  startApacheWebdav,
  startNextcloudEmulator,
  type ApacheWebdavServer,
  type NextcloudEmulator,
} from '@skyferry/testing';
import { startTestApp, type SignedUpUser, type TestApp } from './support/app.ts';
import { caller, connectLocal, writeTree } from './support/tasks.ts';

// The explorer's trash view, search and space, over real HTTP against a local folder, a Nextcloud
// (emulator over Apache mod_dav) and a plain WebDAV server (Apache mod_dav: no trash).
describe('explorer: deleted files, search and space', () => {
  let t: TestApp;
  const call = caller(() => t);
  let user: SignedUpUser;
  let other: SignedUpUser;
  let nc: NextcloudEmulator;
  let dav: ApacheWebdavServer;
  let laptop: Cloud;
  let laptopDir: string;
  let nextcloud: Cloud;
  let plain: Cloud;

  beforeAll(async () => {
    [t, nc, dav] = await Promise.all([startTestApp(), startNextcloudEmulator(), startApacheWebdav()]);
    user = await t.signUp();
    other = await t.signUp();
    laptopDir = t.makeLocalFolder('laptop');
    laptop = await connectLocal(call, user.headers, laptopDir, 'Laptop');
    const add = async (alias: string, credentials: Record<string, unknown>) => {
      const r = await call<Cloud>('POST', '/api/clouds', {
        headers: user.headers,
        body: { cloud_name: 'webdav', alias, credentials },
      });
      expect(r.code).toBe(0);
      return r.data;
    };
    nextcloud = await add('Nextcloud', { url: nc.url, username: nc.username, password: nc.password });
    plain = await add('NAS', { url: dav.url, username: dav.username, password: dav.password, vendor: 'other' });
  });
  afterAll(async () => {
    await Promise.all([t?.close(), nc?.stop(), dav?.stop()]);
  });

  const post = <T>(url: string, body: Record<string, unknown>, who: SignedUpUser = user) =>
    call<T>('POST', url, { headers: { ...who.headers, 'accept-language': 'de' }, body });
  const upload = async (cloud: Cloud, path: string, content: string) => {
    const res = await t.app.inject({
      method: 'PUT',
      url: `/api/cloud-manager/files?cloud_id=${cloud.id}&path=${encodeURIComponent(path)}`,
      headers: { ...user.headers, 'content-type': 'application/octet-stream' },
      payload: content,
    });
    expect(res.statusCode).toBe(200);
  };

  it('a local folder: deleted items are listed, restored where they were, deleted for good, emptied', async () => {
    writeTree(laptopDir, { 'Docs/report.txt': 'report', 'Docs/old/a.txt': 'a', 'b.txt': 'b' });
    const del = await post<{ trashed: boolean }>('/api/cloud-manager/delete', {
      cloud_id: laptop.id,
      files: ['/Docs/report.txt', '/Docs/old', '/b.txt'],
    });
    expect(del.data.trashed).toBe(true);
    const listed = await post<TrashListData>('/api/cloud-manager/trash/list', { cloud_id: laptop.id });
    expect(listed.data).toMatchObject({ supported: true, service_trash: true, can_purge: true, can_empty: true });
    const byName = new Map(listed.data.items.map((i) => [i.name, i]));
    expect([...byName.keys()].sort()).toEqual(['b.txt', 'old', 'report.txt']);
    expect(byName.get('report.txt')).toMatchObject({ original_path: '/Docs/report.txt', type: 1, size: 6 });
    expect(byName.get('old')).toMatchObject({ original_path: '/Docs/old', type: 0 });
    expect(byName.get('b.txt')?.deleted_at).toBeGreaterThan(Date.now() - 60_000);

    const restored = await post<TrashRestoreData>('/api/cloud-manager/trash/restore', {
      cloud_id: laptop.id,
      ids: [byName.get('report.txt')?.id, byName.get('old')?.id, 'not-a-trash-item'],
    });
    expect(restored.code).toBe(0);
    expect(restored.data.restored.map((f) => f.path).sort()).toEqual(['/Docs/old', '/Docs/report.txt']);
    expect(restored.data.failed).toEqual([
      { id: 'not-a-trash-item', code: Code.NOT_FOUND, msg: 'Der Pfad existiert nicht.' },
    ]);
    expect(readFileSync(join(laptopDir, 'Docs/old/a.txt'), 'utf8')).toBe('a');
    // The explorer's listing shows them again at once (its cache of the folder was dropped).
    const docs = await post<{ items: Array<{ name: string }> }>('/api/cloud-manager/list', {
      cloud_id: laptop.id,
      path: '/Docs',
    });
    expect(docs.data.items.map((i) => i.name).sort()).toEqual(['old', 'report.txt']);

    const purged = await post<TrashDeleteData>('/api/cloud-manager/trash/delete', {
      cloud_id: laptop.id,
      ids: [byName.get('b.txt')?.id],
    });
    expect(purged.data).toEqual({ deleted: [byName.get('b.txt')?.id], failed: [] });
    await post('/api/cloud-manager/delete', { cloud_id: laptop.id, files: ['/Docs/old'] });
    expect((await post('/api/cloud-manager/trash/empty', { cloud_id: laptop.id })).code).toBe(0);
    expect((await post<TrashListData>('/api/cloud-manager/trash/list', { cloud_id: laptop.id })).data.items).toEqual(
      [],
    );
    expect(existsSync(join(laptopDir, 'Docs/old'))).toBe(false);
  });

  it('Nextcloud: its trashbin is listed and restored through its own DAV endpoint', async () => {
    await upload(nextcloud, '/Work/plan.txt', 'plan');
    const del = await post<{ trashed: boolean }>('/api/cloud-manager/delete', {
      cloud_id: nextcloud.id,
      files: ['/Work/plan.txt'],
    });
    expect(del.data.trashed).toBe(true);
    const listed = await post<TrashListData>('/api/cloud-manager/trash/list', { cloud_id: nextcloud.id });
    const item = listed.data.items.find((i) => i.name === 'plan.txt');
    expect(item).toMatchObject({ original_path: '/Work/plan.txt', type: 1, size: 4 });
    const restored = await post<TrashRestoreData>('/api/cloud-manager/trash/restore', {
      cloud_id: nextcloud.id,
      ids: [item?.id],
    });
    expect(restored.data.restored.map((f) => f.path)).toEqual(['/Work/plan.txt']);
    expect(readFileSync(join(nc.dir, 'Work/plan.txt'), 'utf8')).toBe('plan');
  });

  it('a cloud without a trash says so; its restore answers 403 in the caller language; others’ clouds are not found', async () => {
    const listed = await post<TrashListData>('/api/cloud-manager/trash/list', { cloud_id: plain.id });
    // A plain WebDAV server deletes for good: it keeps no trash, of its own or readable.
    expect(listed.data).toEqual({
      supported: false,
      service_trash: false,
      can_purge: false,
      can_empty: false,
      items: [],
      page_token: null,
    });
    const restore = await post('/api/cloud-manager/trash/restore', { cloud_id: plain.id, ids: ['x'] });
    expect([restore.status, restore.code]).toEqual([403, Code.FORBIDDEN]);
    expect(restore.msg).not.toMatch(/^This /);
    const empty = await post('/api/cloud-manager/trash/empty', { cloud_id: plain.id });
    expect(empty.code).toBe(Code.FORBIDDEN);
    const stranger = await post('/api/cloud-manager/trash/list', { cloud_id: laptop.id }, other);
    expect(stranger.status).toBe(404);
    const bad = await post('/api/cloud-manager/trash/restore', { cloud_id: laptop.id, ids: [] });
    expect(bad.status).toBe(400);
  });

  it('searches a cloud by name (case and accents ignored), walking its folders in steps', async () => {
    const tree: Record<string, string> = {
      'Photos/Été 2024/plage.jpg': 'x',
      'Photos/Invoice-old.pdf': 'x',
      'Work/Invoices/INVOICE 3.pdf': 'x',
      'Work/notes.txt': 'x',
    };
    // More folders than one call reads, so the walk takes several steps.
    for (let i = 0; i < SEARCH_FOLDERS_PER_CALL + 20; i++) tree[`Many/f${i}/x.txt`] = 'x';
    tree['Many/f7/deep invoice.txt'] = 'x';
    writeTree(laptopDir, tree);
    const found: string[] = [];
    let token: string | null = null;
    let steps = 0;
    let scanned = 0;
    do {
      const r: { code: number; data: SearchFilesData } = await post<SearchFilesData>('/api/cloud-manager/search', {
        cloud_id: laptop.id,
        path: '/',
        query: 'invoice',
        page_token: token,
      });
      expect(r.code).toBe(0);
      found.push(...r.data.items.map((i) => i.path));
      expect(r.data.scanned).toBeGreaterThan(scanned);
      scanned = r.data.scanned;
      token = r.data.page_token;
      steps += 1;
    } while (token);
    expect(steps).toBeGreaterThan(1);
    expect(found.sort()).toEqual([
      '/Many/f7/deep invoice.txt',
      '/Photos/Invoice-old.pdf',
      '/Work/Invoices',
      '/Work/Invoices/INVOICE 3.pdf',
    ]);
    const accents = await post<SearchFilesData>('/api/cloud-manager/search', {
      cloud_id: laptop.id,
      path: '/Photos',
      query: 'ete',
    });
    expect(accents.data.items.map((i) => i.path)).toEqual(['/Photos/Été 2024']);
    expect(accents.data.page_token).toBeNull();

    for (const body of [
      { cloud_id: laptop.id, query: '' },
      { cloud_id: laptop.id, query: 'a', page_token: 'not a token' },
    ]) {
      const r = await post('/api/cloud-manager/search', body);
      expect([r.status, r.code]).toEqual([400, Code.BAD_REQUEST]);
    }
    const missing = await post('/api/cloud-manager/search', { cloud_id: laptop.id, path: '/nope', query: 'a' });
    expect(missing.status).toBe(404);
  });

  it('space: says whether the service reported it', async () => {
    const local = await post<CloudInfoData>('/api/cloud-manager/info', { cloud_id: laptop.id });
    expect(local.data.reported).toBe(true);
    expect(local.data.space_amount).toBeGreaterThan(0);
    const ncInfo = await post<CloudInfoData>('/api/cloud-manager/info', { cloud_id: nextcloud.id });
    expect(ncInfo.data).toMatchObject({ reported: true, space_amount: nc.quotaBytes });
  });
});
