import type { Kysely } from 'kysely';

/** The durable job queue (packages/queue, DatabaseJobQueue): one row per job, leased by one worker at a time. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('jobs')
    .addColumn('queue', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('grp', 'text')
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('run_at', 'bigint', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('max_attempts', 'integer', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', 'bigint')
    .addColumn('cancel_requested', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('started_at', 'bigint')
    .addColumn('finished_at', 'bigint')
    .addPrimaryKeyConstraint('jobs_pk', ['queue', 'id'])
    .execute();
  await db.schema.createIndex('jobs_runnable').on('jobs').columns(['queue', 'state', 'run_at']).execute();
  await db.schema.createIndex('jobs_group').on('jobs').columns(['queue', 'state', 'grp']).execute();
  await db.schema.createIndex('jobs_lease').on('jobs').columns(['queue', 'state', 'lease_expires_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('jobs').execute();
}
