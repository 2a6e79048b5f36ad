import { expect, it } from 'vitest';
import { describeEachDialect } from '@skyferry/db/testing';
import { runTransfer, streamTransfer, type TwoWayRecord } from '@skyferry/engine';
import { MemoryProvider, MemoryStore } from '@skyferry/engine/testing';
import { SyncPairLocksRepository } from './sync-pair-locks.ts';
import { DatabaseProgressStore } from './task-progress.ts';
import { checkpointRowKey, CompiledQuery, sql } from '@skyferry/db';
import { fileRowKey, TaskCheckpointStore, TaskTwoWayStateStore } from './task-run-state.ts';

describeEachDialect('task run state', (getDb, dialect) => {
  it('records finished items, many at once in few writes, and reads them back', async () => {
    const store = new TaskCheckpointStore(getDb().kysely, 'task-a');
    const other = new TaskCheckpointStore(getDb().kysely, 'task-b');
    await Promise.all(
      Array.from({ length: 1000 }, (_, i) =>
        store.markDone(`write|target|/s|/t|/f-${i}|${i}||`, { action: i % 10 ? 'copy' : 'update', bytes: i }),
      ),
    );
    await other.markDone('write|target|/s|/t|/f-1|1||', { action: 'copy', bytes: 1 });
    // The same key twice: the later record wins.
    await Promise.all([
      store.markDone('delete|target|/s|/t|/old|5||', { action: 'delete', bytes: 5 }),
      store.markDone('delete|target|/s|/t|/old|5||', { action: 'delete', bytes: 6 }),
    ]);
    expect(await store.count()).toBe(1001);
    expect(await store.get('write|target|/s|/t|/f-7|7||')).toEqual({ action: 'copy', bytes: 7 });
    expect(await store.get('delete|target|/s|/t|/old|5||')).toEqual({ action: 'delete', bytes: 6 });
    expect(await store.get('nothing')).toBeUndefined();
    const many = await store.getMany(['write|target|/s|/t|/f-1|1||', 'write|target|/s|/t|/f-999|999||', 'none']);
    expect([...many.keys()].sort()).toEqual(['write|target|/s|/t|/f-1|1||', 'write|target|/s|/t|/f-999|999||']);
    expect(await store.tally()).toEqual({
      count: 1001,
      bytes: (999 * 1000) / 2 + 6,
      byAction: { copy: 900, update: 100, delete: 1 },
    });
  });

  it('keeps each finished file in a small row: a digest of its key, and the path it was read from only for a move', async () => {
    const key = 'write|target|/Photos|/Backup|2024/06/IMG_0412.jpg|3412000|1717000000000|';
    const read = { path: '/Photos/2024/06/IMG_0412.jpg', size: 3_412_000 };
    const plain = new TaskCheckpointStore(getDb().kysely, 'task-small');
    const moving = new TaskCheckpointStore(getDb().kysely, 'task-move', '', { keepReadPaths: true });
    await plain.markDone(key, { action: 'copy', bytes: 3_412_000, read });
    await moving.markDone(key, { action: 'copy', bytes: 3_412_000, read });
    const rows = await getDb()
      .kysely.selectFrom('task_checkpoints')
      .select(['task_id', 'key', 'info'])
      .where('task_id', 'in', ['task-small', 'task-move'])
      .orderBy('task_id')
      .execute();
    expect(rows.map((r) => r.key.length)).toEqual([22, 22]);
    expect(rows.map((r) => r.key).join()).not.toContain('IMG_0412');
    expect(rows.find((r) => r.task_id === 'task-small')?.info).not.toContain('IMG_0412');
    // Found again by the engine's key; a move still knows what each file was written from.
    expect(await plain.get(key)).toEqual({ action: 'copy', bytes: 3_412_000 });
    expect(await moving.get(key)).toEqual({ action: 'copy', bytes: 3_412_000, read });
    expect(await moving.all()).toEqual([{ action: 'copy', bytes: 3_412_000, read }]);
    expect([...(await plain.getMany([key, 'other'])).keys()]).toEqual([key]);
  });

  it("finds the rows an earlier version wrote (a digest of the whole key) beside today's, in a run resumed across an upgrade", async () => {
    const db = getDb().kysely;
    const key = (i: number) => `write|target|/Photos|/Backup|2024/${i % 3}/IMG_${i}.jpg|${i}|1717000000000|`;
    // Rows of the interrupted attempt, as the earlier version keyed them.
    await db
      .insertInto('task_checkpoints')
      .values(
        [0, 1, 2].map((i) => ({
          task_id: 'task-upgraded',
          key: checkpointRowKey(key(i)),
          info: `{"action":"copy","bytes":${i}}`,
        })),
      )
      .execute();
    const store = new TaskCheckpointStore(db, 'task-upgraded');
    await store.markDone(key(3), { action: 'copy', bytes: 3 });
    const found = await store.getMany([0, 1, 2, 3, 4].map(key));
    expect([...found.keys()].sort()).toEqual([0, 1, 2, 3].map(key).sort());
    expect(await store.get(key(1))).toEqual({ action: 'copy', bytes: 1 });
    expect((await store.tally()).count).toBe(4);
    // Files of one folder share the start of their row keys (they sit together in the table).
    expect(fileRowKey(key(3)).slice(0, 8)).toBe(fileRowKey(key(6)).slice(0, 8));
    expect(fileRowKey(key(3)).slice(0, 8)).not.toBe(fileRowKey(key(4)).slice(0, 8));
    expect(fileRowKey(key(3))).toHaveLength(22);
  });

  it('gives the space of a run’s finished files back when the run ends', async () => {
    const db = getDb().kysely;
    // The table's own pages in use (PostgreSQL: its heap; SQLite: the database's pages not free).
    const used = async () => {
      if (dialect === 'postgres') {
        const r = await sql<{ n: string }>`select pg_relation_size('task_checkpoints') as n`.execute(db);
        return Number(r.rows[0]?.n);
      }
      const pages = await sql<{ page_count: number }>`pragma page_count`.execute(db);
      const free = await sql<{ freelist_count: number }>`pragma freelist_count`.execute(db);
      return ((pages.rows[0]?.page_count ?? 0) - (free.rows[0]?.freelist_count ?? 0)) * 4096;
    };
    // PostgreSQL: the primary key's index too (a vacuum leaves its emptied pages with it).
    const indexes = async () =>
      Number((await sql<{ n: string }>`select pg_indexes_size('task_checkpoints') as n`.execute(db)).rows[0]?.n ?? 0);
    const indexStart = dialect === 'postgres' ? await indexes() : 0;
    const before = await used();
    const store = new TaskCheckpointStore(db, 'task-space');
    await Promise.all(
      Array.from({ length: 5000 }, (_, i) =>
        store.markDone(`write|target|/s|/t|/d${i % 50}/f-${i}|${i}|1717000000000|`, { action: 'copy', bytes: i }),
      ),
    );
    expect(await used()).toBeGreaterThan(before + 200_000);
    const indexBefore = dialect === 'postgres' ? await indexes() : 0;
    await store.clear();
    expect(await store.count()).toBe(0);
    expect(await used()).toBeLessThan(before + 40_000);
    if (dialect === 'postgres') {
      expect(indexBefore).toBeGreaterThan(indexStart + 200_000);
      expect(await indexes()).toBeLessThan(indexStart + 40_000);
      // No invalid copy of the index is left behind.
      const copies = await sql<{
        n: string;
      }>`select count(*) as n from pg_indexes where tablename = 'task_checkpoints'`.execute(db);
      expect(Number(copies.rows[0]?.n)).toBe(1);
    }
  });

  it('forgets a run’s finished files a few thousand at a time, the event loop turning between (SQLite runs each statement on it)', async () => {
    const db = getDb().kysely;
    const store = new TaskCheckpointStore(db, 'task-many');
    const other = new TaskCheckpointStore(db, 'task-kept');
    const done: Promise<void>[] = [];
    for (let i = 0; i < 9000; i++)
      done.push(store.markDone(`write|target|/s|/t|/d${i % 90}/f-${i}|${i}||`, { action: 'copy', bytes: i }));
    await Promise.all(done);
    await store.addTempFolder({ side: 'target', dir: '/t/d1', tag: 'abc' });
    await other.markDone('write|target|/s|/t|/x|1||', { action: 'copy', bytes: 1 });
    let turns = 0;
    let ticking = true;
    const tick = () => {
      if (!ticking) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    await store.clear();
    ticking = false;
    expect(await store.count()).toBe(1); // the temporary-file folder's record stays
    expect(await store.tempFolders()).toEqual([{ side: 'target', dir: '/t/d1', tag: 'abc' }]);
    expect(await other.count()).toBe(1);
    if (dialect === 'sqlite') expect(turns).toBeGreaterThanOrEqual(4);
  });

  it('finds its own rows (plan figures, folders of temporary files, announced batches) through the key’s index, not by reading every file’s row', async () => {
    const base = getDb().kysely;
    // Every statement the store runs, compiled, to ask SQLite how it would run it.
    const statements: CompiledQuery[] = [];
    const db = base.withPlugin({
      transformQuery: (args) => {
        statements.push(base.getExecutor().compileQuery(args.node, args.queryId));
        return args.node;
      },
      transformResult: async (args) => args.result,
    });
    const store = new TaskCheckpointStore(db, 'task-own', 'run-1');
    const done: Promise<void>[] = [];
    for (let i = 0; i < 3000; i++)
      done.push(store.markDone(`write|target|/s|/t|/d${i % 30}/f-${i}|${i}||`, { action: 'copy', bytes: i }));
    await Promise.all(done);
    await store.addTempFolder({ side: 'target', dir: '/t/d1', tag: 'abc' });
    await store.intend([['write|target|/s|/t|/d1/f-1|1||', 'copy']]);
    statements.length = 0;
    await store.savePlanned({ copy: 3000, update: 0, skip: 0 });
    expect(await store.planned()).toEqual({ copy: 3000, update: 0, skip: 0 });
    expect(await store.tempFolders()).toEqual([{ side: 'target', dir: '/t/d1', tag: 'abc' }]);
    expect((await store.intents())?.('write|target|/s|/t|/d1/f-1|1||')).toBe('copy');
    expect(await store.get('write|target|/s|/t|/d1/f-1|1||')).toEqual({ action: 'copy', bytes: 1 });
    expect(statements.length).toBeGreaterThanOrEqual(5);
    if (dialect !== 'sqlite') return; // PostgreSQL's statements do not run on the event loop
    for (const st of statements) {
      const plan = await base.executeQuery<{ detail: string }>(
        CompiledQuery.raw(`explain query plan ${st.sql}`, [...st.parameters]),
      );
      for (const { detail } of plan.rows.filter((r) => r.detail.includes('task_checkpoints')))
        expect(detail, st.sql).toMatch(/\(task_id=\? AND key(=|>|<| IN)/);
    }
  });

  it('commits the items that finish in one turn of the event loop together, not one by one', async () => {
    let inserts = 0;
    const db = getDb().kysely.withPlugin({
      transformQuery: (args) => {
        if (args.node.kind === 'InsertQueryNode') inserts++;
        return args.node;
      },
      transformResult: (args) => Promise.resolve(args.result),
    });
    const store = new TaskCheckpointStore(db, 'task-turn');
    // Small files finishing one after another without a pause (each a few microtasks apart).
    const done: Promise<void>[] = [];
    for (let i = 0; i < 300; i++) {
      done.push(store.markDone(`write|target|/s|/t|/g-${i}|${i}||`, { action: 'copy', bytes: i }));
      for (let t = 0; t < 5; t++) await Promise.resolve();
    }
    await Promise.all(done);
    expect(await store.count()).toBe(300);
    // One or two batches, each written as at most one statement of each of the sizes 256, 128, ... 1.
    expect(inserts).toBeLessThanOrEqual(2 * 9);
  });

  it('records the folders a run writes temporary files into, keeps them across clear(), forgets them when told', async () => {
    const store = new TaskCheckpointStore(getDb().kysely, 'task-temps');
    const other = new TaskCheckpointStore(getDb().kysely, 'task-temps-2');
    const a = { side: 'target' as const, dir: '/Backup/a', tag: '0badc0de' };
    const b = { side: 'source' as const, dir: '/Photos', tag: '0badc0de' };
    await Promise.all([store.addTempFolder(a), store.addTempFolder(b), store.addTempFolder(a)]);
    await other.addTempFolder({ ...a, tag: '12345678' });
    await store.markDone('write|target|/s|/t|/x|1||', { action: 'copy', bytes: 1 });
    // Neither a finished item nor counted as one.
    expect((await store.tally()).count).toBe(1);
    await store.clear();
    expect((await store.tempFolders()).sort((x, y) => x.dir.localeCompare(y.dir))).toEqual([a, b]);
    await store.removeTempFolders([a]);
    expect(await store.tempFolders()).toEqual([b]);
    expect(await other.tempFolders()).toEqual([{ ...a, tag: '12345678' }]);
  });

  it("keeps the first attempt's plan figures for its run, past clear(), out of the tally; the next run's replace them", async () => {
    const store = new TaskCheckpointStore(getDb().kysely, 'task-planned', 'job-1');
    expect(await store.planned()).toBeUndefined();
    await store.savePlanned({ copy: 2000, update: 3, skip: 7 });
    await store.markDone('write|target|/s|/t|/x|1||', { action: 'copy', bytes: 1 });
    // Another attempt of the run, after the first one's worker was killed after clearing.
    await store.clear();
    expect((await store.tally()).count).toBe(0);
    const again = new TaskCheckpointStore(getDb().kysely, 'task-planned', 'job-1');
    expect(await again.planned()).toEqual({ copy: 2000, update: 3, skip: 7 });
    // The next run has none, and keeps its own only.
    const next = new TaskCheckpointStore(getDb().kysely, 'task-planned', 'job-2');
    expect(await next.planned()).toBeUndefined();
    await next.savePlanned({ copy: 1, update: 0, skip: 2009 });
    expect(await again.planned()).toBeUndefined();
    expect(await next.planned()).toEqual({ copy: 1, update: 0, skip: 2009 });
  });

  for (const [how, run] of [
    ['planned whole', runTransfer],
    ['streamed', streamTransfer],
  ] as const) {
    it(`a run (${how}) whose worker was killed after it ended (checkpoints cleared, outcome not stored) is counted whole when taken over`, async () => {
      const source = new MemoryProvider({ store: new MemoryStore() });
      for (let i = 0; i < 20; i++)
        source.store.writeFile(`/src/f${i}.txt`, `file ${i}`, { mtime: Date.UTC(2025, 0, 1) });
      const target = new MemoryProvider({ store: new MemoryStore() });
      const attempt = () =>
        run({
          source,
          target,
          mode: 'migrate',
          sourcePaths: ['/src'],
          targetPath: '/t',
          sameNamePolicy: 'skip',
          checkpoints: new TaskCheckpointStore(getDb().kysely, `task-window-${how}`, 'job-7'),
        });
      const first = await attempt();
      expect(first.result.summary).toMatchObject({ added: 20, skipped: 0 });
      // The worker dies here; another takes the job over and runs it again.
      const second = await attempt();
      expect(second.result.summary).toMatchObject({ added: 20, skipped: 0, failed: 0 });
      expect([second.result.successCount, second.result.totalCount]).toEqual([20, 20]);
    });
  }

  it('keeps the batches of files a streamed run announces until each is settled, out of the tally and the records; clear() forgets them', async () => {
    const store = new TaskCheckpointStore(getDb().kysely, 'task-intents', 'job-1');
    const other = new TaskCheckpointStore(getDb().kysely, 'task-intents-other', 'job-2');
    expect(await store.intents()).toBeUndefined();
    const key = (i: number) => `write|target|/s|/t|/d/f-${i}|${i}|1700000000000|`;
    const first = await store.intend(Array.from({ length: 600 }, (_, i) => [key(i), i % 3 ? 'copy' : 'update']));
    const second = await store.intend([
      [key(600), 'copy'],
      ['mkdir|target|/s|/t|/d|||', 'mkdir'],
    ]);
    await other.intend([[key(601), 'copy']]);
    const meant = await store.intents();
    expect(meant?.(key(1))).toBe('copy');
    expect(meant?.(key(3))).toBe('update');
    expect(meant?.(key(600))).toBe('copy');
    // Only writes are looked up; another task's batches are its own.
    expect(meant?.('mkdir|target|/s|/t|/d|||')).toBeUndefined();
    expect(meant?.(key(601))).toBeUndefined();
    expect(meant?.(key(602))).toBeUndefined();
    // Announcing is not doing: no finished file counted, none found as a record.
    expect(await store.tally()).toEqual({ count: 0, bytes: 0, byAction: {} });
    expect(await store.get(key(1))).toBeUndefined();
    expect(await store.all()).toEqual([]);
    // A settled batch is forgotten; the other stays.
    await store.intentsDone(first);
    expect((await store.intents())?.(key(1))).toBeUndefined();
    expect((await store.intents())?.(key(600))).toBe('copy');
    await store.intentsDone(second);
    expect(await store.intents()).toBeUndefined();
    // A run's end forgets what it announced and never settled (a stop cut it off).
    await other.markDone(key(601), { action: 'copy', bytes: 601 });
    await other.clear();
    expect(await other.intents()).toBeUndefined();
    expect(await other.count()).toBe(0);
  });

  it('holds a pair of folders for one run at a time; an expired hold is taken over', async () => {
    const locks = new SyncPairLocksRepository(getDb().kysely);
    const t0 = 1_000_000;
    expect(await locks.acquire('pair-1', 'run-a', 'task-a', 1000, t0)).toEqual({ taken: true });
    expect(await locks.acquire('pair-1', 'run-b', 'task-b', 1000, t0 + 10)).toEqual({ taken: false, taskId: 'task-a' });
    // Another pair is free; the same run asking again holds it still.
    expect(await locks.acquire('pair-2', 'run-b', 'task-b', 1000, t0 + 10)).toEqual({ taken: true });
    expect(await locks.renew('pair-1', 'run-a', 1000, t0 + 900)).toBe(true);
    expect(await locks.acquire('pair-1', 'run-b', 'task-b', 1000, t0 + 1500)).toEqual({
      taken: false,
      taskId: 'task-a',
    });
    // Not renewed for longer than it lasts: the worker is taken for dead.
    expect(await locks.acquire('pair-1', 'run-b', 'task-b', 1000, t0 + 2000)).toEqual({ taken: true });
    expect(await locks.renew('pair-1', 'run-a', 1000, t0 + 2001)).toBe(false);
    await locks.release('pair-1', 'run-a'); // not its own any more: nothing happens
    expect(await locks.acquire('pair-1', 'run-c', 'task-c', 1000, t0 + 2002)).toEqual({
      taken: false,
      taskId: 'task-b',
    });
    await locks.release('pair-1', 'run-b');
    expect(await locks.acquire('pair-1', 'run-c', 'task-c', 1000, t0 + 2003)).toEqual({ taken: true });
  });

  it('keeps two-way state per task: staged until a commit, the previous state intact on discard', async () => {
    const a = new TaskTwoWayStateStore(getDb().kysely, 'sync-a');
    const b = new TaskTwoWayStateStore(getDb().kysely, 'sync-b');
    const rec = (rel: string, size = 1): TwoWayRecord => ({
      rel,
      kind: 'file',
      source: { size, mtime: 1000 },
      target: { size, mtime: 1000 },
    });
    expect(await a.hasState()).toBe(false);
    await a.beginStaging();
    await a.stage([rec('/one.txt'), rec('/docs/two.txt'), { rel: '/docs', kind: 'dir' }]);
    expect(await a.hasState()).toBe(false);
    await a.commit();
    expect(await a.hasState()).toBe(true);
    expect(await b.hasState()).toBe(false);
    expect((await a.loadFolder('/')).map((r) => r.rel).sort()).toEqual(['/docs', '/one.txt']);
    expect(await a.loadFolder('/docs')).toEqual([rec('/docs/two.txt')]);
    // A run that fails stages something else and discards it: the committed state stays.
    await a.beginStaging();
    await a.stage([rec('/three.txt')]);
    await a.discard();
    expect((await a.loadFolder('/')).map((r) => r.rel).sort()).toEqual(['/docs', '/one.txt']);
    // A successful run whose folders were empty still leaves state (nothing to delete next time).
    await a.beginStaging();
    await a.commit();
    expect(await a.hasState()).toBe(true);
    expect(await a.loadFolder('/')).toEqual([]);
  });

  it('stores live progress per task', async () => {
    const progress = new DatabaseProgressStore(getDb().kysely);
    const snapshot = {
      state: 2,
      progress: { percentage: 12.5, speed: 1000, transferred: 125, length: 1000, eta: 1 },
      totalCounts: 8,
      finishedCounts: 1,
      updatedAt: 1_700_000_000_000,
    };
    await progress.set('p-1', snapshot);
    await progress.set('p-1', { ...snapshot, finishedCounts: 2 });
    expect(await progress.get('p-1')).toEqual({ ...snapshot, finishedCounts: 2 });
    expect([...(await progress.getMany(['p-1', 'p-2'])).keys()]).toEqual(['p-1']);
    await progress.delete('p-1');
    expect(await progress.get('p-1')).toBeUndefined();
  });
});
