import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  Code,
  GB,
  type Cloud,
  type CreateTaskData,
  type ListTasksData,
  type PollProgressData,
  type ServerTask,
} from '@skyferry/contract';
import { STACKS as CONFIGS, startTestApp, type SignedUpUser, type TestApp } from './support/app.ts';
import { CloudFaults, caller, connectLocal, waitForState, writeTree } from './support/tasks.ts';

/** A small tree of files under a source folder. */
function photos(n = 6, size = 20_000): Record<string, Buffer> {
  const files: Record<string, Buffer> = {};
  for (let i = 0; i < n; i++) {
    files[`Photos/${i % 2 ? 'Trip/' : ''}img-${i}.jpg`] = Buffer.alloc(size + i, i + 1);
  }
  return files;
}

function listFiles(root: string, prefix = ''): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? listFiles(join(root, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`]))
    .sort();
}

for (const cfg of CONFIGS) {
  describe(`tasks over HTTP [${cfg.label}]`, () => {
    let t: TestApp;
    const call = caller(() => t);
    const faults = new CloudFaults();
    let user: SignedUpUser;
    let srcDir: string;
    let dstDir: string;
    let src: Cloud;
    let dst: Cloud;
    let smtp: SMTPServer | undefined;
    const mails: string[] = [];

    beforeAll(async () => {
      const env: Record<string, string> = { SKYFERRY_WORKERS: '2', SKYFERRY_TASK_LEASE_MS: '3000' };
      if (cfg.redis) {
        env.REDIS_URL = inject('redisUrl');
        env.SKYFERRY_REDIS_PREFIX = `t-${randomUUID().slice(0, 8)}`;
        // This configuration sends its e-mails to a real SMTP server; the other writes the outbox.
        smtp = new SMTPServer({
          disabledCommands: ['STARTTLS', 'AUTH'],
          onData(stream, _session, done) {
            let raw = '';
            stream.on('data', (c: Buffer) => (raw += c.toString()));
            stream.on('end', () => {
              mails.push(raw);
              done();
            });
          },
        });
        await new Promise<void>((resolve) => smtp?.listen(0, '127.0.0.1', resolve));
        const address = smtp.server.address();
        env.SMTP_URL = `smtp://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
      }
      t = await startTestApp({ dialect: cfg.dialect, env });
      faults.install(t.ctx.clouds);
      user = await t.signUp();
      srcDir = t.makeLocalFolder('source');
      dstDir = t.makeLocalFolder('target');
      src = await connectLocal(call, user.headers, srcDir, 'Laptop');
      dst = await connectLocal(call, user.headers, dstDir, 'Archive');
    });

    afterAll(async () => {
      await t?.close();
      await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
    });

    const create = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
      call<CreateTaskData>('POST', '/api/tasks', { headers: { ...user.headers, ...headers }, body });
    const migrate = (paths: string[], path: string, extra: Record<string, unknown> = {}) =>
      create({
        task_type: 0,
        from_cloud: { cloud_id: src.id, paths },
        to_cloud: { cloud_id: dst.id, path },
        ...extra,
      });
    const list = (completed: 0 | 1) =>
      call<ListTasksData>('POST', '/api/tasks/list', {
        headers: user.headers,
        body: { page: 1, page_size: 100, completed },
      });
    const poll = (id: string, headers = user.headers) =>
      call<PollProgressData>('GET', `/api/cloud-manager/poll-progress/${id}`, { headers });

    it('migrates at once: waiting, scanning, running, completed; each folder lands under its own name', async () => {
      writeTree(srcDir, { ...photos(), 'notes.txt': 'hello' });
      const res = await migrate(['/Photos', '/notes.txt'], '/Backup');
      expect(res.code).toBe(0);
      const task = res.data.task as ServerTask;
      expect(res.data.plan).toBeNull();
      expect(task).toMatchObject({
        task_id: task.id,
        task_name: 'Photos +1 → Backup',
        task_type: 0,
        from_cloud: {
          cloud_id: src.id,
          cloud_name: 'local',
          cloud_alias_name: 'Laptop',
          paths: ['/Photos', '/notes.txt'],
        },
        to_cloud: { cloud_id: dst.id, cloud_name: 'local', cloud_alias_name: 'Archive', path: '/Backup' },
        destination_clouds: [{ cloud_id: dst.id, cloud_name: 'local', cloud_alias_name: 'Archive' }],
        sync_mode: null,
        same_name_policy: 'size_differs_or_newer',
        is_schedule: 1,
        next_run_time: null,
        schedule: null,
      });
      expect([8, 1, 2, 0]).toContain(task.state);
      const { task: done, seen } = await waitForState(call, user.headers, task.id);
      expect(done.state).toBe(0);
      expect(seen[seen.length - 1]).toBe(0);
      expect(listFiles(join(dstDir, 'Backup'))).toEqual([
        'Photos/Trip/img-1.jpg',
        'Photos/Trip/img-3.jpg',
        'Photos/Trip/img-5.jpg',
        'Photos/img-0.jpg',
        'Photos/img-2.jpg',
        'Photos/img-4.jpg',
        'notes.txt',
      ]);
      expect(readFileSync(join(dstDir, 'Backup/Photos/Trip/img-3.jpg'))).toEqual(
        readFileSync(join(srcDir, 'Photos/Trip/img-3.jpg')),
      );
      const bytes = Object.values(photos()).reduce((s, b) => s + b.length, 0) + 5;
      expect(done).toMatchObject({
        total_counts: 7,
        finished_counts: 7,
        size: bytes,
        usage: bytes,
        needed_size: null,
        progress: { percentage: 100, transferred: bytes, length: bytes },
        result: { outcome: 'success', success_count: 7, total_count: 7, added: 7, failed: 0, error: null },
        result_list: [],
        result_total: 0,
      });
      expect(done.started_at).toBeGreaterThanOrEqual(done.created_at);
      expect(done.finished_at).toBeGreaterThanOrEqual(done.started_at ?? 0);
      expect(done.duration).toBe((done.finished_at ?? 0) - (done.started_at ?? 0));
      const finished = await list(1);
      expect(finished.data.items.map((i) => i.id)).toContain(task.id);
      expect((await list(0)).data.items.map((i) => i.id)).not.toContain(task.id);
      const progress = await poll(task.id);
      expect(progress.data).toEqual({
        status: 0,
        progress: { percentage: 100, speed: 0, transferred: bytes, length: bytes, eta: 0 },
        total_counts: 7,
        finished_counts: 7,
      });
    });

    it('pages the task list: a page and the total agree, and a page past the end still tells the total', async () => {
      const all = (await list(1)).data;
      expect(all.total).toBeGreaterThan(0);
      expect(all.items).toHaveLength(all.total);
      const page = (n: number) =>
        call<ListTasksData>('POST', '/api/tasks/list', {
          headers: user.headers,
          body: { page: n, page_size: 1, completed: 1 },
        });
      const first = (await page(1)).data;
      expect(first).toEqual({ items: [all.items[0]], total: all.total });
      expect((await page(all.total + 1)).data).toEqual({ items: [], total: all.total });
    });

    it('answers 404 for an unknown task and for another user task, which stops the client polling', async () => {
      const res = await poll('no-such-task');
      expect(res.status).toBe(404);
      expect(res.code).toBe(Code.NOT_FOUND);
      const [mine] = (await list(1)).data.items;
      const stranger = await t.signUp();
      for (const [method, url] of [
        ['GET', `/api/cloud-manager/poll-progress/${mine?.id}`],
        ['GET', `/api/tasks/${mine?.id}`],
        ['GET', `/api/tasks/run/${mine?.id}`],
        ['GET', `/api/tasks/retry/${mine?.id}`],
        ['PUT', `/api/tasks/${mine?.id}`],
        ['DELETE', `/api/tasks/${mine?.id}`],
        ['DELETE', `/api/cloud-manager/cancel-transfer?task_id=${mine?.id}`],
      ] as const) {
        const r = await call(method, url, {
          headers: stranger.headers,
          body: method === 'PUT' ? { is_schedule: 2 } : undefined,
        });
        expect([r.status, r.code], `${method} ${url}`).toEqual([404, Code.NOT_FOUND]);
      }
      expect((await call('POST', '/api/tasks/list', { body: { completed: 1 } })).code).toBe(Code.UNAUTHENTICATED);
      const theirs = await call<ListTasksData>('POST', '/api/tasks/list', {
        headers: stranger.headers,
        body: { completed: 1 },
      });
      expect(theirs.data).toEqual({ items: [], total: 0 });
      expect((await poll(mine?.id ?? '')).code).toBe(0);
    });

    it('refuses tasks the spec forbids, with the messages the client shows', async () => {
      expect(await migrate([], '/Backup')).toMatchObject({ status: 400, code: 400, msg: 'Please select files first' });
      const sameCloud = (paths: string[], path: string, extra = {}) =>
        create({
          task_type: 0,
          from_cloud: { cloud_id: src.id, paths },
          to_cloud: { cloud_id: src.id, path },
          ...extra,
        });
      const same = await sameCloud(['/Photos'], '/Photos');
      expect(same).toMatchObject({ status: 400, msg: 'The target path cannot be the same as the source path.' });
      expect((await sameCloud(['/Photos'], '/Photos/Trip')).status).toBe(400);
      const confirm = await sameCloud(['/Photos/Trip'], '/Copies');
      expect(confirm).toMatchObject({ status: 409, code: Code.CONFIRM_SAME_CLOUD });
      const missing = await migrate(['/does-not-exist'], '/Backup');
      expect(missing).toMatchObject({ status: 404, msg: 'The path does not exist.' });
      const twoFolders = await create({
        task_type: 1,
        from_cloud: { cloud_id: src.id, paths: ['/Photos', '/Other'] },
        to_cloud: { cloud_id: dst.id, path: '/Mirror' },
      });
      expect(twoFolders.status).toBe(400);
      const notMine = await create({
        task_type: 0,
        from_cloud: { cloud_id: 'not-a-cloud', paths: ['/Photos'] },
        to_cloud: { cloud_id: dst.id, path: '/x' },
      });
      expect(notMine.status).toBe(404);
      const bad = await create({
        task_type: 0,
        from_cloud: { cloud_id: src.id, paths: ['/../etc'] },
        to_cloud: { cloud_id: dst.id, path: '/x' },
      });
      expect(bad.status).toBe(400);
      const localized = await migrate([], '/Backup', {});
      expect(localized.msg).toBe('Please select files first');
      const german = await create(
        { task_type: 0, from_cloud: { cloud_id: src.id, paths: [] }, to_cloud: { cloud_id: dst.id, path: '/' } },
        { 'x-language': 'de' },
      );
      expect(german.status).toBe(400);
      expect(german.msg).not.toBe('Please select files first');
      // Confirmed, the same-cloud copy runs.
      const ok = await sameCloud(['/Photos/Trip'], '/Copies', { confirm_same_cloud: true });
      expect(ok.code).toBe(0);
      const { task } = await waitForState(call, user.headers, ok.data.task?.id ?? '');
      expect(task.state).toBe(0);
      expect(listFiles(join(srcDir, 'Copies'))).toEqual(['Trip/img-1.jpg', 'Trip/img-3.jpg', 'Trip/img-5.jpg']);
    });

    it('answers the plan of a dry run and creates nothing', async () => {
      const before = (await list(1)).data.total + (await list(0)).data.total;
      const res = await migrate(['/Photos'], '/DryRun', { dry_run: true });
      expect(res.code).toBe(0);
      expect(res.data.task).toBeNull();
      const plan = res.data.plan;
      expect(plan?.summary.copy.count).toBe(6);
      expect(plan?.files_to_transfer).toBe(6);
      expect(plan?.bytes_to_target).toBe(Object.values(photos()).reduce((s, b) => s + b.length, 0));
      expect(
        plan?.items
          .filter((i) => i.action === 'copy')
          .map((i) => i.target_path)
          .sort(),
      ).toContain('/DryRun/Photos/img-0.jpg');
      expect((await list(1)).data.total + (await list(0)).data.total).toBe(before);
      expect(existsSync(join(dstDir, 'DryRun'))).toBe(false);
    });

    it('syncs a folder (mirror), asking to confirm a sync that deletes most of the target', async () => {
      writeTree(dstDir, { 'Mirror/old-1.txt': 'x', 'Mirror/old-2.txt': 'y', 'Mirror/old-3.txt': 'z' });
      writeTree(srcDir, { 'Docs/a.txt': 'a' });
      const body = {
        task_type: 1,
        sync_mode: 'mirror',
        from_cloud: { cloud_id: src.id, paths: ['/Docs'] },
        to_cloud: { cloud_id: dst.id, path: '/Mirror' },
      };
      const prompt = await create(body);
      expect(prompt).toMatchObject({ status: 409, code: Code.CONFIRM_DELETIONS, data: { count: 3 } });
      const res = await create({ ...body, confirm_deletions: true });
      expect(res.code).toBe(0);
      expect(res.data.task).toMatchObject({ task_type: 1, sync_mode: 'mirror' });
      const { task } = await waitForState(call, user.headers, res.data.task?.id ?? '');
      expect(task.state).toBe(0);
      expect(task.result).toMatchObject({ added: 1, deleted: 3 });
      expect(listFiles(join(dstDir, 'Mirror'))).toEqual(['a.txt']);
    });

    it('schedules a task in the caller zone, toggles the schedule, fires at the time and starts on demand', async () => {
      const inAnHour = new Date(Date.now() + 3600_000);
      const wall = new Intl.DateTimeFormat('sv-SE', {
        timeZone: 'Asia/Tokyo',
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
      }).format(inAnHour);
      const schedule = { start_date: wall, repeat_type: 0 };
      const res = await migrate(['/Photos'], '/Daily', { schedule });
      expect(res.code).toBe(0);
      let task = res.data.task as ServerTask;
      expect(task).toMatchObject({ state: 7, is_schedule: 2, schedule, time_zone: 'UTC' });
      const tokyo = await create(
        {
          task_type: 0,
          from_cloud: { cloud_id: src.id, paths: ['/Photos'] },
          to_cloud: { cloud_id: dst.id, path: '/Tokyo' },
          schedule,
        },
        { 'x-timezone': 'Asia/Tokyo' },
      );
      const tokyoTask = tokyo.data.task as ServerTask;
      expect(tokyoTask.time_zone).toBe('Asia/Tokyo');
      expect(Math.abs((tokyoTask.next_run_time ?? 0) - inAnHour.getTime())).toBeLessThan(1000);
      expect((await list(0)).data.items.map((i) => i.id)).toContain(tokyoTask.id);
      const past = await migrate(['/Photos'], '/Past', { schedule: { start_date: '2020-01-01 00:00:00' } });
      expect(past).toMatchObject({ status: 400, msg: 'The scheduled time has already passed.' });

      const off = await call<ServerTask>('PUT', `/api/tasks/${tokyoTask.id}`, {
        headers: user.headers,
        body: { is_schedule: 1 },
      });
      expect(off.data).toMatchObject({ is_schedule: 1, state: 7 });
      const on = await call<ServerTask>('PUT', `/api/tasks/${tokyoTask.id}`, {
        headers: user.headers,
        body: { is_schedule: 2 },
      });
      expect(on.data).toMatchObject({ is_schedule: 2, state: 7 });
      expect(on.data.next_run_time).toBe(tokyoTask.next_run_time);
      const bad = await call('PUT', `/api/tasks/${task.id}`, { headers: user.headers, body: { is_schedule: 3 } });
      expect(bad.status).toBe(400);

      // Start now: state 8, then it runs; the schedule stays on.
      const now = await call<ServerTask>('GET', `/api/tasks/run/${task.id}`, { headers: user.headers });
      expect(now.code).toBe(0);
      expect([8, 1, 2, 0]).toContain(now.data.state);
      ({ task } = await waitForState(call, user.headers, task.id));
      expect(task).toMatchObject({ state: 0, is_schedule: 2 });
      expect(listFiles(join(dstDir, 'Daily'))).toHaveLength(6);

      // The scheduler fires a task whose time has come (it ticks in every process; here by hand).
      const soon = new Intl.DateTimeFormat('sv-SE', {
        timeZone: 'UTC',
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
      }).format(new Date(Date.now() + 1500));
      const timed = await migrate(['/notes.txt'], '/Timed', { schedule: { start_date: soon } });
      const timedId = timed.data.task?.id ?? '';
      await t.ctx.taskSystem.scheduler.tick();
      expect((await waitForState(call, user.headers, timedId, [7])).task.state).toBe(7);
      await sleep(1600);
      const fired = await t.ctx.taskSystem.scheduler.tick();
      expect(fired.map((f) => f.id)).toContain(timedId);
      const ran = await waitForState(call, user.headers, timedId);
      expect(ran.task).toMatchObject({ state: 0, next_run_time: null });
      expect(listFiles(join(dstDir, 'Timed'))).toEqual(['notes.txt']);
    });

    it('cancels a queued task at once and a running one (9, then 4); a canceled task restarts', async () => {
      writeTree(srcDir, photos(12, 40_000));
      faults.readDelayMs = 5000;
      try {
        const res = await migrate(['/Photos'], '/Canceled');
        const id = res.data.task?.id ?? '';
        const running = await waitForState(call, user.headers, id, [2]);
        expect(running.task.state).toBe(2);
        // A running task cannot be started again or retried.
        const twice = await call('GET', `/api/tasks/run/${id}`, { headers: user.headers });
        expect([twice.status, twice.code, twice.msg]).toEqual([
          409,
          Code.CONFLICT,
          'The task is running; cancel it first.',
        ]);
        expect((await call('GET', `/api/tasks/retry/${id}`, { headers: user.headers })).code).toBe(Code.CONFLICT);
        // While it runs, its progress is readable and rewritten at least once a second.
        const first = await t.ctx.taskSystem.progress.get(id);
        await sleep(1100);
        const second = await t.ctx.taskSystem.progress.get(id);
        expect(second?.updatedAt).toBeGreaterThan(first?.updatedAt ?? Infinity);
        expect(second?.updatedAt).toBeGreaterThan(Date.now() - 1100);
        // Two runs per user at once: a third task waits in the queue (8), and cancelling it is immediate.
        const second2 = await migrate(['/Photos'], '/Canceled2');
        const queued = await migrate(['/Photos'], '/Canceled3');
        const queuedId = queued.data.task?.id ?? '';
        await sleep(300);
        const stillQueued = await call<ServerTask>('GET', `/api/tasks/${queuedId}`, { headers: user.headers });
        expect(stillQueued.data.state).toBe(8);
        const dropped = await call<ServerTask>('DELETE', `/api/cloud-manager/cancel-transfer?task_id=${queuedId}`, {
          headers: user.headers,
        });
        expect(dropped.data.state).toBe(4);
        await call('DELETE', `/api/cloud-manager/cancel-transfer?task_id=${second2.data.task?.id}`, {
          headers: user.headers,
        });
        const polled = await poll(id);
        expect(polled.data).toMatchObject({ status: 2, total_counts: 12 });
        expect(polled.data.progress.length).toBe(Object.values(photos(12, 40_000)).reduce((s, b) => s + b.length, 0));
        const cancel = await call<ServerTask>('DELETE', `/api/cloud-manager/cancel-transfer?task_id=${id}`, {
          headers: user.headers,
        });
        expect(cancel.code).toBe(0);
        expect([9, 4]).toContain(cancel.data.state);
        const { task, seen } = await waitForState(call, user.headers, id);
        expect(task.state).toBe(4);
        expect(seen).not.toContain(0);
        expect(listFiles(join(dstDir, 'Canceled/Photos')).length).toBeLessThan(12);

        faults.readDelayMs = 0;
        const restart = await call<ServerTask>('GET', `/api/tasks/run/${id}`, { headers: user.headers });
        expect(restart.code).toBe(0);
        const again = await waitForState(call, user.headers, id);
        expect(again.task.state).toBe(0);
        expect(listFiles(join(dstDir, 'Canceled/Photos'))).toHaveLength(12);
        expect((await waitForState(call, user.headers, second2.data.task?.id ?? '')).task.state).toBe(4);
        expect(existsSync(join(dstDir, 'Canceled3'))).toBe(false);
      } finally {
        faults.readDelayMs = 0;
      }
    });

    it('marks a run with unreadable files partially successful and retransmits only the failed part', async () => {
      writeTree(srcDir, { 'Mixed/ok-1.txt': 'one', 'Mixed/ok-2.txt': 'two', 'Mixed/locked.txt': 'three' });
      faults.failing.add('/Mixed/locked.txt');
      try {
        const res = await migrate(['/Mixed'], '/Retry');
        const id = res.data.task?.id ?? '';
        const { task } = await waitForState(call, user.headers, id);
        expect(task.state).toBe(5);
        expect(task.result).toMatchObject({ outcome: 'partial', failed: 1, added: 2 });
        expect(task.result_list).toEqual([
          {
            sourceFile: { name: 'locked.txt', parent: '/Mixed' },
            source: { token_id: src.id },
            reason: 'permission',
            message: expect.stringContaining('permission denied') as unknown as string,
          },
        ]);
        faults.failing.clear();
        faults.reads.length = 0;
        const retry = await call<ServerTask>('GET', `/api/tasks/retry/${id}`, { headers: user.headers });
        expect(retry.code).toBe(0);
        const after = await waitForState(call, user.headers, id);
        expect(after.task.state).toBe(0);
        expect(after.task.result_list).toEqual([]);
        expect(faults.reads.filter((p) => p.startsWith('/Mixed'))).toEqual(['/Mixed/locked.txt']);
        expect(listFiles(join(dstDir, 'Retry/Mixed'))).toEqual(['locked.txt', 'ok-1.txt', 'ok-2.txt']);
        const notRetryable = await call('GET', `/api/tasks/retry/${id}`, { headers: user.headers });
        expect(notRetryable).toMatchObject({ status: 409, code: Code.CONFLICT });
      } finally {
        faults.failing.clear();
      }
    });

    it('fails a run where nothing could be read (3), and one whose source is gone; retry after the fix', async () => {
      writeTree(srcDir, { 'Locked/a.txt': 'a', 'Locked/b.txt': 'b' });
      faults.failing.add('/Locked/a.txt');
      faults.failing.add('/Locked/b.txt');
      try {
        const res = await migrate(['/Locked/a.txt', '/Locked/b.txt'], '/Failed');
        const id = res.data.task?.id ?? '';
        const { task } = await waitForState(call, user.headers, id);
        expect(task.state).toBe(3);
        expect(task.result).toMatchObject({ outcome: 'failed', failed: 2, added: 0 });
        expect(task.result_list.map((f) => f.sourceFile.name).sort()).toEqual(['a.txt', 'b.txt']);
        faults.failing.clear();
        expect((await call('GET', `/api/tasks/retry/${id}`, { headers: user.headers })).code).toBe(0);
        expect((await waitForState(call, user.headers, id)).task.state).toBe(0);
        expect(listFiles(join(dstDir, 'Failed'))).toEqual(['a.txt', 'b.txt']);
      } finally {
        faults.failing.clear();
      }
      // The source folder disappears before a run: the run fails with the reason.
      writeTree(srcDir, { 'Vanishing/x.txt': 'x' });
      const soon = await migrate(['/Vanishing'], '/Gone', {
        schedule: { start_date: '2099-01-01 00:00:00' },
      });
      const id = soon.data.task?.id ?? '';
      rmSync(join(srcDir, 'Vanishing'), { recursive: true });
      expect((await call('GET', `/api/tasks/run/${id}`, { headers: user.headers })).code).toBe(0);
      const gone = await waitForState(call, user.headers, id);
      expect(gone.task.state).toBe(3);
      expect(gone.task.result?.outcome).toBe('failed');
      expect(gone.task.result_list).toMatchObject([
        { sourceFile: { name: 'Vanishing', parent: '/' }, reason: 'not_found' },
      ]);
    });

    it('deletes finished and running tasks', async () => {
      writeTree(srcDir, photos(8, 30_000));
      faults.readDelayMs = 300;
      try {
        const res = await migrate(['/Photos'], '/Deleted');
        const id = res.data.task?.id ?? '';
        await waitForState(call, user.headers, id, [1, 2]);
        const del = await call('DELETE', `/api/tasks/${id}`, { headers: user.headers });
        expect(del).toMatchObject({ status: 200, code: 0, data: null });
        expect((await poll(id)).status).toBe(404);
        expect((await call('GET', `/api/tasks/${id}`, { headers: user.headers })).status).toBe(404);
      } finally {
        faults.readDelayMs = 0;
      }
      const [done] = (await list(1)).data.items;
      expect((await call('DELETE', `/api/tasks/${done?.id}`, { headers: user.headers })).code).toBe(0);
      expect((await list(1)).data.items.map((i) => i.id)).not.toContain(done?.id);
    });

    it('e-mails the result when the user has the reminder on, in their language', async () => {
      await call('POST', '/api/users/notify-email', {
        headers: { ...user.headers, 'x-language': 'fr' },
        body: { notify_email: 'me@example.org', remind_me: 1 },
      });
      await t.ctx.users.setLanguage(user.uid, 'fr');
      const outbox = join(t.dataDir, 'outbox');
      const before = cfg.redis ? mails.length : existsSync(outbox) ? readdirSync(outbox).length : 0;
      const res = await migrate(['/notes.txt'], '/Mailed', { task_name: 'Rapport mensuel' });
      await waitForState(call, user.headers, res.data.task?.id ?? '');
      // Earlier tests' tasks of this user may still end (and mail) now: pick this task's mail.
      const decode = (raw: string) =>
        Buffer.from(
          raw
            .replace(/=\r?\n/g, '')
            .replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16))),
          'latin1',
        ).toString('utf8');
      const newMails = (): string[] => {
        if (cfg.redis) return mails.slice(before);
        if (!existsSync(outbox)) return [];
        return readdirSync(outbox)
          .filter((f) => f.endsWith('.eml'))
          .map((f) => readFileSync(join(outbox, f), 'utf8'));
      };
      let raw = '';
      const deadline = Date.now() + 10_000;
      while (!raw && Date.now() < deadline) {
        raw = newMails().find((m) => decode(m).includes('Rapport mensuel')) ?? '';
        if (!raw) await sleep(50);
      }
      const text = decode(raw);
      expect(raw).toContain('To: me@example.org');
      expect(text).toContain('Rapport mensuel');
      expect(text).toContain('Réussi');
      expect(text).toContain('Fichiers ajoutés: 1');
    });
  });
}

describe('tasks with billing on [SQLite]', () => {
  let t: TestApp;
  const call = caller(() => t);
  beforeAll(async () => {
    t = await startTestApp({ env: { SKYFERRY_WORKERS: '1', BILLING_MODE: 'test' } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('needs a licence, charges the traffic, and stops a run that would exceed it in state 10 with the size needed', async () => {
    const user = await t.signUp();
    const srcDir = t.makeLocalFolder();
    const dstDir = t.makeLocalFolder();
    writeTree(srcDir, { 'Big/a.bin': Buffer.alloc(6000, 1), 'Big/b.bin': Buffer.alloc(4000, 2) });
    const src = await connectLocal(call, user.headers, srcDir);
    const dst = await connectLocal(call, user.headers, dstDir);
    const body = {
      task_type: 0,
      from_cloud: { cloud_id: src.id, paths: ['/Big'] },
      to_cloud: { cloud_id: dst.id, path: '/' },
    };
    const free = await call('POST', '/api/tasks', { headers: user.headers, body });
    expect(free).toMatchObject({ status: 403, code: Code.PREMIUM_REQUIRED });

    await t.ctx.users.grantLicense(user.uid, 'month');
    const allowance = await t.ctx.users.remainingTraffic(user.uid);
    expect(allowance).toBe(150 * GB);
    // Leave 3 000 bytes of the month's allowance.
    await t.ctx.users.chargeTraffic(user.uid, allowance - 3000);
    const res = await call<CreateTaskData>('POST', '/api/tasks', { headers: user.headers, body });
    expect(res.code).toBe(0);
    const { task } = await waitForState(call, user.headers, res.data.task?.id ?? '');
    expect(task.state).toBe(10);
    expect(task.needed_size).toBe(10_000);
    expect(task.result?.outcome).toBe('traffic_exceeded');
    expect(await t.ctx.users.remainingTraffic(user.uid)).toBe(3000);

    // With enough traffic the run goes through and is charged.
    await t.ctx.users.grantDataPacket(user.uid, 'packet_50g');
    const retry = await call<ServerTask>('GET', `/api/tasks/retry/${task.id}`, { headers: user.headers });
    expect(retry.code).toBe(0);
    const done = await waitForState(call, user.headers, task.id);
    expect(done.task).toMatchObject({ state: 0, usage: 10_000 });
    expect(await t.ctx.users.remainingTraffic(user.uid)).toBe(3000 + 50 * GB - 10_000);
    expect(readFileSync(join(dstDir, 'Big/a.bin'))).toEqual(Buffer.alloc(6000, 1));
  });

  it('an ended licence answers 4011001; no transfer data left answers 4001001 for runs starting now', async () => {
    const user = await t.signUp();
    const srcDir = t.makeLocalFolder();
    const dstDir = t.makeLocalFolder();
    writeTree(srcDir, { 'Docs/a.txt': Buffer.from('hello') });
    const src = await connectLocal(call, user.headers, srcDir);
    const dst = await connectLocal(call, user.headers, dstDir);
    const body = {
      task_type: 0,
      from_cloud: { cloud_id: src.id, paths: ['/Docs'] },
      to_cloud: { cloud_id: dst.id, path: '/' },
    };
    // A month's licence that started 70 days ago has ended.
    await t.ctx.users.grantLicense(user.uid, 'month', { startsAt: Date.now() - 70 * 86_400_000 });
    expect(await t.ctx.users.licenceStatus(user.uid)).toBe('expired');
    const expired = await call('POST', '/api/tasks', { headers: user.headers, body });
    expect(expired).toMatchObject({
      status: 402,
      code: Code.LICENSE_EXPIRED,
      msg: 'Your current license has expired.',
    });
    const expiredDry = await call('POST', '/api/tasks', { headers: user.headers, body: { ...body, dry_run: true } });
    expect(expiredDry.code).toBe(Code.LICENSE_EXPIRED);

    // Renewed, but every byte of the month's data is used.
    await t.ctx.users.grantLicense(user.uid, 'month');
    expect(await t.ctx.users.licenceStatus(user.uid)).toBe('active');
    await t.ctx.users.chargeTraffic(user.uid, await t.ctx.users.remainingTraffic(user.uid));
    expect(await t.ctx.users.remainingTraffic(user.uid)).toBe(0);
    const noData = await call('POST', '/api/tasks', { headers: user.headers, body });
    expect(noData).toMatchObject({ status: 402, code: Code.TRAFFIC_INSUFFICIENT });
    expect(noData.msg).toMatch(/^Your current remaining transfer data is insufficient/);
    // The preview and a schedule for later still work; starting the scheduled task now does not.
    const dry = await call<CreateTaskData>('POST', '/api/tasks', {
      headers: user.headers,
      body: { ...body, dry_run: true },
    });
    expect([dry.code, dry.data.plan?.summary.copy.count]).toEqual([0, 1]);
    const scheduled = await call<CreateTaskData>('POST', '/api/tasks', {
      headers: user.headers,
      body: { ...body, schedule: { start_date: '2099-01-01 08:00:00' }, time_zone: 'UTC' },
    });
    expect(scheduled.code).toBe(0);
    const id = scheduled.data.task?.id ?? '';
    const startNow = await call('GET', `/api/tasks/run/${id}`, { headers: user.headers });
    expect(startNow).toMatchObject({ status: 402, code: Code.TRAFFIC_INSUFFICIENT });
    const list = await call<ListTasksData>('POST', '/api/tasks/list', {
      headers: user.headers,
      body: { page: 1, page_size: 100, completed: 0 },
    });
    expect(list.data.items.map((task) => [task.id, task.state])).toEqual([[id, 7]]);

    // A data packet brings it back.
    await t.ctx.users.grantDataPacket(user.uid, 'packet_50g');
    const started = await call<ServerTask>('GET', `/api/tasks/run/${id}`, { headers: user.headers });
    expect(started.code).toBe(0);
    const done = await waitForState(call, user.headers, id);
    expect(done.task.state).toBe(0);
    expect(readFileSync(join(dstDir, 'Docs/a.txt'), 'utf8')).toBe('hello');
  });
});
