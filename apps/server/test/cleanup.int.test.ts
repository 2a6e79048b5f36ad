import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  Code,
  type Cloud,
  type CleanupTask,
  type DeleteCleanupData,
  type DuplicateFilesPage,
  type EmptyFoldersPage,
  type LargeFilesPage,
} from '@skyferry/contract';
import { STACKS as CONFIGS, startTestApp, type SignedUpUser, type TestApp } from './support/app.ts';
import { LOOPBACK_CLOUDS_ENV, VisitorClouds } from './support/visitor-clouds.ts';
import { CloudFaults, caller, connectLocal, writeTree } from './support/tasks.ts';

const KB = 1024;
const OLD = new Date('2023-01-01T00:00:00Z');
const NEW = new Date('2024-06-01T00:00:00Z');

function touch(file: string, when: Date): void {
  utimesSync(file, when, when);
}

/** Everything in the folder, trash left out, as relative paths (folders end with /). */
function tree(root: string, prefix = ''): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .filter((e) => e.name !== '.skyferry-trash')
    .flatMap((e) =>
      e.isDirectory()
        ? [`${prefix}${e.name}/`, ...tree(join(root, e.name), `${prefix}${e.name}/`)]
        : [`${prefix}${e.name}`],
    )
    .sort();
}

for (const cfg of CONFIGS) {
  describe(`clean-up over HTTP [${cfg.label}]`, () => {
    let t: TestApp;
    const call = caller(() => t);
    const faults = new CloudFaults();
    let user: SignedUpUser;
    let dir: string;
    let cloud: Cloud;

    const photo = randomBytes(200 * KB);
    const doc = randomBytes(30 * KB);
    const movie = randomBytes(600 * KB);

    beforeAll(async () => {
      const env: Record<string, string> = {
        SKYFERRY_WORKERS: '1',
        SKYFERRY_TASK_LEASE_MS: '3000',
        ...LOOPBACK_CLOUDS_ENV,
      };
      if (cfg.redis) {
        env.REDIS_URL = inject('redisUrl');
        env.SKYFERRY_REDIS_PREFIX = `c-${randomUUID().slice(0, 8)}`;
      }
      t = await startTestApp({ dialect: cfg.dialect, env });
      faults.install(t.ctx.clouds);
      user = await t.signUp();
      dir = t.makeLocalFolder('drive');
      writeTree(dir, {
        'Photos/beach.jpg': photo,
        'Photos/Backup/beach.jpg': photo,
        'Old/beach copy.jpg': photo,
        'Docs/report.pdf': doc,
        'Docs/Archive/report.pdf': doc,
        'Docs/notes.txt': 'unique notes',
        'Video/movie.mp4': movie,
        'Video/clip.mov': randomBytes(500 * KB),
        'Music/song.mp3': randomBytes(450 * KB),
      });
      touch(join(dir, 'Photos/beach.jpg'), NEW);
      touch(join(dir, 'Photos/Backup/beach.jpg'), OLD);
      touch(join(dir, 'Old/beach copy.jpg'), new Date('2023-06-01T00:00:00Z'));
      touch(join(dir, 'Docs/report.pdf'), OLD);
      touch(join(dir, 'Docs/Archive/report.pdf'), NEW);
      for (const d of ['Empty/A/B', 'Empty/C', 'Photos/Unused', 'Lonely']) mkdirSync(join(dir, d), { recursive: true });
      cloud = await connectLocal(call, user.headers, dir, 'Drive');
    }, 60_000);
    afterAll(async () => {
      await t?.close();
    });

    const headers = () => user.headers;

    async function startScan(body: Record<string, unknown>, h = headers()): Promise<string> {
      const res = await call<{ task_id: string }>('POST', '/api/cleanup/run', { headers: h, body });
      expect(res.code, res.msg).toBe(0);
      return res.data.task_id;
    }

    async function waitScan(id: string, h = headers()): Promise<{ task: CleanupTask; seen: number[] }> {
      const seen: number[] = [];
      const deadline = Date.now() + 30_000;
      for (;;) {
        const res = await call<CleanupTask>('GET', `/api/cleanup/poll-progress/${id}`, { headers: h });
        if (res.code !== 0) throw new Error(`poll ${id}: ${res.status} ${res.msg}`);
        if (seen[seen.length - 1] !== res.data.status) seen.push(res.data.status);
        if (res.data.status !== 1) return { task: res.data, seen };
        if (Date.now() > deadline) throw new Error(`scan ${id} stuck`);
        await sleep(25);
      }
    }

    let taskId: string;

    it('runs a scan as a job and reports the task with the spec fields and result counts', async () => {
      taskId = await startScan({ cloud_id: cloud.id, large_threshold: 400 * KB });
      const { task, seen } = await waitScan(taskId);
      expect(seen[seen.length - 1]).toBe(0);
      expect(task).toMatchObject({
        task_id: taskId,
        cloud_id: cloud.id,
        path: '/',
        total_count: 9,
        imode: 7,
        large_threshold: 400 * KB,
        free_del_num: -1,
        status: 0,
        filename: '',
        phase: null,
        has_trash: true,
        limited: false,
        error: null,
        error_count: 0,
      });
      expect(task.runtime).toBeGreaterThanOrEqual(0);
      expect(task.duplicate).toEqual({
        count: 5,
        group_count: 2,
        size: 2 * photo.length + doc.length,
        image: 3,
        video: 0,
        audio: 0,
        document: 2,
        other: 0,
      });
      expect(task.large).toEqual({
        count: 3,
        size: movie.length + 500 * KB + 450 * KB,
        image: 0,
        video: 2,
        audio: 1,
        document: 0,
        other: 0,
      });
      // Empty/A/B, Empty/A, Empty/C, Empty, Photos/Unused, Lonely.
      expect(task.empty).toEqual({ count: 6 });
      // Only what had to be compared was read: the three photos and two documents.
      expect(task.bytes_read).toBe(3 * photo.length + 2 * doc.length);
    });

    it('GET /api/cleanup/task answers the latest scan, of a cloud when asked, or null', async () => {
      const latest = await call<CleanupTask>('GET', '/api/cleanup/task', { headers: headers() });
      expect(latest.data.task_id).toBe(taskId);
      const ofCloud = await call<CleanupTask>('GET', `/api/cleanup/task?cloud_id=${cloud.id}`, { headers: headers() });
      expect(ofCloud.data.task_id).toBe(taskId);
      const none = await call<CleanupTask | null>('GET', '/api/cleanup/task?cloud_id=another', { headers: headers() });
      expect([none.code, none.data]).toEqual([0, null]);
      const stranger = await t.signUp();
      const theirs = await call<CleanupTask | null>('GET', '/api/cleanup/task', { headers: stranger.headers });
      expect(theirs.data).toBeNull();
    });

    it('lists empty folders top-most first with what they hold', async () => {
      const res = await call<EmptyFoldersPage>('GET', `/api/cleanup/empty-folders?task_id=${taskId}`, {
        headers: headers(),
      });
      expect(res.data).toMatchObject({ total: 3, page: 1, page_size: 20, limited: false, visible_total: 3 });
      expect(res.data.items.map((i) => [i.path, i.nested_count, i.name])).toEqual([
        ['/Empty', 3, 'Empty'],
        ['/Lonely', 0, 'Lonely'],
        ['/Photos/Unused', 0, 'Unused'],
      ]);
      const byName = await call<EmptyFoldersPage>(
        'GET',
        `/api/cleanup/empty-folders?task_id=${taskId}&sort_by=name&order=desc`,
        { headers: headers() },
      );
      expect(byName.data.items.map((i) => i.path)).toEqual(['/Photos/Unused', '/Lonely', '/Empty']);
      // The category filter applies here too: an empty folder holds no file type, so it is "other".
      const pictures = await call<EmptyFoldersPage>(
        'GET',
        `/api/cleanup/empty-folders?task_id=${taskId}&category=picture`,
        { headers: headers() },
      );
      expect([pictures.data.total, pictures.data.items]).toEqual([0, []]);
      const others = await call<EmptyFoldersPage>(
        'GET',
        `/api/cleanup/empty-folders?task_id=${taskId}&category=other`,
        {
          headers: headers(),
        },
      );
      expect(others.data.total).toBe(3);
    });

    it('lists duplicate groups with path, size, date and category, filtered and sorted', async () => {
      const res = await call<DuplicateFilesPage>('GET', `/api/cleanup/duplicate-files?task_id=${taskId}`, {
        headers: headers(),
      });
      expect(res.data.total).toBe(2);
      expect(res.data.items.map((g) => [g.size, g.category, g.files.map((f) => f.path)])).toEqual([
        [photo.length, 'picture', ['/Old/beach copy.jpg', '/Photos/Backup/beach.jpg', '/Photos/beach.jpg']],
        [doc.length, 'document', ['/Docs/Archive/report.pdf', '/Docs/report.pdf']],
      ]);
      expect(res.data.items[0]?.files[2]).toMatchObject({
        name: 'beach.jpg',
        size: photo.length,
        modified: NEW.getTime(),
        category: 'picture',
      });
      expect(res.data.items[0]?.hash).toMatch(/^(md5|sha1|sha256):[0-9a-f]+$/);
      // What keeping one copy of each group frees, over the whole result (not just this page).
      expect([res.data.surplus_count, res.data.surplus_size]).toEqual([3, 2 * photo.length + doc.length]);
      const onePerPage = await call<DuplicateFilesPage>(
        'GET',
        `/api/cleanup/duplicate-files?task_id=${taskId}&page_size=1&page=2`,
        { headers: headers() },
      );
      expect(onePerPage.data.items).toHaveLength(1);
      expect([onePerPage.data.surplus_count, onePerPage.data.surplus_size]).toEqual([3, 2 * photo.length + doc.length]);
      const asc = await call<DuplicateFilesPage>('GET', `/api/cleanup/duplicate-files?task_id=${taskId}&order=asc`, {
        headers: headers(),
      });
      expect(asc.data.items.map((g) => g.size)).toEqual([doc.length, photo.length]);
      const pictures = await call<DuplicateFilesPage>(
        'GET',
        `/api/cleanup/duplicate-files?task_id=${taskId}&category=picture`,
        { headers: headers() },
      );
      expect(pictures.data.items.map((g) => g.category)).toEqual(['picture']);
      expect([pictures.data.surplus_count, pictures.data.surplus_size]).toEqual([2, 2 * photo.length]);
      const videos = await call<DuplicateFilesPage>(
        'GET',
        `/api/cleanup/duplicate-files?task_id=${taskId}&category=video`,
        { headers: headers() },
      );
      expect([videos.data.total, videos.data.items]).toEqual([0, []]);
    });

    it('lists large files by size or date, either way, by category, and pages', async () => {
      const get = async (q: string) =>
        (
          await call<LargeFilesPage>('GET', `/api/cleanup/large-files?task_id=${taskId}${q}`, {
            headers: headers(),
          })
        ).data;
      expect((await get('')).items.map((i) => i.path)).toEqual([
        '/Video/movie.mp4',
        '/Video/clip.mov',
        '/Music/song.mp3',
      ]);
      expect((await get('&order=asc')).items.map((i) => i.path)).toEqual([
        '/Music/song.mp3',
        '/Video/clip.mov',
        '/Video/movie.mp4',
      ]);
      expect((await get('&category=audio')).items.map((i) => [i.path, i.category])).toEqual([
        ['/Music/song.mp3', 'audio'],
      ]);
      const page2 = await get('&page=2&page_size=2');
      expect(page2).toMatchObject({ total: 3, page: 2, page_size: 2 });
      expect(page2.items.map((i) => i.path)).toEqual(['/Music/song.mp3']);
      touch(join(dir, 'Music/song.mp3'), OLD);
      const byDate = await get('&sort_by=date&order=asc');
      expect(byDate.items.length).toBe(3);
      expect(byDate.items.map((i) => i.modified)).toEqual([...byDate.items.map((i) => i.modified)].sort());
    });

    it('refuses to delete every copy of a group unless told to, and keeps the one not selected', async () => {
      const groups = (
        await call<DuplicateFilesPage>('GET', `/api/cleanup/duplicate-files?task_id=${taskId}`, { headers: headers() })
      ).data.items;
      const photos = groups[0]?.files ?? [];
      const all = await call('DELETE', '/api/cleanup/duplicate-files', {
        headers: headers(),
        body: { task_id: taskId, ids: photos.map((f) => f.id) },
      });
      expect([all.status, all.code, all.msg]).toEqual([
        400,
        Code.BAD_REQUEST,
        'Select every copy explicitly to delete all copies of a duplicate file.',
      ]);
      expect(existsSync(join(dir, 'Photos/beach.jpg'))).toBe(true);
      // The smart filter's choice: all but the newest.
      const older = photos.filter((f) => f.path !== '/Photos/beach.jpg');
      const res = await call<DeleteCleanupData>('DELETE', '/api/cleanup/duplicate-files', {
        headers: headers(),
        body: { task_id: taskId, ids: older.map((f) => f.id) },
      });
      expect(res.code, res.msg).toBe(0);
      // They went to the local folder's .skyferry-trash: still on its disk, so nothing is freed yet.
      expect(res.data).toMatchObject({
        deleted: 2,
        freed: 0,
        trashed: true,
        in_trash: 2 * photo.length,
        failed: [],
        remaining: 0,
      });
      expect(existsSync(join(dir, 'Photos/beach.jpg'))).toBe(true);
      expect(existsSync(join(dir, 'Photos/Backup/beach.jpg'))).toBe(false);
      expect(existsSync(join(dir, 'Old/beach copy.jpg'))).toBe(false);
      // In the local cloud's trash, not gone for good.
      expect(readdirSync(join(dir, '.skyferry-trash')).length).toBe(2);
      expect(res.data.task.duplicate).toMatchObject({ count: 2, group_count: 1, image: 0, document: 2 });
      const after = await call<DuplicateFilesPage>('GET', `/api/cleanup/duplicate-files?task_id=${taskId}`, {
        headers: headers(),
      });
      expect(after.data.items.map((g) => g.files.length)).toEqual([2]);
    });

    it('leaves a file changed since the scan alone, and says so', async () => {
      const groups = (
        await call<DuplicateFilesPage>('GET', `/api/cleanup/duplicate-files?task_id=${taskId}`, { headers: headers() })
      ).data.items;
      const report = groups[0]?.files.find((f) => f.path === '/Docs/report.pdf');
      writeFileSync(join(dir, 'Docs/report.pdf'), randomBytes(31 * KB));
      const res = await call<DeleteCleanupData>('DELETE', '/api/cleanup/duplicate-files', {
        headers: headers(),
        body: { task_id: taskId, ids: [report?.id] },
      });
      expect(res.data.deleted).toBe(0);
      expect(res.data.failed).toEqual([
        expect.objectContaining({ id: report?.id, path: '/Docs/report.pdf', reason: 'changed' }),
      ]);
      expect(existsSync(join(dir, 'Docs/report.pdf'))).toBe(true);
    });

    it('deletes empty folders (nested ones with them), but not one that gained a file', async () => {
      const list = (
        await call<EmptyFoldersPage>('GET', `/api/cleanup/empty-folders?task_id=${taskId}`, { headers: headers() })
      ).data.items;
      writeFileSync(join(dir, 'Lonely/new.txt'), 'now in use');
      const res = await call<DeleteCleanupData>('DELETE', '/api/cleanup/empty-folders', {
        headers: headers(),
        body: { task_id: taskId, ids: list.map((i) => i.id) },
      });
      expect(res.data.deleted).toBe(2);
      expect(res.data.failed.map((f) => [f.path, f.reason])).toEqual([['/Lonely', 'not_empty']]);
      expect(existsSync(join(dir, 'Empty'))).toBe(false);
      expect(existsSync(join(dir, 'Photos/Unused'))).toBe(false);
      expect(existsSync(join(dir, 'Lonely/new.txt'))).toBe(true);
      expect(res.data.task.empty).toEqual({ count: 1 });
    });

    it('deletes all large files of a category, and all that remain', async () => {
      const audio = await call<DeleteCleanupData>('DELETE', '/api/cleanup/large-files', {
        headers: headers(),
        body: { task_id: taskId, all: true, category: 'audio' },
      });
      // The song's time was changed after the scan (sorting test), so it is left alone.
      expect(audio.data).toMatchObject({ deleted: 0, remaining: 1 });
      expect(audio.data.failed.map((f) => [f.path, f.reason])).toEqual([['/Music/song.mp3', 'changed']]);
      const rest = await call<DeleteCleanupData>('DELETE', '/api/cleanup/large-files', {
        headers: headers(),
        body: { task_id: taskId, all: true, category: 'video' },
      });
      expect(rest.data).toMatchObject({ deleted: 2, remaining: 0, freed: 0, in_trash: movie.length + 500 * KB });
      expect(tree(join(dir, 'Video'))).toEqual([]);
    });

    it('a rescan shows what is left: one copy of each photo, nothing deleted twice', async () => {
      const again = await startScan({ cloud_id: cloud.id, imode: 2 });
      const { task } = await waitScan(again);
      expect(task.imode).toBe(2);
      expect(task.duplicate).toMatchObject({ group_count: 0, count: 0 });
      expect(task.large.count).toBe(0);
      expect(task.empty.count).toBe(0);
      // The rescan replaced the previous scan.
      const old = await call('GET', `/api/cleanup/poll-progress/${taskId}`, { headers: headers() });
      expect([old.status, old.code]).toEqual([404, Code.NOT_FOUND]);
      expect(tree(join(dir, 'Photos'))).toEqual(['Backup/', 'beach.jpg']);
    });

    it('keeps the newest copy of each group when deleting all duplicates, or the oldest when asked', async () => {
      const d = t.makeLocalFolder();
      const a = randomBytes(5 * KB);
      const b = randomBytes(6 * KB);
      writeTree(d, { 'a1.txt': a, 'a2.txt': a, 'a3.txt': a, 'b1.txt': b, 'b2.txt': b });
      touch(join(d, 'a1.txt'), OLD);
      touch(join(d, 'a2.txt'), NEW);
      touch(join(d, 'a3.txt'), new Date('2023-06-01T00:00:00Z'));
      touch(join(d, 'b1.txt'), NEW);
      touch(join(d, 'b2.txt'), OLD);
      const c = await connectLocal(call, headers(), d);
      const id = await startScan({ cloud_id: c.id, imode: 2 });
      await waitScan(id);
      const newest = await call<DeleteCleanupData>('DELETE', '/api/cleanup/duplicate-files', {
        headers: headers(),
        body: { task_id: id, all: true, category: 'document' },
      });
      expect(newest.data).toMatchObject({ deleted: 3, remaining: 0 });
      expect(tree(d)).toEqual(['a2.txt', 'b1.txt']);

      writeTree(d, { 'a1.txt': a, 'b2.txt': b });
      touch(join(d, 'a1.txt'), OLD);
      touch(join(d, 'b2.txt'), OLD);
      const id2 = await startScan({ cloud_id: c.id, imode: 2 });
      await waitScan(id2);
      const oldest = await call<DeleteCleanupData>('DELETE', '/api/cleanup/duplicate-files', {
        headers: headers(),
        body: { task_id: id2, all: true, keep: 'oldest' },
      });
      expect(oldest.data).toMatchObject({ deleted: 2, remaining: 0 });
      expect(tree(d)).toEqual(['a1.txt', 'b2.txt']);
    });

    it('deletes every copy when each is selected and delete_all_copies is set', async () => {
      const d = t.makeLocalFolder();
      const a = randomBytes(3 * KB);
      writeTree(d, { 'x.bin': a, 'y.bin': a });
      const c = await connectLocal(call, headers(), d);
      const id = await startScan({ cloud_id: c.id, imode: 2 });
      await waitScan(id);
      const group = (
        await call<DuplicateFilesPage>('GET', `/api/cleanup/duplicate-files?task_id=${id}`, { headers: headers() })
      ).data.items[0];
      const res = await call<DeleteCleanupData>('DELETE', '/api/cleanup/duplicate-files', {
        headers: headers(),
        body: { task_id: id, ids: group?.files.map((f) => f.id), delete_all_copies: true },
      });
      expect(res.data.deleted).toBe(2);
      expect(tree(d)).toEqual([]);
    });

    it('two deletions at once, each keeping the copy the other deletes, never remove both copies', async () => {
      const d = t.makeLocalFolder();
      const a = randomBytes(4 * KB);
      writeTree(d, { 'p.bin': a, 'q.bin': a });
      const c = await connectLocal(call, headers(), d);
      const id = await startScan({ cloud_id: c.id, imode: 2 });
      await waitScan(id);
      const files =
        (await call<DuplicateFilesPage>('GET', `/api/cleanup/duplicate-files?task_id=${id}`, { headers: headers() }))
          .data.items[0]?.files ?? [];
      expect(files.map((f) => f.path)).toEqual(['/p.bin', '/q.bin']);
      // A slow trash: without care, both calls would see the other copy still there and both delete.
      const previous = t.ctx.clouds.open;
      t.ctx.clouds.open = async (identity, cloudId) => {
        const opened = await previous.call(t.ctx.clouds, identity, cloudId);
        const provider = new Proxy(opened.provider, {
          get: (target, prop, receiver) => {
            if (prop === 'trash' && target.trash) {
              const trash = target.trash.bind(target);
              return async (path: string) => {
                await sleep(300);
                return trash(path);
              };
            }
            const value: unknown = Reflect.get(target, prop, receiver);
            return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
          },
        });
        return { ...opened, provider };
      };
      try {
        const replies = await Promise.all(
          files.map((f) =>
            call<DeleteCleanupData>('DELETE', '/api/cleanup/duplicate-files', {
              headers: headers(),
              body: { task_id: id, ids: [f.id] },
            }),
          ),
        );
        expect(tree(d)).toHaveLength(1);
        expect(replies.map((r) => (r.code === 0 ? r.data.deleted : 0)).sort()).toEqual([0, 1]);
      } finally {
        t.ctx.clouds.open = previous;
      }
    });

    it('cancels a running scan (status 4), which then stays cancelled', async () => {
      const d = t.makeLocalFolder();
      const a = randomBytes(2 * KB);
      const files: Record<string, Buffer> = {};
      for (let i = 0; i < 80; i++) files[`f${i}.bin`] = a;
      writeTree(d, files);
      const c = await connectLocal(call, headers(), d);
      faults.readDelayMs = 300;
      try {
        const id = await startScan({ cloud_id: c.id });
        for (;;) {
          const p = await call<CleanupTask>('GET', `/api/cleanup/poll-progress/${id}`, { headers: headers() });
          if (p.data.phase === 'hashing' || p.data.status !== 1) break;
          await sleep(20);
        }
        const res = await call<CleanupTask>('DELETE', `/api/cleanup/task/${id}`, { headers: headers() });
        expect(res.data.status).toBe(4);
        await sleep(600);
        const after = await call<CleanupTask>('GET', `/api/cleanup/poll-progress/${id}`, { headers: headers() });
        expect(after.data).toMatchObject({ status: 4, phase: null });
        const lists = await call('DELETE', '/api/cleanup/duplicate-files', {
          headers: headers(),
          body: { task_id: id, all: true },
        });
        expect(lists.code).toBe(Code.CONFLICT);
      } finally {
        faults.readDelayMs = 0;
      }
    });

    it('a scan of a missing folder answers 404 at once, and the cloud keeps its last results', async () => {
      const before = await call<CleanupTask>('GET', `/api/cleanup/task?cloud_id=${cloud.id}`, { headers: headers() });
      const missing = await call('POST', '/api/cleanup/run', {
        headers: headers(),
        body: { cloud_id: cloud.id, path: '/No/Such/Folder' },
      });
      expect([missing.status, missing.code, missing.msg]).toEqual([404, Code.NOT_FOUND, 'The path does not exist.']);
      const file = await call('POST', '/api/cleanup/run', {
        headers: headers(),
        body: { cloud_id: cloud.id, path: '/Docs/notes.txt' },
      });
      expect([file.status, file.code]).toEqual([400, Code.BAD_REQUEST]);
      expect(file.msg).toContain('path');
      const after = await call<CleanupTask>('GET', `/api/cleanup/task?cloud_id=${cloud.id}`, { headers: headers() });
      expect(after.data?.task_id).toBe(before.data?.task_id);
    });

    it('reports an id that is no result of the list instead of answering plain success', async () => {
      const d = t.makeLocalFolder();
      const a = randomBytes(3 * KB);
      writeTree(d, { 'x.bin': a, 'y.bin': a });
      mkdirSync(join(d, 'Hollow'));
      const c = await connectLocal(call, headers(), d);
      const id = await startScan({ cloud_id: c.id, imode: 3 });
      await waitScan(id);
      const copy = (
        await call<DuplicateFilesPage>('GET', `/api/cleanup/duplicate-files?task_id=${id}`, { headers: headers() })
      ).data.items[0]?.files[0]?.id;
      const res = await call<DeleteCleanupData>('DELETE', '/api/cleanup/empty-folders', {
        headers: headers(),
        body: { task_id: id, ids: ['no-such-id', copy] },
      });
      expect(res.code).toBe(0);
      expect(res.data.deleted).toBe(0);
      expect(res.data.failed.map((f) => [f.id, f.reason]).sort()).toEqual(
        [
          ['no-such-id', 'not_found'],
          [copy, 'not_found'],
        ].sort(),
      );
      expect(tree(d)).toEqual(['Hollow/', 'x.bin', 'y.bin']);
    });

    it('checks its input', async () => {
      const bad = [
        { cloud_id: cloud.id, imode: 0 },
        { cloud_id: cloud.id, imode: 8 },
        { cloud_id: cloud.id, path: 'relative' },
        { cloud_id: cloud.id, large_threshold: 0 },
        { cloud_id: cloud.id, extra: 1 },
        {},
      ];
      for (const body of bad) {
        const res = await call('POST', '/api/cleanup/run', { headers: headers(), body });
        expect([res.status, res.code], JSON.stringify(body)).toEqual([400, Code.BAD_REQUEST]);
      }
      const size = await call('GET', `/api/cleanup/large-files?task_id=${taskId}&page_size=101`, {
        headers: headers(),
      });
      expect(size.code).toBe(Code.BAD_REQUEST);
      const none = await call('DELETE', '/api/cleanup/large-files', { headers: headers(), body: { task_id: 'nope' } });
      expect([none.status, none.code]).toEqual([404, Code.NOT_FOUND]);
      const unknownCloud = await call('POST', '/api/cleanup/run', { headers: headers(), body: { cloud_id: 'nope' } });
      expect(unknownCloud.code).toBe(Code.NOT_FOUND);
      const anonymous = await call('POST', '/api/cleanup/run', { body: { cloud_id: cloud.id } });
      expect(anonymous.code).toBe(Code.UNAUTHENTICATED);
    });

    it('a visitor cleans up a temporary cloud', async () => {
      const visitor = await t.visitor();
      // Visitors get no local folders: their temporary cloud is a WebDAV folder on 127.0.0.1.
      const dav = await VisitorClouds.start();
      try {
        const temp = await dav.connect(t, visitor.headers, {
          files: { 'a.txt': 'same', 'b.txt': 'same' },
          emptyFolders: ['Empty'],
        });
        const id = await startScan({ cloud_id: temp.id }, visitor.headers);
        const { task } = await waitScan(id, visitor.headers);
        expect(task).toMatchObject({ status: 0, duplicate: { group_count: 1 }, empty: { count: 1 }, limited: false });
        const other = await call('GET', `/api/cleanup/poll-progress/${id}`, { headers: headers() });
        expect(other.code).toBe(Code.NOT_FOUND);
      } finally {
        await dav.stop();
      }
    });
  });
}

describe('clean-up with billing on (BILLING_MODE=test)', () => {
  let t: TestApp;
  const call = caller(() => t);
  let user: SignedUpUser;
  let taskId: string;

  beforeAll(async () => {
    t = await startTestApp({ env: { SKYFERRY_WORKERS: '1', BILLING_MODE: 'test' } });
    user = await t.signUp();
    const d = t.makeLocalFolder();
    const files: Record<string, Buffer> = {};
    // 25 large files of distinct sizes: the 20 largest are the free view.
    for (let i = 0; i < 25; i++) files[`big-${String(i).padStart(2, '0')}.mp4`] = randomBytes(2000 + i * 10);
    writeTree(d, files);
    const cloud = await connectLocal(call, user.headers, d);
    const res = await call<{ task_id: string }>('POST', '/api/cleanup/run', {
      headers: user.headers,
      body: { cloud_id: cloud.id, imode: 4, large_threshold: 2000 },
    });
    taskId = res.data.task_id;
    for (;;) {
      const p = await call<CleanupTask>('GET', `/api/cleanup/poll-progress/${taskId}`, { headers: user.headers });
      if (p.data.status !== 1) break;
      await sleep(25);
    }
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  const list = async (q = '') =>
    (await call<LargeFilesPage>('GET', `/api/cleanup/large-files?task_id=${taskId}${q}`, { headers: user.headers }))
      .data;

  it('a free user sees the first 20 results (the largest), the full count, and no second page', async () => {
    const first = await list('&page_size=50');
    expect(first).toMatchObject({ total: 25, visible_total: 20, limited: true, page_size: 20 });
    expect(first.items.map((i) => i.name)).toEqual(
      Array.from({ length: 20 }, (_, i) => `big-${String(24 - i).padStart(2, '0')}.mp4`),
    );
    expect((await list('&page=2')).items).toEqual([]);
    // Sorting reorders the same 20; the smallest five stay hidden.
    const asc = await list('&order=asc');
    expect(asc.items[0]?.name).toBe('big-05.mp4');
    const task = await call<CleanupTask>('GET', `/api/cleanup/poll-progress/${taskId}`, { headers: user.headers });
    expect(task.data).toMatchObject({ limited: true, free_del_num: 20, large: { count: 25 } });
  });

  it('a free user may delete shown results but not all, nor hidden ones', async () => {
    const all = await call('DELETE', '/api/cleanup/large-files', {
      headers: user.headers,
      body: { task_id: taskId, all: true },
    });
    expect([all.status, all.code]).toEqual([403, Code.PREMIUM_REQUIRED]);
    const hidden = await t.ctx.db.kysely
      .selectFrom('cleanup_items')
      .select('id')
      .where('task_id', '=', taskId)
      .where('ordinal', '>', 20)
      .execute();
    expect(hidden.length).toBe(5);
    const refused = await call('DELETE', '/api/cleanup/large-files', {
      headers: user.headers,
      body: { task_id: taskId, ids: [hidden[0]?.id] },
    });
    expect(refused.code).toBe(Code.PREMIUM_REQUIRED);
    const shown = (await list()).items[0];
    const ok = await call<DeleteCleanupData>('DELETE', '/api/cleanup/large-files', {
      headers: user.headers,
      body: { task_id: taskId, ids: [shown?.id] },
    });
    expect(ok.data).toMatchObject({ deleted: 1, task: { free_del_num: 19, large: { count: 24 } } });
  });

  it('a licence unlocks every result and deleting all', async () => {
    await t.ctx.users.grantLicense(user.uid, 'month');
    const page = await list('&page_size=50');
    expect(page).toMatchObject({ total: 24, visible_total: 24, limited: false });
    const res = await call<DeleteCleanupData>('DELETE', '/api/cleanup/large-files', {
      headers: user.headers,
      body: { task_id: taskId, all: true },
    });
    expect(res.data).toMatchObject({ deleted: 24, remaining: 0, task: { free_del_num: -1, large: { count: 0 } } });
  });
});
