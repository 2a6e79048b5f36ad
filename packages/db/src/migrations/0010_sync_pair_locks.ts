import type { Kysely } from 'kysely';

/**
 * Symbolic links and one run of a pair at a time (issue 45).
 * - `tasks.follow_links`: 1 when the task's runs follow symbolic links (default 0: each is left
 *   alone and reported).
 * - `sync_pair_locks`: a lease per pair of folders (`pair_key`, a hash of both clouds and paths)
 *   held by the run syncing it (`owner`, `task_id`), renewed while it runs; a lease past
 *   `expires_at` (ms; a worker that died) can be taken.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('tasks')
    .addColumn('follow_links', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createTable('sync_pair_locks')
    .addColumn('pair_key', 'text', (c) => c.primaryKey())
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('task_id', 'text', (c) => c.notNull())
    .addColumn('acquired_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('sync_pair_locks').execute();
  await db.schema.alterTable('tasks').dropColumn('follow_links').execute();
}
