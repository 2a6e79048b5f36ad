import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { Code, TaskState } from '@skyferry/contract';
import { createDb, type Db } from '@skyferry/db';
import { freshDb } from '@skyferry/db/testing';
import { checkpointKey, planTransfer } from '@skyferry/engine';
import { MemoryProvider, MemoryStore } from '@skyferry/engine/testing';
import { DatabaseJobQueue } from '@skyferry/queue';
import { ApiError } from '../../http/errors.ts';
import { DatabaseProgressStore } from '../../repositories/task-progress.ts';
import { fileRowKey } from '../../repositories/task-run-state.ts';
import { TasksRepository } from '../../repositories/tasks.ts';
import type { CloudsService } from '../clouds.ts';
import type { UsersService } from '../users.ts';
import { TaskRunner } from './runner.ts';
import { cloudRecord, until } from './runner-test-support.ts';
import { TasksService, type TaskJob } from './tasks-service.ts';

/**
 * A run cut off on one worker (its process shuts down mid-run) resumes on another worker from the
 * checkpoints the first one kept in the database: with "transfer anyway" (overwrite), a file whose
 * checkpoint was written is not written again. The clouds are in-memory (so every write can be
 * counted); the database and the queue are real.
 */
const FILES = 24;
const SIZE = 1024 * 1024 + 100; // above the engine's small-file size: files go `transfers` at a time

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`a task run resumed on another worker [${dialect}]`, () => {
    let fresh: Awaited<ReturnType<typeof freshDb>>;
    const extra: Db[] = [];
    const stores = new Map<string, MemoryStore>();
    /** Every provider opened on the target store, in order: their writes together are the run's. */
    const targets: MemoryProvider[] = [];
    const targetWrites = () => targets.flatMap((p) => p.writes);
    /** Paths the target refuses to write (a file that fails, for a run that ends partial). */
    let refused: string[] = [];

    const clouds = {
      async open(_identity: unknown, id: string) {
        const store = stores.get(id);
        if (!store) throw new ApiError(Code.NOT_FOUND, 'not_found');
        // The target answers slowly, so the shutdown lands in the middle of the run.
        const provider = new MemoryProvider({
          store,
          kind: 'webdav',
          latencyMs: id === 'nas' ? 15 : 0,
          ...(id === 'nas' ? { forbidden: refused } : {}),
        });
        if (id === 'nas') targets.push(provider);
        return { cloud: cloudRecord(id, 'webdav'), provider };
      },
      async listOwned() {
        return [cloudRecord('drive', 'webdav'), cloudRecord('nas', 'webdav')];
      },
    } as unknown as CloudsService;
    const users = { isPremium: async () => true, get: async () => undefined } as unknown as UsersService;

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

    /** A worker process: its own connection, queue and runner. */
    function worker() {
      const db = createDb({ url: fresh.url, poolSize: 3 });
      extra.push(db);
      const queue = new DatabaseJobQueue<TaskJob>(db, { name: 'tasks', leaseMs: 2000, pollMs: 50 });
      const runner = new TaskRunner({
        repo: new TasksRepository(db.kysely),
        db: db.kysely,
        progress: new DatabaseProgressStore(db.kysely),
        clouds,
        users,
        mailer: { send: async () => ({ messageId: '', deliveredTo: 'none' }), close: () => undefined },
        billingMode: 'off',
        appUrl: 'http://127.0.0.1',
        log: pino({ level: 'silent' }),
        transfers: 2,
        progressEveryMs: 10,
      });
      return { db, queue, runner };
    }

    /**
     * Cuts a run off on one worker after a few files and lets another finish it; `removed` of the
     * files the first one finished are removed from the target in between, and with `oneFails` the
     * target refuses one file the first did not reach, so the run ends partial.
     */
    async function cutOffAndResume(removed: number, oneFails = false, policy: 'overwrite' | 'skip' = 'overwrite') {
      stores.set('nas', new MemoryStore());
      targets.length = 0;
      refused = [];
      const api = worker();
      const service = new TasksService({
        repo: new TasksRepository(api.db.kysely),
        progress: new DatabaseProgressStore(api.db.kysely),
        queue: api.queue,
        clouds,
        users,
        billingMode: 'off',
        log: pino({ level: 'silent' }),
      });
      const created = await service.create(
        'u1',
        {
          task_type: 0,
          from_cloud: { cloud_id: 'drive', paths: ['/Big'] },
          to_cloud: { cloud_id: 'nas', path: '/Backup' },
          same_name_policy: policy,
        },
        'UTC',
      );
      const id = created.task?.id ?? '';
      // What the progress call shows while the run goes, across both workers.
      const progress = new DatabaseProgressStore(fresh.db.kysely);
      const shown: { finished: number; percentage: number }[] = [];
      let watching = true;
      const watch = (async () => {
        while (watching) {
          const p = await progress.get(id);
          if (p) shown.push({ finished: p.finishedCounts, percentage: p.progress.percentage });
          await new Promise((r) => setTimeout(r, 5));
        }
      })();
      const repo = new TasksRepository(fresh.db.kysely);
      // Checkpoint rows keep a digest of the engine's key: the names they stand for come from a plan of
      // the same run (the keys depend on the source files only: the target is empty when it starts).
      const planned = await planTransfer({
        source: new MemoryProvider({ store: stores.get('drive') as MemoryStore, kind: 'webdav' }),
        target: new MemoryProvider({ store: new MemoryStore(), kind: 'webdav' }),
        mode: 'migrate',
        sourcePaths: ['/Big'],
        targetPath: '/Backup',
        sameNamePolicy: policy,
      });
      const nameOfRow = new Map(
        planned.items
          .filter((it) => it.action === 'copy')
          .map((it) => [fileRowKey(checkpointKey(planned, it)), it.rel.split('/').pop() ?? '']),
      );
      const checkpointed = async () =>
        new Set(
          (
            await fresh.db.kysely
              .selectFrom('task_checkpoints')
              .select('key')
              .where('task_id', '=', id)
              .where('key', 'not like', '#%')
              .execute()
          ).map((r) => nameOfRow.get(r.key) ?? `unknown ${r.key}`),
        );

      // The first worker starts the run and shuts down after a few files.
      const first = worker();
      await first.queue.process(first.runner.handle, { concurrency: 1 });
      await until('a few checkpoints', async () => (await checkpointed()).size >= 6);
      await first.queue.close({ abortRunning: true });
      const before = await checkpointed();
      expect(before.size).toBeLessThan(FILES);
      expect((await repo.getById(id))?.state).not.toBe(TaskState.completed);
      const gone = [...before].slice(0, removed);
      for (const name of gone) (stores.get('nas') as MemoryStore).remove(`/Backup/Big/${name}`);
      const writesBefore = targetWrites().length;
      const failing = oneFails
        ? Array.from({ length: FILES }, (_, i) => `f${i}.bin`).find((n) => !before.has(n))
        : undefined;
      if (failing) refused = [`/Backup/Big/${failing}`];
      const endState = failing ? TaskState.partial : TaskState.completed;

      // The second worker takes the job over and finishes it.
      const second = worker();
      await second.queue.process(second.runner.handle, { concurrency: 1 });
      await until('the run to end', async () => (await repo.getById(id))?.state === endState);
      await second.queue.close();
      await api.queue.close();

      watching = false;
      await watch;
      // Never back, not even while the second worker lists the folders again.
      expect(new Set(shown.map((x) => x.finished)).size).toBeGreaterThan(3);
      for (let i = 1; i < shown.length; i++) {
        expect(shown[i]?.finished, `finished at ${i}`).toBeGreaterThanOrEqual(shown[i - 1]?.finished ?? 0);
        expect(shown[i]?.percentage, `percentage at ${i}`).toBeGreaterThanOrEqual(shown[i - 1]?.percentage ?? 0);
      }
      const later = targetWrites()
        .slice(writesBefore)
        .map((p) => p.split('/').pop() ?? '');
      // Written again: only the checkpointed files that were removed since.
      expect(later.filter((name) => before.has(name)).sort()).toEqual(gone.sort());
      const done = failing ? FILES - 1 : FILES;
      expect(new Set(targetWrites().map((p) => p.split('/').pop())).size).toBe(done);
      const nas = stores.get('nas') as MemoryStore;
      for (let i = 0; i < FILES; i++) {
        if (`f${i}.bin` === failing) expect(nas.exists(`/Backup/Big/f${i}.bin`)).toBe(false);
        else expect(nas.readFile(`/Backup/Big/f${i}.bin`).equals(Buffer.alloc(SIZE, i + 1)), `f${i}`).toBe(true);
      }
      const row = await repo.getById(id);
      expect(row?.run_count).toBe(1);
      // Each file counts once, those written twice too, whether the run ends in success or not.
      expect(JSON.parse(row?.result ?? '{}')).toMatchObject({
        outcome: failing ? 'partial' : 'success',
        added: done,
        skipped: 0,
        success_count: done,
        total_count: FILES,
        failed: FILES - done,
      });
    }

    it('does not write a checkpointed file again', () => cutOffAndResume(0), 60_000);

    it(
      'writes again a checkpointed file removed from the target before the resume, counting it once',
      () => cutOffAndResume(2),
      60_000,
    );

    it(
      'counts such a file once when the resumed run ends partial (another file fails)',
      () => cutOffAndResume(2, true),
      60_000,
    );

    it(
      'skipping same names, counts the files the first worker copied as added, not skipped',
      () => cutOffAndResume(0, false, 'skip'),
      60_000,
    );
  });
}
