/**
 * The Tasks page's calls over HTTP, on SQLite with the in-process queue and on PostgreSQL with
 * BullMQ: every run kept with its trigger and figures, a run's files by outcome (paged, searched,
 * capped per outcome with whole counts), its log, Retry failed, Verify, Edit (with the plan of a
 * change that deletes), Duplicate, retention, a cancel that keeps its progress and counts what it
 * did not reach as not done, the completion e-mail, and the one default same-name policy.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  Code,
  DEFAULT_SAME_NAME_POLICY,
  type Cloud,
  type CreateTaskData,
  type ListRunsData,
  type ListTasksData,
  type PollProgressData,
  type RunFilesData,
  type ServerTask,
  type TaskPlanData,
  type TaskRun,
} from '@skyferry/contract';
import { STACKS as CONFIGS, startTestApp, type SignedUpUser, type TestApp } from './support/app.ts';
import { CloudFaults, caller, connectLocal, waitForState, writeTree } from './support/tasks.ts';

/** File rows a run keeps per outcome in these tests (SKYFERRY_RUN_FILE_ROWS). */
const CAP = 40;

for (const cfg of CONFIGS) {
  describe(`task runs over HTTP [${cfg.label}]`, () => {
    let t: TestApp;
    const call = caller(() => t);
    const faults = new CloudFaults();
    let user: SignedUpUser;
    let srcDir: string;
    let dstDir: string;
    let src: Cloud;
    let dst: Cloud;

    beforeAll(async () => {
      const env: Record<string, string> = {
        SKYFERRY_WORKERS: '2',
        SKYFERRY_TASK_LEASE_MS: '3000',
        SKYFERRY_RUN_FILE_ROWS: String(CAP),
        SKYFERRY_RUN_HISTORY_DAYS: '30',
        SKYFERRY_ALLOW_PRIVATE_NETWORKS: 'true',
        PUBLIC_URL: 'http://127.0.0.1:8080',
      };
      if (cfg.redis) {
        env.REDIS_URL = inject('redisUrl');
        env.SKYFERRY_REDIS_PREFIX = `r-${randomUUID().slice(0, 8)}`;
      }
      t = await startTestApp({ dialect: cfg.dialect, env });
      faults.install(t.ctx.clouds);
      // Conflict copies are named after the other side's cloud, and a local folder's account is its
      // path, whose "/" no file name may hold (issue 35 item 1, fixed apart from this page): here
      // the runs name the clouds by their alias alone.
      const open = t.ctx.clouds.open.bind(t.ctx.clouds);
      t.ctx.clouds.open = async (identity, id) => {
        const opened = await open(identity, id);
        return { ...opened, cloud: { ...opened.cloud, cloudAccount: '' } };
      };
      // The first account of a fresh install is the operator, who may use local folders.
      user = await t.signUp();
      srcDir = t.makeLocalFolder('source');
      dstDir = t.makeLocalFolder('target');
      src = await connectLocal(call, user.headers, srcDir, 'Laptop');
      dst = await connectLocal(call, user.headers, dstDir, 'Archive');
    });

    afterAll(async () => {
      await t?.close();
    });

    const headers = () => user.headers;
    const create = async (body: Record<string, unknown>) => {
      const res = await call<CreateTaskData>('POST', '/api/tasks', { headers: headers(), body });
      if (res.code !== 0) throw new Error(`create: ${res.status} ${res.msg}`);
      return res.data.task as ServerTask;
    };
    const migrate = (paths: string[], path: string, extra: Record<string, unknown> = {}) =>
      create({ task_type: 0, from_cloud: { cloud_id: src.id, paths }, to_cloud: { cloud_id: dst.id, path }, ...extra });
    const sync = (from: string, to: string, mode: string, extra: Record<string, unknown> = {}) =>
      create({
        task_type: 1,
        sync_mode: mode,
        from_cloud: { cloud_id: src.id, paths: [from] },
        to_cloud: { cloud_id: dst.id, path: to },
        ...extra,
      });
    const runs = async (id: string, query = '') => {
      const res = await call<ListRunsData>('GET', `/api/tasks/${id}/runs${query}`, { headers: headers() });
      if (res.code !== 0) throw new Error(`runs: ${res.status} ${res.msg}`);
      return res.data;
    };
    const files = async (id: string, runId: string, query: string) => {
      const res = await call<RunFilesData>('GET', `/api/tasks/${id}/runs/${runId}/files?${query}`, {
        headers: headers(),
      });
      if (res.code !== 0) throw new Error(`files: ${res.status} ${res.msg}`);
      return res.data;
    };
    const runOf = async (id: string, runId: string) =>
      (await call<TaskRun>('GET', `/api/tasks/${id}/runs/${runId}`, { headers: headers() })).data;
    /** Waits for a run (a verification) to end. */
    const ended = async (id: string, runId: string): Promise<TaskRun> => {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const r = await runOf(id, runId);
        if (r.outcome !== null) return r;
        if (Date.now() > deadline) throw new Error(`run ${runId} did not end`);
        await sleep(50);
      }
    };
    const runNow = async (id: string) => {
      const res = await call<ServerTask>('GET', `/api/tasks/run/${id}`, { headers: headers() });
      if (res.code !== 0) throw new Error(`run now: ${res.status} ${res.msg}`);
      return (await waitForState(call, headers(), id)).task;
    };

    it('keeps every run of a two-way sync with its trigger and figures; a change on both sides is a conflict with both names', async () => {
      writeTree(srcDir, { 'Notes/a.txt': 'first', 'Notes/b.txt': 'bee' });
      const task = await sync('/Notes', '/NotesCopy', 'two_way');
      await waitForState(call, headers(), task.id);
      const first = await runs(task.id);
      expect(first.total).toBe(1);
      expect(first.items[0]).toMatchObject({
        task_id: task.id,
        kind: 'transfer',
        trigger: 'manual',
        outcome: 'success',
        counts: { added: 2, conflict: 0, failed: 0, not_done: 0 },
        listed: { added: 2 },
        is_latest: true,
      });
      expect(first.items[0]?.finished_at).toBeGreaterThanOrEqual(first.items[0]?.started_at ?? Infinity);
      expect(first.items[0]?.bytes).toBe(8);

      // Both sides change the same file; the source gets a new one.
      writeTree(srcDir, { 'Notes/a.txt': 'changed on the laptop', 'Notes/c.txt': 'sea' });
      writeTree(dstDir, { 'NotesCopy/a.txt': 'changed in the archive!' });
      const done = await runNow(task.id);
      expect(done.result).toMatchObject({ outcome: 'success', conflicts: 1, added: 1 });
      const second = await runs(task.id);
      expect(second.total).toBe(2);
      const [latest, earlier] = second.items;
      expect(latest).toMatchObject({
        trigger: 'manual',
        outcome: 'success',
        counts: { added: 1, conflict: 1, skipped: 1 },
        is_latest: true,
      });
      expect(earlier).toMatchObject({ id: first.items[0]?.id, is_latest: false });
      const conflict = await files(task.id, latest?.id ?? '', 'outcome=conflict');
      expect(conflict).toMatchObject({ total: 1, next_cursor: null });
      const c = conflict.items[0];
      expect(c).toMatchObject({ outcome: 'conflict', path: '/NotesCopy/a.txt', reason: 'keep_both' });
      expect(c?.other_path).toMatch(/^\/NotesCopy\/a.+\.txt$/);
      // Both versions are on both sides, under the two names the run lists.
      const otherName = (c?.other_path ?? '').slice('/NotesCopy/'.length);
      expect(readdirSync(join(dstDir, 'NotesCopy')).sort()).toEqual(['a.txt', 'b.txt', 'c.txt', otherName].sort());
      expect(readdirSync(join(srcDir, 'Notes'))).toContain(otherName);
      expect((await files(task.id, latest?.id ?? '', 'outcome=added')).items).toMatchObject([
        { path: '/NotesCopy/c.txt', side: 'target', size: 3 },
      ]);
      expect((await files(task.id, latest?.id ?? '', 'outcome=skipped')).items).toMatchObject([
        { path: '/NotesCopy/b.txt', reason: 'unchanged' },
      ]);
      // Runs of kind transfer only, and of verifications (none yet).
      expect((await runs(task.id, '?kind=verify')).total).toBe(0);
      // Someone else's task and runs are not found.
      const other = await t.signUp();
      const theirs = await call('GET', `/api/tasks/${task.id}/runs`, { headers: other.headers });
      expect([theirs.status, theirs.code]).toEqual([404, Code.NOT_FOUND]);
      const theirRun = await call('GET', `/api/tasks/${task.id}/runs/${latest?.id}/files`, { headers: other.headers });
      expect([theirRun.status, theirRun.code]).toEqual([404, Code.NOT_FOUND]);
      const missing = await call('GET', `/api/tasks/${task.id}/runs/${randomUUID()}`, { headers: headers() });
      expect([missing.status, missing.msg]).toEqual([404, "This run is not in the task's history."]);
    });

    it('pages a run’s files by cursor, searches them, and keeps at most the cap of rows per outcome while counts stay whole', async () => {
      const many: Record<string, string> = {};
      for (let i = 0; i < 60; i++) many[`Many/f-${String(i).padStart(3, '0')}.txt`] = `file ${i}`;
      writeTree(srcDir, many);
      const task = await migrate(['/Many'], '/ManyCopy');
      await waitForState(call, headers(), task.id);
      const [run] = (await runs(task.id)).items;
      expect(run).toMatchObject({ outcome: 'success', counts: { added: 60 }, listed: { added: CAP } });
      const seen: string[] = [];
      let cursor: number | null = null;
      const sizes: number[] = [];
      do {
        const page: RunFilesData = await files(
          task.id,
          run?.id ?? '',
          `outcome=added&limit=15${cursor === null ? '' : `&cursor=${cursor}`}`,
        );
        expect(page.total).toBe(CAP);
        sizes.push(page.items.length);
        seen.push(...page.items.map((f) => f.path));
        cursor = page.next_cursor;
      } while (cursor !== null);
      expect(sizes).toEqual([15, 15, 10]);
      expect(new Set(seen).size).toBe(CAP);
      for (const p of seen) expect(p).toMatch(/^\/ManyCopy\/Many\/f-\d{3}\.txt$/);
      // Search by name, case-insensitive; nothing found is an empty last page.
      const name = (seen[7] ?? '').split('/').pop() ?? '';
      const found = await files(task.id, run?.id ?? '', `q=${encodeURIComponent(name.toUpperCase())}`);
      expect(found).toMatchObject({ items: [{ path: seen[7] }], next_cursor: null, total: null });
      expect((await files(task.id, run?.id ?? '', 'q=nothing-like-this')).items).toEqual([]);
      const bad = await call('GET', `/api/tasks/${task.id}/runs/${run?.id}/files?outcome=eaten`, {
        headers: headers(),
      });
      expect([bad.status, bad.code]).toEqual([400, Code.BAD_REQUEST]);

      // The log: the run, then a line a file row; what was not kept is counted at the end.
      const text = await t.app.inject({
        method: 'GET',
        url: `/api/tasks/${task.id}/runs/${run?.id}/log`,
        headers: headers(),
      });
      expect(text.statusCode).toBe(200);
      expect(text.headers['content-type']).toContain('text/plain');
      expect(String(text.headers['content-disposition'])).toMatch(/^attachment; filename=.*\.log/);
      expect(text.body).toContain('Outcome: success');
      expect(text.body.split('\n').filter((l) => l.startsWith('added ')).length).toBe(CAP);
      expect(text.body).toContain(
        `Counted but not listed one by one (a run keeps ${CAP} rows of each outcome): 20 added`,
      );
      const jsonl = await t.app.inject({
        method: 'GET',
        url: `/api/tasks/${task.id}/runs/${run?.id}/log?format=jsonl`,
        headers: headers(),
      });
      const lines = jsonl.body
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; path?: string });
      expect(lines[0]).toMatchObject({ type: 'run', id: run?.id, counts: { added: 60 } });
      expect(
        lines
          .slice(1)
          .map((l) => l.path)
          .sort(),
      ).toEqual([...seen].sort());
    });

    it('lists a partial run’s failed file with the reason; Retry runs only it, as a retry', async () => {
      writeTree(srcDir, { 'Part/ok-1.txt': 'one', 'Part/ok-2.txt': 'two', 'Part/locked.txt': 'three' });
      faults.failing.add('/Part/locked.txt');
      let id: string;
      try {
        id = (await migrate(['/Part'], '/PartCopy')).id;
        expect((await waitForState(call, headers(), id)).task.state).toBe(5);
      } finally {
        faults.failing.clear();
      }
      const [partial] = (await runs(id)).items;
      expect(partial).toMatchObject({ outcome: 'partial', counts: { added: 2, failed: 1 }, is_latest: true });
      expect((await files(id, partial?.id ?? '', 'outcome=failed')).items).toMatchObject([
        {
          path: '/Part/locked.txt',
          side: 'source',
          reason: 'permission',
          message: expect.stringContaining('permission denied') as unknown as string,
        },
      ]);
      expect((await call('GET', `/api/tasks/retry/${id}`, { headers: headers() })).code).toBe(0);
      expect((await waitForState(call, headers(), id)).task.state).toBe(0);
      const after = await runs(id);
      expect(after.items.map((r) => [r.trigger, r.outcome, r.is_latest])).toEqual([
        ['retry', 'success', true],
        ['manual', 'partial', false],
      ]);
      expect((await files(id, after.items[0]?.id ?? '', '')).items).toMatchObject([
        { outcome: 'added', path: '/PartCopy/Part/locked.txt' },
      ]);
    });

    it('a canceled run keeps its progress while it stops (9) and counts what it did not reach as not done, not failed', async () => {
      const tree: Record<string, Buffer> = {};
      for (let i = 0; i < 8; i++) tree[`Slow/s-${i}.bin`] = Buffer.alloc(10_000, i);
      writeTree(srcDir, tree);
      // Four files are slow to read and do not hear the cancel; the other four finish at once.
      for (let i = 4; i < 8; i++) faults.holding.set(`/Slow/s-${i}.bin`, 2500);
      try {
        const id = (await migrate(['/Slow'], '/SlowCopy')).id;
        await waitForState(call, headers(), id, [2]);
        const deadline = Date.now() + 10_000;
        let polled = (
          await call<PollProgressData>('GET', `/api/cloud-manager/poll-progress/${id}`, { headers: headers() })
        ).data;
        while (polled.finished_counts < 4 && Date.now() < deadline) {
          await sleep(50);
          polled = (
            await call<PollProgressData>('GET', `/api/cloud-manager/poll-progress/${id}`, { headers: headers() })
          ).data;
        }
        expect(polled.progress.transferred).toBe(40_000);
        // What runs do cannot change while it runs; its name can.
        const edit = await call('PUT', `/api/tasks/${id}`, {
          headers: headers(),
          body: { same_name_policy: 'overwrite' },
        });
        expect([edit.status, edit.code, edit.msg]).toEqual([
          409,
          Code.CONFLICT,
          'What runs do cannot change while the task is running; wait for the run to end or cancel it.',
        ]);
        const renamed = await call<ServerTask>('PUT', `/api/tasks/${id}`, {
          headers: headers(),
          body: { task_name: 'Slow one' },
        });
        expect(renamed.data.task_name).toBe('Slow one');

        const cancel = await call<ServerTask>('DELETE', `/api/cloud-manager/cancel-transfer?task_id=${id}`, {
          headers: headers(),
        });
        expect(cancel.data.state).toBe(9);
        // Stopping: the progress stays where it was (not 0), in the poll and in the list.
        const stopping = (
          await call<PollProgressData>('GET', `/api/cloud-manager/poll-progress/${id}`, { headers: headers() })
        ).data;
        expect(stopping).toMatchObject({ status: 9, finished_counts: 4, total_counts: 8 });
        expect(stopping.progress.transferred).toBe(40_000);
        expect(stopping.progress.percentage).toBe(50);
        const listed = await call<ListTasksData>('POST', '/api/tasks/list', {
          headers: headers(),
          body: { page: 1, page_size: 100, completed: 0 },
        });
        expect(listed.data.items.find((x) => x.id === id)).toMatchObject({ state: 9, finished_counts: 4 });

        const { task } = await waitForState(call, headers(), id);
        expect(task.state).toBe(4);
        expect(task.result).toMatchObject({ outcome: 'canceled', added: 4, failed: 0, not_done: 4 });
        const [run] = (await runs(id)).items;
        expect(run).toMatchObject({ outcome: 'canceled', counts: { added: 4, failed: 0, not_done: 4 } });
        const notDone = await files(id, run?.id ?? '', 'outcome=not_done');
        expect(notDone.items.map((f) => f.path).sort()).toEqual([4, 5, 6, 7].map((i) => `/Slow/s-${i}.bin`));
        expect(notDone.items.every((f) => f.reason === 'canceled')).toBe(true);
      } finally {
        faults.holding.clear();
      }
    });

    it('Verify compares source and target and names each difference; extras on the target count for a mirror only', async () => {
      writeTree(srcDir, { 'Check/a.txt': 'alpha', 'Check/b.txt': 'bravo', 'Check/c.txt': 'charlie' });
      const copy = await migrate(['/Check'], '/Checked');
      await waitForState(call, headers(), copy.id);
      const clean = await call<TaskRun>('POST', `/api/tasks/${copy.id}/verify`, { headers: headers() });
      expect(clean.data).toMatchObject({ kind: 'verify', trigger: 'manual', task_id: copy.id });
      expect((await ended(copy.id, clean.data.id)).outcome).toBe('same');

      // Planted: a.txt of another size, b.txt gone, an extra file on the target.
      writeFileSync(join(dstDir, 'Checked/Check/a.txt'), 'alpha, longer');
      rmSync(join(dstDir, 'Checked/Check/b.txt'));
      writeFileSync(join(dstDir, 'Checked/Check/extra.txt'), 'extra');
      const started = await call<TaskRun>('POST', `/api/tasks/${copy.id}/verify`, { headers: headers() });
      const found = await ended(copy.id, started.data.id);
      expect(found).toMatchObject({
        outcome: 'differs',
        counts: { size_differs: 1, missing_on_target: 1 },
        compared: 2,
      });
      const diffs = await files(copy.id, found.id, '');
      expect(diffs.items.map((f) => [f.outcome, f.path, f.other_path]).sort()).toEqual([
        ['missing_on_target', '/Check/b.txt', null],
        ['size_differs', '/Check/a.txt', '/Checked/Check/a.txt'],
      ]);
      expect(diffs.items.find((f) => f.outcome === 'size_differs')).toMatchObject({ size: 5, reason: '13' });
      // Verify writes nothing.
      expect(readFileSync(join(dstDir, 'Checked/Check/a.txt'), 'utf8')).toBe('alpha, longer');
      const verifications = await runs(copy.id, '?kind=verify');
      expect(verifications.items.map((r) => r.outcome)).toEqual(['differs', 'same']);

      const mirror = await sync('/Check', '/Mirror', 'mirror');
      await waitForState(call, headers(), mirror.id);
      writeFileSync(join(dstDir, 'Mirror/stray.txt'), 'not in the source');
      const m = await call<TaskRun>('POST', `/api/tasks/${mirror.id}/verify`, { headers: headers() });
      expect(await ended(mirror.id, m.data.id)).toMatchObject({ outcome: 'differs', counts: { missing_on_source: 1 } });
      expect((await files(mirror.id, m.data.id, 'outcome=missing_on_source')).items).toMatchObject([
        { path: '/Mirror/stray.txt', side: 'target' },
      ]);
      // Nothing running: stopping a verification answers null.
      expect((await call('DELETE', `/api/tasks/${mirror.id}/verify`, { headers: headers() })).data).toBeNull();
    });

    it('Edit: name, schedule and its zone, mode; a change after which the next run deletes is previewed and confirmed', async () => {
      writeTree(srcDir, { 'EditSrc/one.txt': '1', 'EditSrc/two.txt': '2' });
      const task = await sync('/EditSrc', '/EditDst', 'one_way');
      await waitForState(call, headers(), task.id);
      writeTree(dstDir, { 'EditDst/extra.txt': 'only on the target' });

      const scheduled = await call<ServerTask>('PUT', `/api/tasks/${task.id}`, {
        headers: headers(),
        body: {
          task_name: 'Nightly notes',
          schedule: { start_date: '2099-01-01 08:30:00', repeat_type: 0, hour: 8, minute: 30, second: 0 },
          time_zone: 'Europe/Paris',
        },
      });
      expect(scheduled.data).toMatchObject({
        task_name: 'Nightly notes',
        is_schedule: 2,
        time_zone: 'Europe/Paris',
        schedule: { repeat_type: 0, hour: 8, minute: 30 },
        next_run_time: Date.parse('2099-01-01T07:30:00Z'),
      });

      const asked = await call('PUT', `/api/tasks/${task.id}`, { headers: headers(), body: { sync_mode: 'mirror' } });
      expect([asked.status, asked.code, asked.data]).toEqual([409, Code.CONFIRM_DELETIONS, { count: 1, total: 1 }]);
      expect(asked.msg).toBe('With these settings the next run would delete 1 files. Confirm to save.');
      const unchanged = await call<ServerTask>('GET', `/api/tasks/${task.id}`, { headers: headers() });
      expect(unchanged.data.sync_mode).toBe('one_way');
      const plan = await call<TaskPlanData>('POST', `/api/tasks/${task.id}/plan`, {
        headers: headers(),
        body: { sync_mode: 'mirror', plan_query: { actions: ['delete'] } },
      });
      expect(plan.data.plan.summary.delete.count).toBe(1);
      expect(plan.data.plan.items).toMatchObject([{ action: 'delete', target_path: '/EditDst/extra.txt' }]);
      const saved = await call<ServerTask>('PUT', `/api/tasks/${task.id}`, {
        headers: headers(),
        body: { sync_mode: 'mirror', confirm_deletions: true },
      });
      expect(saved.data).toMatchObject({ sync_mode: 'mirror', task_name: 'Nightly notes', is_schedule: 2 });
      expect((await runNow(task.id)).state).toBe(0);
      expect(existsSync(join(dstDir, 'EditDst/extra.txt'))).toBe(false);

      // Fields that do not apply, and a schedule taken away.
      const migration = await migrate(['/EditSrc/one.txt'], '/EditMigrated');
      const wrong = await call('PUT', `/api/tasks/${migration.id}`, {
        headers: headers(),
        body: { sync_mode: 'mirror' },
      });
      expect([wrong.status, wrong.msg]).toEqual([400, 'sync_mode does not apply to this task.']);
      const off = await call<ServerTask>('PUT', `/api/tasks/${task.id}`, {
        headers: headers(),
        body: { schedule: null },
      });
      expect(off.data).toMatchObject({ schedule: null, is_schedule: 1, next_run_time: null });
    });

    it('Duplicate: a copy waiting to be started, its schedule kept but off, with no history of its own yet', async () => {
      writeTree(srcDir, { 'Dup/x.txt': 'x' });
      const original = await sync('/Dup', '/DupCopy', 'incremental', {
        schedule: {
          start_date: '2099-05-01 06:00:00',
          repeat_type: 1,
          day_of_week: 'fri',
          hour: 6,
          minute: 0,
          second: 0,
        },
        time_zone: 'Asia/Tokyo',
      });
      const res = await call<ServerTask>('POST', `/api/tasks/${original.id}/duplicate`, { headers: headers() });
      expect(res.code).toBe(0);
      expect(res.data).toMatchObject({
        task_name: `${original.task_name} (copy)`,
        state: 7,
        is_schedule: 1,
        next_run_time: null,
        sync_mode: 'incremental',
        schedule: original.schedule,
        time_zone: 'Asia/Tokyo',
        from_cloud: { cloud_id: src.id, paths: ['/Dup'] },
        to_cloud: { cloud_id: dst.id, path: '/DupCopy' },
      });
      expect(res.data.id).not.toBe(original.id);
      expect((await runs(res.data.id)).total).toBe(0);
      expect((await runNow(res.data.id)).state).toBe(0);
      expect(readFileSync(join(dstDir, 'DupCopy/x.txt'), 'utf8')).toBe('x');
      expect((await runs(original.id)).total).toBe(0);

      // The Tasks page lists every task, or those in some states.
      const all = await call<ListTasksData>('POST', '/api/tasks/list', { headers: headers(), body: { page: 1 } });
      expect(all.data.items.map((i) => i.id)).toEqual(expect.arrayContaining([original.id, res.data.id]));
      const pending = await call<ListTasksData>('POST', '/api/tasks/list', {
        headers: headers(),
        body: { states: [7] },
      });
      expect(pending.data.items.map((i) => i.id)).toContain(original.id);
      expect(pending.data.items.every((i) => i.state === 7)).toBe(true);
    });

    it('a task made without a same-name policy takes the contract’s default; skipped files are listed with why', async () => {
      writeTree(srcDir, { 'Policy/same.txt': 'a longer source version', 'Policy/kept.txt': 'twin' });
      writeTree(dstDir, { 'PolicyCopy/Policy/same.txt': 'short' });
      // The target's copy of kept.txt is as large and newer: the default policy leaves it alone.
      const kept = join(dstDir, 'PolicyCopy/Policy/kept.txt');
      writeTree(dstDir, { 'PolicyCopy/Policy/kept.txt': 'TWIN' });
      // Newer than the source's, yet not in the future (a future time is judged by content instead).
      const earlier = new Date(Date.now() - 7200_000);
      const later = new Date(Date.now() - 3600_000);
      utimesSync(join(srcDir, 'Policy/kept.txt'), earlier, earlier);
      utimesSync(kept, later, later);
      const task = await migrate(['/Policy'], '/PolicyCopy');
      expect(task.same_name_policy).toBe(DEFAULT_SAME_NAME_POLICY);
      expect(DEFAULT_SAME_NAME_POLICY).toBe('size_differs_or_newer');
      await waitForState(call, headers(), task.id);
      // Of another size: replaced (skip would have kept the target's).
      expect(readFileSync(join(dstDir, 'PolicyCopy/Policy/same.txt'), 'utf8')).toBe('a longer source version');
      expect(readFileSync(kept, 'utf8')).toBe('TWIN');
      const [run] = (await runs(task.id)).items;
      expect(run).toMatchObject({ counts: { updated: 1, skipped: 1 } });
      expect((await files(task.id, run?.id ?? '', 'outcome=skipped')).items).toMatchObject([
        { path: '/PolicyCopy/Policy/kept.txt', reason: 'not_newer', side: 'target', size: 4 },
      ]);
    });

    it('e-mails the run with its conflicts and deletions by name and a link to the run', async () => {
      await call('POST', '/api/users/notify-email', {
        headers: headers(),
        body: { notify_email: 'me@example.org', remind_me: 1 },
      });
      writeTree(srcDir, { 'Mail/keep.txt': 'k', 'Mail/gone.txt': 'g', 'Mail/both.txt': 'b' });
      const task = await sync('/Mail', '/MailCopy', 'two_way', { task_name: 'Mailed sync' });
      await waitForState(call, headers(), task.id);
      rmSync(join(srcDir, 'Mail/gone.txt'));
      writeTree(srcDir, { 'Mail/both.txt': 'source side' });
      writeTree(dstDir, { 'MailCopy/both.txt': 'target side!' });
      await runNow(task.id);
      const [run] = (await runs(task.id)).items;
      const outbox = join(t.dataDir, 'outbox');
      const decode = (raw: string) =>
        Buffer.from(
          raw
            .replace(/=\r?\n/g, '')
            .replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16))),
          'latin1',
        ).toString('utf8');
      let mail = '';
      const deadline = Date.now() + 10_000;
      while (!mail && Date.now() < deadline) {
        const all = existsSync(outbox)
          ? readdirSync(outbox).map((f) => decode(readFileSync(join(outbox, f), 'utf8')))
          : [];
        mail = all.find((m) => m.includes('Mailed sync') && m.includes(run?.id ?? '-')) ?? '';
        if (!mail) await sleep(50);
      }
      expect(mail).toContain('Conflicts: 1');
      expect(mail).toContain('Changed on both sides:');
      expect(mail).toMatch(/\/MailCopy\/both\.txt \(the other version: \/MailCopy\/both.+\.txt\)/);
      expect(mail).toContain('Deleted:');
      expect(mail).toContain('/MailCopy/gone.txt');
      expect(mail).toContain(`Open this run in Skyferry: http://127.0.0.1:8080/tasks/${task.id}/runs/${run?.id}`);
      await call('POST', '/api/users/notify-email', {
        headers: headers(),
        body: { notify_email: 'me@example.org', remind_me: 0 },
      });
    });

    it('prunes runs that ended before SKYFERRY_RUN_HISTORY_DAYS, with their files; deleting a task takes its history', async () => {
      writeTree(srcDir, { 'Old/o.txt': 'o' });
      const task = await migrate(['/Old'], '/OldCopy');
      await waitForState(call, headers(), task.id);
      await runNow(task.id);
      const [newer, older] = (await runs(task.id)).items;
      const db = t.ctx.db.kysely;
      await db
        .updateTable('task_runs')
        .set({ finished_at: Date.now() - 31 * 86_400_000 })
        .where('id', '=', older?.id ?? '')
        .execute();
      expect(await t.ctx.taskSystem.runs.prune()).toBeGreaterThanOrEqual(1);
      expect((await runs(task.id)).items.map((r) => r.id)).toEqual([newer?.id]);
      const left = await db
        .selectFrom('task_run_file_blocks')
        .select('first_seq')
        .where('run_id', '=', older?.id ?? '')
        .execute();
      expect(left).toEqual([]);
      expect((await call('DELETE', `/api/tasks/${task.id}`, { headers: headers() })).code).toBe(0);
      const gone = await db.selectFrom('task_runs').select('id').where('task_id', '=', task.id).execute();
      expect(gone).toEqual([]);
      const rows = await db
        .selectFrom('task_run_file_blocks')
        .select('first_seq')
        .where('run_id', '=', newer?.id ?? '')
        .execute();
      expect(rows).toEqual([]);
    });
  });
}
