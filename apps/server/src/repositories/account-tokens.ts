import type { AccountTokensTable, Database, Kysely, Selectable } from '@skyferry/db';

export type AccountTokenRow = Selectable<AccountTokensTable>;
export type AccountTokenPurpose = 'password_reset' | 'email_change';

/** The single-use links Skyferry mails, looked up by the SHA-256 hash of their token only. */
export class AccountTokensRepository {
  private readonly db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  async insert(row: AccountTokenRow): Promise<void> {
    await this.db.insertInto('account_tokens').values(row).execute();
  }

  /** A link that still works (unused, unexpired, of this purpose), without using it. */
  async find(hash: string, purpose: AccountTokenPurpose, now: number): Promise<AccountTokenRow | undefined> {
    return this.db
      .selectFrom('account_tokens')
      .selectAll()
      .where('token_hash', '=', hash)
      .where('purpose', '=', purpose)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
  }

  /**
   * Uses a link: marks it used when it is unused, unexpired and of this purpose, in one conditional
   * UPDATE (of two requests with the same link exactly one gets it). The row when it was taken.
   */
  async take(hash: string, purpose: AccountTokenPurpose, now: number): Promise<AccountTokenRow | undefined> {
    const taken = await this.db
      .updateTable('account_tokens')
      .set({ used_at: now })
      .where('token_hash', '=', hash)
      .where('purpose', '=', purpose)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    if (Number(taken.numUpdatedRows) === 0) return undefined;
    return this.db.selectFrom('account_tokens').selectAll().where('token_hash', '=', hash).executeTakeFirst();
  }

  /** Retires every unused link of an account for a purpose (a password set another way, a newer address). */
  async retire(userId: string, purpose: AccountTokenPurpose, now: number): Promise<void> {
    await this.db
      .updateTable('account_tokens')
      .set({ used_at: now })
      .where('user_id', '=', userId)
      .where('purpose', '=', purpose)
      .where('used_at', 'is', null)
      .execute();
  }

  /** Forgets links that expired before `before`. */
  async purgeExpired(before: number): Promise<void> {
    await this.db.deleteFrom('account_tokens').where('expires_at', '<', before).execute();
  }
}
