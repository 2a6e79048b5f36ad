import type { Kysely } from 'kysely';

/**
 * Clean-up scans ("Free up storage"): one row per scan with its live progress, and its results
 * (empty folders, duplicate files, large files). A scan belongs to a user or a visitor; its
 * results are read only through it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('cleanup_tasks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text')
    .addColumn('visitor_id', 'text')
    .addColumn('cloud_id', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('imode', 'integer', (c) => c.notNull())
    .addColumn('large_threshold', 'bigint', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('phase', 'text')
    .addColumn('filename', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('total_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('folder_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('total_size', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('bytes_read', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('bytes_planned', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('has_trash', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .addColumn('job_id', 'text')
    .addColumn('started_at', 'bigint')
    .addColumn('finished_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('cleanup_tasks_user')
    .on('cleanup_tasks')
    .columns(['user_id', 'cloud_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('cleanup_tasks_visitor')
    .on('cleanup_tasks')
    .columns(['visitor_id', 'cloud_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('cleanup_items')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('task_id', 'text', (c) => c.notNull().references('cleanup_tasks.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('modified', 'bigint')
    .addColumn('category', 'text', (c) => c.notNull())
    .addColumn('nested_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('group_id', 'text')
    .addColumn('group_hash', 'text')
    .addColumn('ordinal', 'integer', (c) => c.notNull())
    .addColumn('deleted', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createIndex('cleanup_items_list')
    .on('cleanup_items')
    .columns(['task_id', 'kind', 'deleted', 'ordinal'])
    .execute();
  await db.schema.createIndex('cleanup_items_group').on('cleanup_items').columns(['task_id', 'group_id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('cleanup_items').execute();
  await db.schema.dropTable('cleanup_tasks').execute();
}
