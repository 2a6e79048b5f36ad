import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { ALL_CLOUD_FLAGS, Code, TaskState } from '@skyferry/contract';
import { createDb, type Db } from '@skyferry/db';
import { freshDb } from '@skyferry/db/testing';
import { MemoryProvider, MemoryStore } from '@skyferry/engine/testing';
import { DatabaseJobQueue } from '@skyferry/queue';
import { ApiError } from '../../http/errors.ts';
import { DatabaseProgressStore } from '../../repositories/task-progress.ts';
import { TaskRunsRepository } from '../../repositories/task-runs.ts';
import { TasksRepository } from '../../repositories/tasks.ts';
import type { CloudRecord, CloudsService } from '../clouds.ts';
import type { UsersService } from '../users.ts';
import { TaskRunner } from './runner.ts';
import { RunsService } from './runs.ts';
import { TasksService, type TaskJob } from './tasks-service.ts';

/**
 * The run history across a worker that stops mid-run: the attempt it was running shows as
 * interrupted, the worker that takes the job over records a run of its own started by "resume",
 * and that run's counts are the whole run's (files finished before the interruption included).
 */
const FILES = 20;
const SIZE = 1024 * 1024 + 100;

function record(id: string): CloudRecord {
  return {
    id,
    cloudId: id,
    kind: 'webdav',
    cloudAccount: `${id}@example.com`,
    alias: '',
    space: 0,
    usedSpace: 0,
    status: 'authorized',
    sort: 0,
    flags: ALL_CLOUD_FLAGS,
    owner: { userId: 'u1' },
    createdAt: 0,
    updatedAt: 0,
    lastUsedAt: 0,
  };
}

async function until(what: string, test: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await test())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`the run history of a run resumed on another worker [${dialect}]`, () => {
    let fresh: Awaited<ReturnType<typeof freshDb>>;
    const extra: Db[] = [];
    const stores = new Map<string, MemoryStore>();
    const clouds = {
      async open(_identity: unknown, id: string) {
        const store = stores.get(id);
        if (!store) throw new ApiError(Code.NOT_FOUND, 'not_found');
        // The target answers slowly, so the shutdown lands in the middle of the run.
        const provider = new MemoryProvider({ store, kind: 'webdav', latencyMs: id === 'nas' ? 15 : 0 });
        return { cloud: record(id), provider };
      },
      async listOwned() {
        return [record('drive'), record('nas')];
      },
    } as unknown as CloudsService;
    const users = { isPremium: async () => true, get: async () => undefined } as unknown as UsersService;
    const log = pino({ level: 'silent' });

    beforeAll(async () => {
      fresh = await freshDb(dialect);
      const drive = new MemoryStore();
      for (let i = 0; i < FILES; i++) drive.writeFile(`/Big/f${i}.bin`, Buffer.alloc(SIZE, i + 1));
      stores.set('drive', drive);
      stores.set('nas', new MemoryStore());
    });

    afterAll(async () => {
      await Promise.all(extra.map((db) => db.close()));
      await fresh?.cleanup();
    });

    /** A worker process: its own connection, queue, run history and runner. */
    function worker() {
      const db = createDb({ url: fresh.url, poolSize: 3 });
      extra.push(db);
      const queue = new DatabaseJobQueue<TaskJob>(db, { name: 'tasks', leaseMs: 2000, pollMs: 50 });
      const repo = new TasksRepository(db.kysely);
      const runs = new RunsService({
        repo: new TaskRunsRepository(db.kysely, db.dialect),
        tasks: repo,
        log,
        fileRowsPerOutcome: 1000,
        historyDays: 90,
      });
      const runner = new TaskRunner({
        repo,
        db: db.kysely,
        progress: new DatabaseProgressStore(db.kysely),
        clouds,
        users,
        mailer: { send: async () => ({ messageId: '', deliveredTo: 'none' }), close: () => undefined },
        billingMode: 'off',
        appUrl: 'http://127.0.0.1',
        log,
        transfers: 2,
        runs,
      });
      return { db, queue, runner, runs };
    }

    it('shows the cut-off attempt as interrupted and the resumed one, with the whole run’s counts', async () => {
      const api = worker();
      const service = new TasksService({
        repo: new TasksRepository(api.db.kysely),
        progress: new DatabaseProgressStore(api.db.kysely),
        queue: api.queue,
        clouds,
        users,
        billingMode: 'off',
        log,
      });
      const created = await service.create(
        'u1',
        {
          task_type: 0,
          from_cloud: { cloud_id: 'drive', paths: ['/Big'] },
          to_cloud: { cloud_id: 'nas', path: '/Backup' },
        },
        'UTC',
      );
      const id = created.task?.id ?? '';
      const repo = new TasksRepository(fresh.db.kysely);
      const added = async () =>
        Number(
          (
            await fresh.db.kysely
              .selectFrom('task_run_file_blocks')
              .innerJoin('task_runs', 'task_runs.id', 'task_run_file_blocks.run_id')
              .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('task_run_file_blocks.n'), eb.lit(0)).as('n'))
              .where('task_runs.task_id', '=', id)
              .executeTakeFirstOrThrow()
          ).n,
        );

      const checkpointed = async () =>
        (await fresh.db.kysely.selectFrom('task_checkpoints').select('key').where('task_id', '=', id).execute()).length;
      // The first worker starts the run and shuts down after a few files.
      const first = worker();
      await first.queue.process(first.runner.handle, { concurrency: 1 });
      await until('a few checkpoints', async () => (await checkpointed()) >= 5);
      await first.queue.close({ abortRunning: true });
      expect((await repo.getById(id))?.state).not.toBe(TaskState.completed);
      const cut = await first.runs.list('u1', id, { page: 1, page_size: 20 });
      expect(cut.items).toHaveLength(1);
      // Its worker is gone; the task still shows the run going on until another worker takes it.
      expect(cut.items[0]).toMatchObject({ trigger: 'manual', outcome: null, finished_at: null });
      // What it did before it stopped is recorded (written as it stopped).
      const recordedBefore = await added();

      const second = worker();
      await second.queue.process(second.runner.handle, { concurrency: 1 });
      await until('the run to end', async () => (await repo.getById(id))?.state === TaskState.completed);
      await second.queue.close();
      await api.queue.close();

      const history = await second.runs.list('u1', id, { page: 1, page_size: 20 });
      expect(history.items.map((r) => [r.trigger, r.outcome, r.is_latest])).toEqual([
        ['resume', 'success', true],
        ['manual', 'interrupted', false],
      ]);
      const [resumed, interrupted] = history.items;
      // The interrupted attempt is closed, with the files it recorded before it stopped.
      expect(interrupted?.finished_at).not.toBeNull();
      expect(recordedBefore).toBeGreaterThanOrEqual(4);
      // The resumed run counts every file once, those its first attempt finished included.
      expect(resumed?.counts).toMatchObject({ added: FILES, failed: 0, not_done: 0 });
      const rows = await second.runs.files('u1', id, resumed?.id ?? '', { limit: 1000, outcome: 'added' });
      expect(new Set(rows.items.map((f) => f.path)).size).toBe(rows.items.length);
      for (const f of rows.items) expect(f.path).toMatch(/^\/Backup\/Big\/f\d+\.bin$/);
    }, 60_000);
  });
}
