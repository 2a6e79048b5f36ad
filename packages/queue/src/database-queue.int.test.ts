import { afterAll, beforeAll } from 'vitest';
import { createDb, type Db, type Dialect } from '@skyferry/db';
import { freshDb } from '@skyferry/db/testing';
import { DatabaseJobQueue } from './database-queue.ts';
import type { QueueOptions } from './types.ts';
import { jobQueueContract, type QueueHarness, type TestQueue } from './testkit/contract.ts';

function databaseHarness(dialect: Dialect): () => QueueHarness {
  let base: Awaited<ReturnType<typeof freshDb>> | undefined;
  const dbs: Db[] = [];
  beforeAll(async () => {
    base = await freshDb(dialect);
  });
  afterAll(async () => {
    await Promise.all(dbs.map((db) => db.close()));
    await base?.cleanup();
  });
  return () => ({
    create<T>(options: QueueOptions): TestQueue<T> {
      if (!base) throw new Error('database not ready');
      // Each queue object gets its own connection, as another process would.
      const db = createDb({ url: base.url, poolSize: 3 });
      dbs.push(db);
      return new DatabaseJobQueue<T>(db, options);
    },
  });
}

jobQueueContract('database, SQLite', databaseHarness('sqlite'));
jobQueueContract('database, PostgreSQL', databaseHarness('postgres'));
