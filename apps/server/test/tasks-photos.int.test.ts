/**
 * Tasks into a photos cloud over HTTP: Google Photos (the local emulator of the Library API, built
 * from Google's published documentation, with the emulated OAuth server) takes only pictures and
 * videos. Selected files of other types are refused; a folder's other files are left out.
 */
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, type Cloud, type CreateTaskData, type ServerTask } from '@skyferry/contract';
import type { SignedUpUser } from './support/app.ts';
import { connectOAuth, startOAuthTestApp, type OAuthTestApp } from './support/oauth.ts';
import { caller, connectLocal, waitForState, writeTree } from './support/tasks.ts';

describe('tasks into a photos cloud (Google Photos, emulated)', () => {
  let app: OAuthTestApp;
  let user: SignedUpUser;
  let photos: Cloud;
  let laptop: Cloud;
  const call = caller(() => app.t);

  beforeAll(async () => {
    app = await startOAuthTestApp({ env: { SKYFERRY_WORKERS: '1' } });
    user = await app.t.signUp();
    photos = await connectOAuth(app, user.headers, 'google_photos', 'pics@example.com', 'Pictures');
    const dir = app.t.makeLocalFolder('laptop');
    const picture = (background: string) => sharp({ create: { width: 40, height: 30, channels: 3, background } });
    writeTree(dir, {
      'Camera/beach.jpg': await picture('#d08030').jpeg().toBuffer(),
      'Camera/shot.png': await picture('#3080d0').png().toBuffer(),
      'Camera/notes.txt': 'not a picture',
      'Camera/report.pdf': '%PDF-1.4 not a picture either',
    });
    laptop = await connectLocal(call, user.headers, dir, 'Laptop');
  }, 120_000);

  afterAll(async () => {
    await app?.close();
  });

  const create = (body: Record<string, unknown>) =>
    call<CreateTaskData>('POST', '/api/tasks', { headers: user.headers, body });

  it('refuses selected files that are not pictures or videos, and a filter that leaves none', async () => {
    const text = await create({
      task_type: 0,
      from_cloud: { cloud_id: laptop.id, paths: ['/Camera/beach.jpg', '/Camera/notes.txt'] },
      to_cloud: { cloud_id: photos.id, path: '/' },
    });
    expect(text).toMatchObject({
      status: 400,
      code: Code.BAD_REQUEST,
      msg: 'Only pictures and videos can be migrated to a photos cloud.',
    });
    const pdfOnly = await create({
      task_type: 1,
      sync_mode: 'one_way',
      from_cloud: { cloud_id: laptop.id, paths: ['/Camera'] },
      to_cloud: { cloud_id: photos.id, path: '/' },
      filter: { mode: 'include', categories: ['pdf', 'text'] },
    });
    expect(pdfOnly).toMatchObject({ status: 400, code: Code.BAD_REQUEST });
  });

  it('copies only the pictures of a folder', async () => {
    const res = await create({
      task_type: 1,
      sync_mode: 'one_way',
      from_cloud: { cloud_id: laptop.id, paths: ['/Camera'] },
      to_cloud: { cloud_id: photos.id, path: '/' },
    });
    expect(res.code).toBe(0);
    expect((res.data.task as ServerTask).filter).toEqual({ mode: 'include', categories: ['picture', 'video'] });
    const { task } = await waitForState(call, user.headers, res.data.task?.id ?? '', undefined, 60_000);
    expect(task.state, JSON.stringify(task.result_list)).toBe(0);
    expect(task.result).toMatchObject({ added: 2, failed: 0 });
    const opened = await app.t.ctx.clouds.open({ kind: 'user', userId: user.uid }, photos.id);
    try {
      const names = (await opened.provider.list('/')).entries
        .filter((e) => e.kind === 'file')
        .map((e) => e.name)
        .sort();
      expect(names).toEqual(['beach.jpg', 'shot.png']);
    } finally {
      await opened.provider.close?.();
    }
  });
});
