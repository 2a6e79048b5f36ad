import type { Kysely } from 'kysely';

/**
 * Resumable uploads across API processes: each open upload session has a row naming the process
 * that holds its write to the cloud (`process_url`, how the other API processes reach it), so a
 * part that a balancer sends to another process is passed on to it. `owner` is `u:<user>` or
 * `v:<visitor>`; a row past `expires_at` (ms) belongs to a session its process no longer holds.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('upload_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('process_url', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('upload_sessions_expires').on('upload_sessions').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('upload_sessions').execute();
}
