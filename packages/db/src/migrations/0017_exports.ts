import type { Kysely } from 'kysely';

/**
 * Exports and office documents (issue 37).
 * - `export_tasks`: a file written into a cloud on behalf of its owner (a user, `user_id`, or a
 *   visitor, `visitor_id`): where it goes, its size, the bytes written so far and its status (0
 *   waiting or running, 1 success, -2 failure, with the error's code, message key and parameters).
 *   `updated_at` (ms) moves at least every few seconds while it runs, so an export whose process
 *   died is seen as failed.
 * - `wopi_locks`: the WOPI lock of a document (`file_id`, the WOPI host's id of one file of one
 *   cloud), held until `expires_at` (ms; 30 minutes after it was taken or refreshed).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('export_tasks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text')
    .addColumn('visitor_id', 'text')
    .addColumn('cloud_id', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('file_name', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('transferred', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('error_code', 'integer')
    .addColumn('error_key', 'text')
    .addColumn('error_params', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('export_tasks_user').on('export_tasks').column('user_id').execute();
  await db.schema.createIndex('export_tasks_visitor').on('export_tasks').column('visitor_id').execute();
  await db.schema
    .createTable('wopi_locks')
    .addColumn('file_id', 'text', (c) => c.primaryKey())
    .addColumn('lock_id', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('wopi_locks').execute();
  await db.schema.dropTable('export_tasks').execute();
}
