import type { Database, Insertable, Kysely, Selectable, UsersTable } from '@skyferry/db';

export type UserRow = Selectable<UsersTable>;

/** Accounts. E-mail addresses are stored lower-cased; callers normalise before asking. */
export class UsersRepository {
  private readonly db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  /** Inserts the account; false when the e-mail is already taken. */
  async insert(row: Insertable<UsersTable>): Promise<boolean> {
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

  async count(): Promise<number> {
    const row = await this.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** A page of accounts, oldest first. */
  async page(offset: number, limit: number): Promise<UserRow[]> {
    return this.db
      .selectFrom('users')
      .selectAll()
      .orderBy('created_at')
      .orderBy('id')
      .offset(offset)
      .limit(limit)
      .execute();
  }

  async setRole(id: string, role: 'user' | 'operator', now: number): Promise<void> {
    await this.db.updateTable('users').set({ role, updated_at: now }).where('id', '=', id).execute();
  }

  /** The account whose own local folder has this name, in any case (two names differing in case are one folder on some disks). */
  async findByLocalFolder(name: string): Promise<UserRow | undefined> {
    return this.db
      .selectFrom('users')
      .selectAll()
      .where((eb) => eb(eb.fn('lower', ['local_folder']), '=', name.toLowerCase()))
      .executeTakeFirst();
  }

  /** Sets or clears (null) the user's own local folder; false when the user does not exist. */
  async setLocalFolder(id: string, name: string | null, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('users')
      .set({ local_folder: name, updated_at: now })
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async updatePassword(id: string, passwordHash: string, now: number): Promise<void> {
    await this.db
      .updateTable('users')
      .set({ password_hash: passwordHash, updated_at: now })
      .where('id', '=', id)
      .execute();
  }

  /** Changes the account's e-mail; false when another account has taken it meanwhile (unique index). */
  async updateEmail(id: string, email: string, now: number): Promise<boolean> {
    try {
      const result = await this.db
        .updateTable('users')
        .set({ email, updated_at: now })
        .where('id', '=', id)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    } catch (err) {
      const e = err as { code?: string; message?: string };
      if (e.code === '23505' || /UNIQUE constraint/i.test(e.message ?? '')) return false;
      throw err;
    }
  }

  /** An account other than `id` that is an operator: by its stored role, or named in `adminEmails`. */
  async findOtherOperator(id: string, adminEmails: readonly string[]): Promise<UserRow | undefined> {
    return this.db
      .selectFrom('users')
      .selectAll()
      .where('id', '!=', id)
      .where((eb) =>
        adminEmails.length > 0
          ? eb.or([eb('role', '=', 'operator'), eb('email', 'in', [...adminEmails])])
          : eb('role', '=', 'operator'),
      )
      .executeTakeFirst();
  }

  /** Deletes the account; its sessions, tokens, clouds, licences and packets go with it (foreign keys). */
  async delete(id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('users').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
