import type { Database, Kysely, RefreshTokensTable, Selectable, SessionsTable } from '@skyferry/db';

export type SessionRow = Selectable<SessionsTable>;
export type RefreshTokenRow = Selectable<RefreshTokensTable>;

export interface AccessTokenOwner {
  userId: string;
  email: string;
  sessionId: string;
  /** When the session was last recorded as used, and from where. */
  lastUsedAt: number;
  ip: string | null;
}

/** Sessions and their tokens; tokens are looked up by their SHA-256 hash only. */
export class SessionsRepository {
  private readonly db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  async insertSession(row: SessionRow): Promise<void> {
    await this.db.insertInto('sessions').values(row).execute();
  }

  async findSession(id: string): Promise<SessionRow | undefined> {
    return this.db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Records a use of the session: when, from which address (when known), and a new auto-login end. */
  async touchSession(id: string, now: number, autoLoginExpiresAt?: number, ip?: string): Promise<void> {
    await this.db
      .updateTable('sessions')
      .set({
        last_used_at: now,
        ...(autoLoginExpiresAt === undefined ? {} : { auto_login_expires_at: autoLoginExpiresAt }),
        ...(ip === undefined ? {} : { ip }),
      })
      .where('id', '=', id)
      .execute();
  }

  /** The account's sessions that still work (not revoked, auto-login not expired), most recently used first. */
  async listActive(userId: string, now: number): Promise<SessionRow[]> {
    return this.db
      .selectFrom('sessions')
      .selectAll()
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .where('auto_login_expires_at', '>', now)
      .orderBy('last_used_at', 'desc')
      .orderBy('id')
      .execute();
  }

  /** Ids of the account's sessions not yet revoked, except `keep`. */
  async activeIds(userId: string, keep?: string): Promise<string[]> {
    let q = this.db.selectFrom('sessions').select('id').where('user_id', '=', userId).where('revoked_at', 'is', null);
    if (keep !== undefined) q = q.where('id', '!=', keep);
    return (await q.execute()).map((r) => r.id);
  }

  /** Revokes a session and everything issued under it; true when it was active. */
  async revokeSession(id: string, reason: string, now: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('sessions')
        .set({ revoked_at: now, revoked_reason: reason })
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      await trx.deleteFrom('access_tokens').where('session_id', '=', id).execute();
      await trx
        .updateTable('refresh_tokens')
        .set({ status: 'revoked' })
        .where('session_id', '=', id)
        .where('status', '=', 'active')
        .execute();
      return Number(result.numUpdatedRows) > 0;
    });
  }

  async insertRefreshToken(row: RefreshTokenRow): Promise<void> {
    await this.db.insertInto('refresh_tokens').values(row).execute();
  }

  async findRefreshToken(hash: string): Promise<RefreshTokenRow | undefined> {
    return this.db.selectFrom('refresh_tokens').selectAll().where('token_hash', '=', hash).executeTakeFirst();
  }

  /** Marks an active refresh token rotated; false when another request got there first. */
  async rotateRefreshToken(hash: string, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('refresh_tokens')
      .set({ status: 'rotated', used_at: now })
      .where('token_hash', '=', hash)
      .where('status', '=', 'active')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Retires a session's outstanding refresh tokens (auto-login starts a fresh chain). */
  async revokeActiveRefreshTokens(sessionId: string): Promise<void> {
    await this.db
      .updateTable('refresh_tokens')
      .set({ status: 'revoked' })
      .where('session_id', '=', sessionId)
      .where('status', '=', 'active')
      .execute();
  }

  async insertAccessToken(row: {
    token_hash: string;
    session_id: string;
    user_id: string;
    created_at: number;
    expires_at: number;
  }): Promise<void> {
    await this.db.insertInto('access_tokens').values(row).execute();
  }

  /** The owner of an unexpired access token of an active session. */
  async findAccessTokenOwner(hash: string, now: number): Promise<AccessTokenOwner | undefined> {
    const row = await this.db
      .selectFrom('access_tokens as a')
      .innerJoin('sessions as s', 's.id', 'a.session_id')
      .innerJoin('users as u', 'u.id', 'a.user_id')
      .select(['a.user_id', 'u.email', 'a.session_id', 's.last_used_at', 's.ip'])
      .where('a.token_hash', '=', hash)
      .where('a.expires_at', '>', now)
      .where('s.revoked_at', 'is', null)
      .executeTakeFirst();
    return row
      ? {
          userId: row.user_id,
          email: row.email,
          sessionId: row.session_id,
          lastUsedAt: row.last_used_at,
          ip: row.ip,
        }
      : undefined;
  }

  /** Removes expired access and refresh tokens and long-dead sessions. */
  async purgeExpired(now: number, sessionsBefore: number): Promise<void> {
    await this.db.deleteFrom('access_tokens').where('expires_at', '<=', now).execute();
    await this.db.deleteFrom('refresh_tokens').where('expires_at', '<=', now).execute();
    await this.db
      .deleteFrom('sessions')
      .where((eb) => eb.or([eb('revoked_at', '<', sessionsBefore), eb('auto_login_expires_at', '<', sessionsBefore)]))
      .execute();
  }
}
