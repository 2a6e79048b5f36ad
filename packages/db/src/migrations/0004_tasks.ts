import type { Kysely } from 'kysely';

/**
 * Server tasks (migrate and sync), their live progress, failed files, checkpoints of finished files
 * and the two-way sync state. Rows are always read through the owner's user id.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('tasks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('task_name', 'text', (c) => c.notNull())
    .addColumn('task_type', 'integer', (c) => c.notNull())
    .addColumn('from_cloud', 'text', (c) => c.notNull())
    .addColumn('to_cloud', 'text', (c) => c.notNull())
    .addColumn('sync_mode', 'text')
    .addColumn('same_name_policy', 'text', (c) => c.notNull())
    .addColumn('filter', 'text')
    .addColumn('conflict_resolution', 'text', (c) => c.notNull())
    .addColumn('schedule', 'text')
    .addColumn('time_zone', 'text', (c) => c.notNull())
    .addColumn('is_schedule', 'integer', (c) => c.notNull())
    .addColumn('next_run_time', 'bigint')
    .addColumn('state', 'integer', (c) => c.notNull())
    .addColumn('duration', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('size', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('usage', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('total_counts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('finished_counts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('needed_size', 'bigint')
    .addColumn('result', 'text')
    .addColumn('run_mode', 'text', (c) => c.notNull().defaultTo('full'))
    .addColumn('confirm_deletes', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('job_id', 'text')
    .addColumn('run_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('started_at', 'bigint')
    .addColumn('finished_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('tasks_user_state').on('tasks').columns(['user_id', 'state', 'created_at']).execute();
  await db.schema.createIndex('tasks_due').on('tasks').columns(['is_schedule', 'next_run_time']).execute();

  await db.schema
    .createTable('task_progress')
    .addColumn('task_id', 'text', (c) => c.primaryKey())
    .addColumn('state', 'integer', (c) => c.notNull())
    .addColumn('progress', 'text', (c) => c.notNull())
    .addColumn('total_counts', 'integer', (c) => c.notNull())
    .addColumn('finished_counts', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('task_failed_files')
    .addColumn('task_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('parent', 'text', (c) => c.notNull())
    .addColumn('token_id', 'text')
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('item', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('task_failed_files_pk', ['task_id', 'seq'])
    .execute();

  await db.schema
    .createTable('task_checkpoints')
    .addColumn('task_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('info', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('task_checkpoints_pk', ['task_id', 'key'])
    .execute();

  await db.schema
    .createTable('task_sync_state')
    .addColumn('task_id', 'text', (c) => c.notNull())
    .addColumn('generation', 'text', (c) => c.notNull())
    .addColumn('dir', 'text', (c) => c.notNull())
    .addColumn('rel', 'text', (c) => c.notNull())
    .addColumn('record', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('task_sync_state_pk', ['task_id', 'generation', 'rel'])
    .execute();
  await db.schema
    .createIndex('task_sync_state_dir')
    .on('task_sync_state')
    .columns(['task_id', 'generation', 'dir'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['task_sync_state', 'task_checkpoints', 'task_failed_files', 'task_progress', 'tasks']) {
    await db.schema.dropTable(table).execute();
  }
}
