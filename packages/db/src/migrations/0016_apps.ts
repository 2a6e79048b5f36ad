import type { Kysely } from 'kysely';

/**
 * The app registry (issue 37): external apps the operator registered, which apps each account
 * opened (GET /ecology/v1/apps/me), and the tokens handed to embedded apps. An app token reaches
 * only the files listed in `grants` (JSON), belongs to a session (logging out revokes it) or a
 * visitor, and only its SHA-256 is stored.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('ecology_apps')
    .addColumn('app_id', 'integer', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('icon', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('origin', 'text', (c) => c.notNull())
    .addColumn('functions', 'text', (c) => c.notNull())
    .addColumn('state', 'integer', (c) => c.notNull())
    .addColumn('mandatory_login', 'integer', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('ecology_app_usage')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('app_id', 'integer', (c) => c.notNull())
    .addColumn('uses', 'integer', (c) => c.notNull())
    .addColumn('used_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('ecology_app_usage_pk', ['user_id', 'app_id'])
    .execute();
  await db.schema
    .createTable('ecology_app_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('app_id', 'integer', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('session_id', 'text')
    .addColumn('visitor_id', 'text')
    .addColumn('grants', 'text', (c) => c.notNull())
    .addColumn('writable', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('ecology_app_tokens_session').on('ecology_app_tokens').column('session_id').execute();
  await db.schema.createIndex('ecology_app_tokens_expiry').on('ecology_app_tokens').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('ecology_app_tokens').execute();
  await db.schema.dropTable('ecology_app_usage').execute();
  await db.schema.dropTable('ecology_apps').execute();
}
