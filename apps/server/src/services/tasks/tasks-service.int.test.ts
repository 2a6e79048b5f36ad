import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { ALL_CLOUD_FLAGS, CLOUD_KIND_INFO, Code, READ_ONLY_CLOUD_FLAGS, type CreateTaskBody } from '@skyferry/contract';
import { freshDb } from '@skyferry/db/testing';
import { MemoryProvider, MemoryStore } from '@skyferry/engine/testing';
import { DatabaseJobQueue } from '@skyferry/queue';
import { ApiError } from '../../http/errors.ts';
import { DatabaseProgressStore } from '../../repositories/task-progress.ts';
import { TasksRepository } from '../../repositories/tasks.ts';
import type { CloudRecord, CloudsService } from '../clouds.ts';
import type { UsersService } from '../users.ts';
import { TaskRunner } from './runner.ts';
import { TasksService, type TaskJob } from './tasks-service.ts';

/**
 * The creation checks that need clouds the test servers cannot be: a photos cloud (Google Photos
 * needs OAuth) and a cloud nearly full. Clouds are in-memory providers behind a stand-in for the
 * clouds service; the database, repository and queue are real.
 */
function record(id: string, kind: string, flags = ALL_CLOUD_FLAGS): CloudRecord {
  return {
    id,
    cloudId: id,
    kind,
    cloudAccount: `${id}@example.com`,
    alias: '',
    space: 0,
    usedSpace: 0,
    status: 'authorized',
    sort: 0,
    flags,
    owner: { userId: 'u1' },
    createdAt: 0,
    updatedAt: 0,
    lastUsedAt: 0,
  };
}

async function expectApiError(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError');
}

describe('TasksService creation checks', () => {
  let fresh: Awaited<ReturnType<typeof freshDb>>;
  let service: TasksService;
  let queue: DatabaseJobQueue<TaskJob>;
  const stores = new Map<string, MemoryStore>();
  const records = new Map<string, CloudRecord>();
  let cloudsStub: CloudsService;

  beforeAll(async () => {
    fresh = await freshDb('sqlite');
    cloudsStub = {
      async open(_identity: unknown, id: string) {
        const cloud = records.get(id);
        const store = stores.get(id);
        if (!cloud || !store) throw new ApiError(Code.NOT_FOUND, 'not_found');
        return { cloud, provider: new MemoryProvider({ store, kind: cloud.kind }) };
      },
      async listOwned() {
        return [...records.values()];
      },
    } as unknown as CloudsService;
    const clouds = cloudsStub;
    const users = { isPremium: async () => true } as unknown as UsersService;
    queue = new DatabaseJobQueue<TaskJob>(fresh.db, { name: 'tasks' });
    service = new TasksService({
      repo: new TasksRepository(fresh.db.kysely),
      progress: new DatabaseProgressStore(fresh.db.kysely),
      queue,
      clouds,
      users,
      billingMode: 'off',
      log: pino({ level: 'silent' }),
    });
    const drive = new MemoryStore();
    drive.writeFile('/Camera/beach.jpg', Buffer.alloc(3000, 1));
    drive.writeFile('/Camera/clip.mp4', Buffer.alloc(2000, 2));
    drive.writeFile('/Camera/notes.pdf', Buffer.alloc(500, 3));
    drive.writeFile('/report.docx', Buffer.alloc(100, 4));
    stores.set('drive', drive);
    records.set('drive', record('drive', 'google_drive'));
    stores.set('photos', new MemoryStore());
    records.set('photos', record('photos', 'google_photos', CLOUD_KIND_INFO.google_photos.flags));
    stores.set('small', new MemoryStore({ quota: 4000 }));
    stores.get('small')?.writeFile('/old.bin', Buffer.alloc(1000, 5));
    records.set('small', record('small', 'webdav'));
    stores.set('readonly', new MemoryStore());
    records.set('readonly', record('readonly', 'google_drive_shared', READ_ONLY_CLOUD_FLAGS));
  });

  afterAll(async () => {
    await queue.close();
    await fresh.cleanup();
  });

  const body = (from: string, paths: string[], to: string, extra: Partial<CreateTaskBody> = {}): CreateTaskBody => ({
    task_type: 0,
    from_cloud: { cloud_id: from, paths },
    to_cloud: { cloud_id: to, path: '/Skyferry' },
    ...extra,
  });

  it('lets only pictures and videos go to a photos cloud', async () => {
    const doc = await expectApiError(service.create('u1', body('drive', ['/report.docx'], 'photos'), 'UTC'));
    expect([doc.code, doc.key]).toEqual([Code.BAD_REQUEST, 'photos_only_media']);
    const pdfOnly = await expectApiError(
      service.create(
        'u1',
        body('drive', ['/Camera'], 'photos', { filter: { mode: 'include', categories: ['pdf'] } }),
        'UTC',
      ),
    );
    expect(pdfOnly.key).toBe('photos_only_media');
    const noMedia = await expectApiError(
      service.create(
        'u1',
        body('drive', ['/Camera'], 'photos', { filter: { mode: 'exclude', categories: ['picture', 'video'] } }),
        'UTC',
      ),
    );
    expect(noMedia.key).toBe('photos_only_media');
    // A folder is accepted; only its pictures and videos are planned.
    const dry = await service.create('u1', body('drive', ['/Camera'], 'photos', { dry_run: true }), 'UTC');
    expect(
      dry.plan?.items
        .filter((i) => i.action === 'copy')
        .map((i) => i.source_path)
        .sort(),
    ).toEqual(['/Camera/beach.jpg', '/Camera/clip.mp4']);
    const created = await service.create('u1', body('drive', ['/Camera'], 'photos'), 'UTC');
    expect(created.task?.filter).toEqual({ mode: 'include', categories: ['picture', 'video'] });
    const onlyVideos = await service.create(
      'u1',
      body('drive', ['/Camera'], 'photos', { filter: { mode: 'include', categories: ['video', 'pdf'] } }),
      'UTC',
    );
    expect(onlyVideos.task?.filter).toEqual({ mode: 'include', categories: ['video'] });
  });

  it('asks to confirm when the target lacks space (409004 with what the prompt shows), then creates', async () => {
    const prompt = await expectApiError(service.create('u1', body('drive', ['/Camera'], 'small'), 'UTC'));
    expect(prompt.code).toBe(Code.CONFIRM_INSUFFICIENT_SPACE);
    expect(prompt.status).toBe(409);
    expect(prompt.key).toBe('insufficient_space');
    expect(prompt.params).toEqual({ cloud_name: 'WebDAV (small@example.com)' });
    expect(prompt.data).toEqual({
      side: 'target',
      cloud_id: 'small',
      cloud_name: 'WebDAV (small@example.com)',
      needed: 5500,
      available: 3000,
    });
    const confirmed = await service.create(
      'u1',
      body('drive', ['/Camera'], 'small', { confirm_insufficient_space: true }),
      'UTC',
    );
    expect(confirmed.task?.state).toBe(8);
    // Enough room: no prompt.
    const fits = await service.create('u1', body('drive', ['/report.docx'], 'small'), 'UTC');
    expect(fits.task?.state).toBe(8);
  });

  it('answers a dry run plan page by action, offset and limit, with whole totals (the preview browses it)', async () => {
    const all = await service.create(
      'u1',
      body('drive', ['/Camera', '/report.docx'], 'small', { dry_run: true }),
      'UTC',
    );
    const copies = (all.plan?.items ?? []).filter((i) => i.action === 'copy').map((i) => i.source_path);
    expect(copies.sort()).toEqual(['/Camera/beach.jpg', '/Camera/clip.mp4', '/Camera/notes.pdf', '/report.docx']);
    expect(all.plan?.total_items).toBe(all.plan?.items.length);
    const page = await service.create(
      'u1',
      body('drive', ['/Camera', '/report.docx'], 'small', {
        dry_run: true,
        plan_query: { actions: ['copy'], offset: 1, limit: 2 },
      }),
      'UTC',
    );
    expect(page.plan?.total_items).toBe(4);
    expect(page.plan?.items.map((i) => i.action)).toEqual(['copy', 'copy']);
    const inOrder = (all.plan?.items ?? []).filter((i) => i.action === 'copy').map((i) => i.source_path);
    expect(page.plan?.items.map((i) => i.source_path)).toEqual(inOrder.slice(1, 3));
    expect(page.plan?.summary).toEqual(all.plan?.summary);
    const none = await service.create(
      'u1',
      body('drive', ['/Camera'], 'small', { dry_run: true, plan_query: { actions: ['delete'] } }),
      'UTC',
    );
    expect([none.plan?.items, none.plan?.total_items]).toEqual([[], 0]);
  });

  it('stops a run that fills the target in state 6 with the bytes still needed', async () => {
    const runner = new TaskRunner({
      repo: new TasksRepository(fresh.db.kysely),
      db: fresh.db.kysely,
      progress: new DatabaseProgressStore(fresh.db.kysely),
      clouds: cloudsStub,
      users: { isPremium: async () => true, get: async () => undefined } as unknown as UsersService,
      mailer: { send: async () => ({ messageId: '', deliveredTo: 'none' }), close: () => undefined },
      billingMode: 'off',
      appUrl: 'http://127.0.0.1',
      log: pino({ level: 'silent' }),
    });
    stores.set('tiny', new MemoryStore({ quota: 4000 }));
    records.set('tiny', record('tiny', 'webdav'));
    const created = await service.create(
      'u1',
      body('drive', ['/Camera'], 'tiny', { confirm_insufficient_space: true }),
      'UTC',
    );
    const id = created.task?.id ?? '';
    await queue.process(runner.handle, { concurrency: 2 });
    const repo = new TasksRepository(fresh.db.kysely);
    let row = await repo.getById(id);
    for (let i = 0; i < 200 && row && ![0, 3, 5, 6].includes(row.state); i++) {
      await new Promise((r) => setTimeout(r, 25));
      row = await repo.getById(id);
    }
    expect(row?.state).toBe(6);
    expect(JSON.parse(row?.result ?? '{}')).toMatchObject({ outcome: 'insufficient_space' });
    expect(row?.needed_size).toBeGreaterThan(0);
    const detail = await service.detail('u1', id);
    expect(detail.state).toBe(6);
    expect(detail.result_total).toBeGreaterThan(0);
  });

  it('refuses a read-only target', async () => {
    const err = await expectApiError(service.create('u1', body('drive', ['/Camera'], 'readonly'), 'UTC'));
    expect([err.code, err.status]).toEqual([Code.FORBIDDEN, 403]);
  });
});
