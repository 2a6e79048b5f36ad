import type { Kysely } from 'kysely';

/**
 * A session remembers the SHA-256 hash of the sign-in nonce the browser that signed in sent
 * (`sign_in_nonce_hash`, null when none): binding a visitor's temporary clouds to the account
 * needs that nonce back, so a session made elsewhere (a forged sign-in link) cannot take them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('sign_in_nonce_hash', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').dropColumn('sign_in_nonce_hash').execute();
}
