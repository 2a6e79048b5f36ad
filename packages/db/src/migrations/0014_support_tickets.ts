import type { Kysely } from 'kysely';

/**
 * Support tickets (the feedback dialog) and the operator's replies. A ticket comes from a signed-in
 * account (`user_id`) or a visitor (`visitor_id`); deleting the account or the idle visitor keeps the
 * ticket for the operator and forgets who sent it. Texts are stored as the sender wrote them (plain text).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('support_tickets')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('visitor_id', 'text')
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('contents', 'text', (c) => c.notNull())
    .addColumn('problem_type', 'text')
    .addColumn('custom_fields', 'text', (c) => c.notNull())
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('product_version', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('support_tickets_user')
    .on('support_tickets')
    .columns(['user_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('support_tickets_status')
    .on('support_tickets')
    .columns(['status', 'created_at'])
    .execute();
  await db.schema
    .createTable('support_replies')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('ticket_id', 'text', (c) => c.notNull().references('support_tickets.id').onDelete('cascade'))
    .addColumn('author_id', 'text', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  // A ticket's files (log files, screenshots), kept as base64 text so both databases store them alike.
  await db.schema
    .createTable('support_attachments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('ticket_id', 'text', (c) => c.notNull().references('support_tickets.id').onDelete('cascade'))
    .addColumn('file_name', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('support_attachments_ticket').on('support_attachments').column('ticket_id').execute();
  await db.schema
    .createIndex('support_replies_ticket')
    .on('support_replies')
    .columns(['ticket_id', 'created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('support_attachments').execute();
  await db.schema.dropTable('support_replies').execute();
  await db.schema.dropTable('support_tickets').execute();
}
