import type { Kysely } from 'kysely';

/**
 * Transfers from Google Drive: what a task does with Google Docs, Sheets, Slides and Drawings
 * ("export" to Office or PDF files, or "skip" them). Existing tasks export, as they did before.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('tasks')
    .addColumn('google_docs', 'text', (c) => c.notNull().defaultTo('export'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').dropColumn('google_docs').execute();
}
