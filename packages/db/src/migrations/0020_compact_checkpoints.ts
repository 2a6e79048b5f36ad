import { createHash } from 'node:crypto';
import { SqliteAdapter, sql, type Kysely } from 'kysely';

/**
 * Smaller checkpoint rows (issue 43): a finished file's key is kept as a 22-character digest of
 * the engine's key (which repeats both paths, the size and the time) instead of the key itself,
 * and on SQLite the table has no separate rowid (the primary key is the table), so each row is
 * stored once. Keys of the run's own rows (`#...`) stay readable. Rows of runs under way are
 * carried over with their keys turned into digests, so a run resumed after the upgrade still
 * skips what it finished.
 */
export function checkpointRowKey(key: string): string {
  return key.startsWith('#') ? key : createHash('sha256').update(key).digest('base64url').slice(0, 22);
}

async function recreate(db: Kysely<unknown>, convert: (key: string) => string): Promise<void> {
  const rows = await sql<{
    task_id: string;
    key: string;
    info: string;
  }>`select task_id, key, info from task_checkpoints`.execute(db);
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  await db.schema.dropTable('task_checkpoints').execute();
  let create = db.schema
    .createTable('task_checkpoints')
    .addColumn('task_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('info', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('task_checkpoints_pk', ['task_id', 'key']);
  if (sqlite) create = create.modifyEnd(sql`without rowid`);
  await create.execute();
  const seen = new Set<string>();
  const values = [];
  for (const r of rows.rows) {
    const key = convert(r.key);
    if (seen.has(`${r.task_id}\n${key}`)) continue;
    seen.add(`${r.task_id}\n${key}`);
    values.push({ task_id: r.task_id, key, info: r.info });
  }
  for (let i = 0; i < values.length; i += 300) {
    await (db as Kysely<{ task_checkpoints: { task_id: string; key: string; info: string } }>)
      .insertInto('task_checkpoints')
      .values(values.slice(i, i + 300))
      .execute();
  }
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await recreate(db, checkpointRowKey);
}

/** Back to the readable keys' table: digests cannot be turned back, so finished files' rows are dropped (a resumed run copies them again). */
export async function down(db: Kysely<unknown>): Promise<void> {
  await recreate(db, (key) => key);
  await sql`delete from task_checkpoints where key not like '#%'`.execute(db);
}
