import type { Kysely } from 'kysely';

/**
 * The run history of server tasks (the Tasks page): each run with its figures, and the files it
 * handled by outcome. Rows of a run are paged by (run_id, seq), optionally within one outcome;
 * runs are pruned by age (SKYFERRY_RUN_HISTORY_DAYS).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('task_runs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('task_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('job_id', 'text')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text')
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('finished_at', 'bigint')
    .addColumn('counts', 'text', (c) => c.notNull())
    .addColumn('listed', 'text', (c) => c.notNull())
    .addColumn('figures', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .execute();
  await db.schema.createIndex('task_runs_task').on('task_runs').columns(['task_id', 'started_at', 'id']).execute();
  await db.schema.createIndex('task_runs_job').on('task_runs').columns(['job_id']).execute();
  await db.schema.createIndex('task_runs_finished').on('task_runs').columns(['finished_at']).execute();

  await db.schema
    .createTable('task_run_files')
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('side', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('other_path', 'text')
    .addColumn('size', 'bigint')
    .addColumn('reason', 'text')
    .addColumn('message', 'text')
    .addPrimaryKeyConstraint('task_run_files_pk', ['run_id', 'seq'])
    .execute();
  await db.schema
    .createIndex('task_run_files_outcome')
    .on('task_run_files')
    .columns(['run_id', 'outcome', 'seq'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('task_run_files').execute();
  await db.schema.dropTable('task_runs').execute();
}
