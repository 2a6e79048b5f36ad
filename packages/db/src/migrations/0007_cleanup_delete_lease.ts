import type { Kysely } from 'kysely';

/**
 * Deleting clean-up results: a lease on the scan's row (`deleting_until`, ms; `deleting_by`, the
 * holder's token), so deletions of one scan run one at a time across every API process sharing
 * the database. Claimed by a conditional UPDATE, released when the deletion ends; an expired lease
 * (a process that died mid-deletion) can be claimed again.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('cleanup_tasks').addColumn('deleting_until', 'bigint').execute();
  await db.schema.alterTable('cleanup_tasks').addColumn('deleting_by', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('cleanup_tasks').dropColumn('deleting_by').execute();
  await db.schema.alterTable('cleanup_tasks').dropColumn('deleting_until').execute();
}
