import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable, type Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { Code, TaskState, type CreateTaskBody } from '@skyferry/contract';
import { createDb, type Db } from '@skyferry/db';
import { freshDb } from '@skyferry/db/testing';
import { openLocal, type Provider, type SrcInfo, type WriteOptions } from '@skyferry/providers';
import { DatabaseJobQueue } from '@skyferry/queue';
import { ApiError } from '../../http/errors.ts';
import { DatabaseProgressStore } from '../../repositories/task-progress.ts';
import { TasksRepository } from '../../repositories/tasks.ts';
import type { CloudsService } from '../clouds.ts';
import type { UsersService } from '../users.ts';
import { TaskRunner } from './runner.ts';
import { cloudRecord, until } from './runner-test-support.ts';
import { TasksService, type TaskJob } from './tasks-service.ts';

/**
 * Server tasks on folders of this machine's disk (two "clouds" over two real folders), a real
 * database and queue: symbolic links are left alone and reported in the task's result (or followed
 * when the task asks), and two syncs of one pair of folders never run at once across workers.
 */

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`tasks on folders with links, and syncs of one pair [${dialect}]`, () => {
    let fresh: Awaited<ReturnType<typeof freshDb>>;
    let base: string;
    const dbs: Db[] = [];
    const logs: Array<Record<string, unknown>> = [];
    /** Every write of a file, by path below the cloud. */
    const puts: string[] = [];
    const log = pino(
      { level: 'info' },
      new Writable({
        write(chunk: Buffer, _enc, cb) {
          for (const line of chunk.toString().split('\n'))
            if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
          cb();
        },
      }),
    );
    const clouds = {
      async open(_identity: unknown, id: string) {
        if (id !== 'here' && id !== 'there') throw new ApiError(Code.NOT_FOUND, 'not_found');
        const real = await openLocal({ path: join(base, id) }, { localRoots: [base] });
        // Writes are logged and a little slow, so two runs started together meet.
        const provider = Object.create(real, {
          put: {
            value: async (path: string, body: Readable, src: SrcInfo, opts?: WriteOptions) => {
              puts.push(`${id}:${path}`);
              await new Promise((r) => setTimeout(r, 25));
              return real.put(path, body, src, opts);
            },
          },
          // Small files are written whole (the engine's fast path): logged and slowed the same way.
          putSmall: {
            value: async (path: string, data: Buffer, src: SrcInfo, opts?: WriteOptions) => {
              puts.push(`${id}:${path}`);
              await new Promise((r) => setTimeout(r, 25));
              return (real.putSmall as NonNullable<Provider['putSmall']>).call(real, path, data, src, opts);
            },
          },
        }) as Provider;
        return { cloud: cloudRecord(id, 'local'), provider };
      },
      async listOwned() {
        return [cloudRecord('here', 'local'), cloudRecord('there', 'local')];
      },
    } as unknown as CloudsService;
    const users = { isPremium: async () => true, get: async () => undefined } as unknown as UsersService;

    beforeAll(async () => {
      fresh = await freshDb(dialect);
      base = mkdtempSync(join(tmpdir(), 'skyferry-runner-links-'));
    });
    afterAll(async () => {
      await Promise.all(dbs.map((db) => db.close()));
      await fresh?.cleanup();
      rmSync(base, { recursive: true, force: true });
    });

    function worker() {
      const db = createDb({ url: fresh.url, poolSize: 3 });
      dbs.push(db);
      const queue = new DatabaseJobQueue<TaskJob>(db, { name: 'tasks', leaseMs: 2000, pollMs: 50 });
      const repo = new TasksRepository(db.kysely);
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
        pairWaitMs: 50,
      });
      const service = new TasksService({
        repo,
        progress: new DatabaseProgressStore(db.kysely),
        queue,
        clouds,
        users,
        billingMode: 'off',
        log,
      });
      return { queue, runner, service, repo };
    }

    const sync = (from: string, to: string, mode: 'two_way' | 'one_way', more: Partial<CreateTaskBody> = {}) =>
      ({
        task_type: 1,
        sync_mode: mode,
        from_cloud: { cloud_id: from, paths: ['/docs'] },
        to_cloud: { cloud_id: to, path: '/docs' },
        ...more,
      }) satisfies CreateTaskBody;

    it('leaves a symbolic link alone and lists it in the dry run and the result; follows it when the task asks', async () => {
      mkdirSync(join(base, 'here', 'docs', 'sub'), { recursive: true });
      mkdirSync(join(base, 'there', 'docs'), { recursive: true });
      writeFileSync(join(base, 'here', 'docs', 'sub', 'a.txt'), 'a');
      symlinkSync('..', join(base, 'here', 'docs', 'sub', 'up'));
      symlinkSync('sub/a.txt', join(base, 'here', 'docs', 'a-link.txt'));
      const w = worker();
      const dry = await w.service.create('u1', sync('here', 'there', 'one_way', { dry_run: true }), 'UTC');
      expect(dry.plan?.items.filter((i) => i.reason === 'symbolic_link')).toEqual([
        expect.objectContaining({ action: 'skip', source_path: '/docs/a-link.txt', link: 'not_followed' }),
        expect.objectContaining({ action: 'skip', source_path: '/docs/sub/up', link: 'not_followed' }),
      ]);
      const created = await w.service.create('u1', sync('here', 'there', 'one_way'), 'UTC');
      expect(created.task?.follow_links).toBe(false);
      await w.queue.process(w.runner.handle, { concurrency: 1 });
      const id = created.task?.id ?? '';
      await until('the run to end', async () => (await w.repo.getById(id))?.state === TaskState.completed);
      const result = JSON.parse((await w.repo.getById(id))?.result ?? '{}') as Record<string, unknown>;
      expect(result).toMatchObject({ outcome: 'success', added: 1, failed: 0 });
      expect(result.set_aside).toEqual([
        { side: 'source', path: '/docs/a-link.txt', reason: 'symbolic_link', detail: 'not_followed' },
        { side: 'source', path: '/docs/sub/up', reason: 'symbolic_link', detail: 'not_followed' },
      ]);
      expect(readdirSync(join(base, 'there', 'docs'), { recursive: true }).sort()).toEqual(['sub', 'sub/a.txt']);

      // Asked to follow: the file link is copied as the file; the link up the tree is a loop.
      const following = await w.service.create('u1', sync('here', 'there', 'one_way', { follow_links: true }), 'UTC');
      expect(following.task?.follow_links).toBe(true);
      const id2 = following.task?.id ?? '';
      await until('the run to end', async () => (await w.repo.getById(id2))?.state === TaskState.completed);
      const result2 = JSON.parse((await w.repo.getById(id2))?.result ?? '{}') as Record<string, unknown>;
      expect(result2).toMatchObject({ outcome: 'success', added: 1 });
      expect(result2.set_aside).toEqual([
        { side: 'source', path: '/docs/sub/up', reason: 'symbolic_link', detail: 'loop' },
      ]);
      expect(readFileSync(join(base, 'there', 'docs', 'a-link.txt'), 'utf8')).toBe('a');
      await w.queue.close();
    }, 120_000);

    it('two syncs of one pair of folders, started at once on two workers, run one after the other', async () => {
      rmSync(join(base, 'here'), { recursive: true, force: true });
      rmSync(join(base, 'there'), { recursive: true, force: true });
      mkdirSync(join(base, 'here', 'docs'), { recursive: true });
      mkdirSync(join(base, 'there', 'docs'), { recursive: true });
      for (let i = 0; i < 16; i++) writeFileSync(join(base, 'here', 'docs', `f${i}.txt`), `file ${i}`);
      puts.length = 0;
      logs.length = 0;
      const a = worker();
      const b = worker();
      // The same pair, named in either order.
      const one = await a.service.create('u1', sync('here', 'there', 'two_way'), 'UTC');
      const two = await a.service.create('u1', sync('there', 'here', 'two_way'), 'UTC');
      await Promise.all([
        a.queue.process(a.runner.handle, { concurrency: 1 }),
        b.queue.process(b.runner.handle, { concurrency: 1 }),
      ]);
      const ids = [one.task?.id ?? '', two.task?.id ?? ''];
      await until('both runs to end', async () => {
        const states = await Promise.all(ids.map(async (id) => (await a.repo.getById(id))?.state));
        return states.every((s) => s === TaskState.completed);
      });
      await Promise.all([a.queue.close(), b.queue.close()]);
      // Both started; one waited for the other, which had copied every file once: nothing was left to do.
      const started = logs.filter((l) => l.msg === 'task run started').map((l) => l.task);
      expect(started.sort()).toEqual([...ids].sort());
      expect(logs.filter((l) => l.msg === 'waiting for another sync of the same folders')).toHaveLength(1);
      expect(puts.sort()).toEqual(Array.from({ length: 16 }, (_, i) => `there:/docs/f${i}.txt`).sort());
      expect(readdirSync(join(base, 'there', 'docs')).sort()).toEqual(readdirSync(join(base, 'here', 'docs')).sort());
      const holds = await fresh.db.kysely.selectFrom('sync_pair_locks').selectAll().execute();
      expect(holds).toEqual([]);
    }, 120_000);
  });
}
