import { sql, type Kysely } from 'kysely';

/**
 * The operator role and local-folder grants. `role` is 'operator' or 'user'; `local_folder` names the
 * user's own folder under each allowed root when the operator lets them use local folders (null:
 * not allowed), unique so two users never share one. On an existing install the oldest account
 * becomes the operator, as the first account of a fresh install does, and that is recorded in
 * `meta` (first_operator) so no later sign-up claims the role.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('users')
    .addColumn('role', 'text', (c) => c.notNull().defaultTo('user'))
    .execute();
  await db.schema.alterTable('users').addColumn('local_folder', 'text').execute();
  await db.schema.createIndex('users_local_folder').on('users').column('local_folder').unique().execute();
  const oldest = await sql<{ id: string }>`select id from users order by created_at, id limit 1`.execute(db);
  const first = oldest.rows[0];
  if (first) {
    await sql`update users set role = 'operator' where id = ${first.id}`.execute(db);
    await sql`insert into meta (key, value, updated_at) values ('first_operator', ${first.id}, ${Date.now()})`.execute(
      db,
    );
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`delete from meta where key = 'first_operator'`.execute(db);
  await db.schema.dropIndex('users_local_folder').execute();
  await db.schema.alterTable('users').dropColumn('local_folder').execute();
  await db.schema.alterTable('users').dropColumn('role').execute();
}
