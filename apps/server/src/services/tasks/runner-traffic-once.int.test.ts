import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { Code, TaskState } from '@skyferry/contract';
import { createDb, type Db } from '@skyferry/db';
import { freshDb } from '@skyferry/db/testing';
import { MemoryProvider, MemoryStore } from '@skyferry/engine/testing';
import { DatabaseJobQueue } from '@skyferry/queue';
import { ApiError } from '../../http/errors.ts';
import { PlansRepository } from '../../repositories/plans.ts';
import { DatabaseProgressStore } from '../../repositories/task-progress.ts';
import { TasksRepository } from '../../repositories/tasks.ts';
import { UsersRepository } from '../../repositories/users.ts';
import type { CloudsService } from '../clouds.ts';
import { UsersService } from '../users.ts';
import { TaskRunner } from './runner.ts';
import { cloudRecord, until } from './runner-test-support.ts';
import { TasksService, type TaskJob } from './tasks-service.ts';

/**
 * Traffic is counted once per byte moved, across a worker that stops mid-run: a file the first
 * worker copied and was charged for, whose checkpoint did not make it (the process died between the
 * two), is copied again by the resumed run but not charged again. Billing is on (`test`), with the
 * real users service and a licence in a real database; the clouds are in-memory.
 */
const FILES = 16;
const SIZE = 1024 * 1024 + 100;

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`traffic of a resumed run is charged once [${dialect}]`, () => {
    let fresh: Awaited<ReturnType<typeof freshDb>>;
    const extra: Db[] = [];
    const stores = new Map<string, MemoryStore>();
    const clouds = {
      async open(_identity: unknown, id: string) {
        const store = stores.get(id);
        if (!store) throw new ApiError(Code.NOT_FOUND, 'not_found');
        const provider = new MemoryProvider({ store, kind: 'webdav', latencyMs: id === 'nas' ? 15 : 0 });
        return { cloud: cloudRecord(id, 'webdav'), provider };
      },
      async listOwned() {
        return [cloudRecord('drive', 'webdav'), cloudRecord('nas', 'webdav')];
      },
    } as unknown as CloudsService;

    beforeAll(async () => {
      fresh = await freshDb(dialect);
      const drive = new MemoryStore();
      for (let i = 0; i < FILES; i++) drive.writeFile(`/Big/f${i}.bin`, Buffer.alloc(SIZE, i + 1));
      stores.set('drive', drive);
      stores.set('nas', new MemoryStore());
      const now = Date.now();
      await new UsersRepository(fresh.db.kysely).insert({
        id: 'u1',
        email: 'u1@example.com',
        password_hash: 'x',
        nickname: '',
        firstname: '',
        lastname: '',
        country: '',
        mobile: '',
        avatar: '',
        notify_email: '',
        remind_me: 0,
        language: 'en',
        created_at: now,
        updated_at: now,
      });
    });

    afterAll(async () => {
      await Promise.all(extra.map((db) => db.close()));
      await fresh?.cleanup();
    });

    function worker() {
      const db = createDb({ url: fresh.url, poolSize: 3 });
      extra.push(db);
      const users = new UsersService({
        users: new UsersRepository(db.kysely),
        plans: new PlansRepository(db.kysely),
        billingMode: 'test',
      });
      const queue = new DatabaseJobQueue<TaskJob>(db, { name: 'tasks', leaseMs: 2000, pollMs: 50 });
      const runner = new TaskRunner({
        repo: new TasksRepository(db.kysely),
        db: db.kysely,
        progress: new DatabaseProgressStore(db.kysely),
        clouds,
        users,
        mailer: { send: async () => ({ messageId: '', deliveredTo: 'none' }), close: () => undefined },
        billingMode: 'test',
        appUrl: 'http://127.0.0.1',
        log: pino({ level: 'silent' }),
        transfers: 2,
        progressEveryMs: 10,
      });
      return { db, queue, runner, users };
    }

    it('charges a file copied again after its checkpoint was lost only once', async () => {
      const api = worker();
      await api.users.grantLicense('u1', 'month');
      const allowance = await api.users.remainingTraffic('u1');
      const service = new TasksService({
        repo: new TasksRepository(api.db.kysely),
        progress: new DatabaseProgressStore(api.db.kysely),
        queue: api.queue,
        clouds,
        users: api.users,
        billingMode: 'test',
        log: pino({ level: 'silent' }),
      });
      const created = await service.create(
        'u1',
        {
          task_type: 0,
          from_cloud: { cloud_id: 'drive', paths: ['/Big'] },
          to_cloud: { cloud_id: 'nas', path: '/Backup' },
          same_name_policy: 'overwrite',
        },
        'UTC',
      );
      const id = created.task?.id ?? '';
      const writes = () =>
        fresh.db.kysely
          .selectFrom('task_checkpoints')
          .select('key')
          .where('task_id', '=', id)
          // A finished file's row (the run's own rows start with #).
          .where('key', 'not like', '#%')
          .execute();

      const first = worker();
      await first.queue.process(first.runner.handle, { concurrency: 1 });
      await until('a few checkpoints', async () => (await writes()).length >= 4);
      await first.queue.close({ abortRunning: true });
      // The process died after charging two files and before writing their checkpoints.
      const lost = (await writes()).slice(0, 2).map((r) => r.key);
      await fresh.db.kysely.deleteFrom('task_checkpoints').where('task_id', '=', id).where('key', 'in', lost).execute();

      const second = worker();
      await second.queue.process(second.runner.handle, { concurrency: 1 });
      const repo = new TasksRepository(fresh.db.kysely);
      await until('the run to end', async () => (await repo.getById(id))?.state === TaskState.completed);
      await second.queue.close();
      await api.queue.close();

      for (let i = 0; i < FILES; i++) expect(stores.get('nas')?.exists(`/Backup/Big/f${i}.bin`)).toBe(true);
      expect(allowance - (await api.users.remainingTraffic('u1'))).toBe(FILES * SIZE);
    }, 60_000);
  });
}
