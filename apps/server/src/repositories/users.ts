import type { Database, Kysely, Selectable, UsersTable } from '@skyferry/db';

export type UserRow = Selectable<UsersTable>;

/** Accounts. E-mail addresses are stored lower-cased; callers normalise before asking. */
export class UsersRepository {
  private readonly db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  /** Inserts the account; false when the e-mail is already taken. */
  async insert(row: UserRow): Promise<boolean> {
    const result = await this.db
      .insertInto('users')
      .values(row)
      .onConflict((oc) => oc.column('email').doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  async findById(id: string): Promise<UserRow | undefined> {
    return this.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async findByEmail(email: string): Promise<UserRow | undefined> {
    return this.db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
  }

  async updateNotify(id: string, notifyEmail: string, remindMe: number, now: number): Promise<void> {
    await this.db
      .updateTable('users')
      .set({ notify_email: notifyEmail, remind_me: remindMe, updated_at: now })
      .where('id', '=', id)
      .execute();
  }

  async updateLanguage(id: string, language: string, now: number): Promise<void> {
    await this.db
      .updateTable('users')
      .set({ language, updated_at: now })
      .where('id', '=', id)
      .where('language', '!=', language)
      .execute();
  }
}
