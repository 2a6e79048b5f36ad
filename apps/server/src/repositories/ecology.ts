import type {
  Database,
  EcologyAppTokensTable,
  EcologyAppsTable,
  EcologyAppUsageTable,
  Kysely,
  Selectable,
} from '@skyferry/db';

export type ExternalAppRow = Selectable<EcologyAppsTable>;
export type AppUsageRow = Selectable<EcologyAppUsageTable>;
export type AppTokenRow = Selectable<EcologyAppTokensTable>;

/** The app registry's rows: external apps, who used which app, and the tokens handed to apps. */
export class EcologyRepository {
  private readonly db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  async listApps(): Promise<ExternalAppRow[]> {
    return this.db.selectFrom('ecology_apps').selectAll().orderBy('app_id').execute();
  }

  async findApp(appId: number): Promise<ExternalAppRow | undefined> {
    return this.db.selectFrom('ecology_apps').selectAll().where('app_id', '=', appId).executeTakeFirst();
  }

  /** Inserts with the next free id from `start` (retried by the caller when another process took it). */
  async insertApp(row: Omit<ExternalAppRow, 'app_id'>, start: number): Promise<number> {
    const max = await this.db
      .selectFrom('ecology_apps')
      .select((eb) => eb.fn.max('app_id').as('max'))
      .executeTakeFirst();
    const appId = Math.max(start, Number(max?.max ?? 0) + 1);
    await this.db
      .insertInto('ecology_apps')
      .values({ ...row, app_id: appId })
      .execute();
    return appId;
  }

  async updateApp(appId: number, row: Omit<ExternalAppRow, 'app_id' | 'created_at' | 'created_by'>): Promise<boolean> {
    const r = await this.db.updateTable('ecology_apps').set(row).where('app_id', '=', appId).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async deleteApp(appId: number): Promise<boolean> {
    const r = await this.db.deleteFrom('ecology_apps').where('app_id', '=', appId).executeTakeFirst();
    await this.db.deleteFrom('ecology_app_usage').where('app_id', '=', appId).execute();
    await this.db.deleteFrom('ecology_app_tokens').where('app_id', '=', appId).execute();
    return Number(r.numDeletedRows) > 0;
  }

  async recordUse(userId: string, appId: number, now: number): Promise<void> {
    await this.db
      .insertInto('ecology_app_usage')
      .values({ user_id: userId, app_id: appId, uses: 1, used_at: now })
      .onConflict((oc) =>
        oc.columns(['user_id', 'app_id']).doUpdateSet((eb) => ({
          uses: eb('ecology_app_usage.uses', '+', 1),
          used_at: now,
        })),
      )
      .execute();
  }

  async usageOf(userId: string): Promise<AppUsageRow[]> {
    return this.db
      .selectFrom('ecology_app_usage')
      .selectAll()
      .where('user_id', '=', userId)
      .orderBy('used_at', 'desc')
      .execute();
  }

  async insertToken(row: AppTokenRow): Promise<void> {
    await this.db.insertInto('ecology_app_tokens').values(row).execute();
  }

  /**
   * The token's row while it works: unexpired, and for an account, its session not revoked (a
   * logout ends every app token of the session).
   */
  async findLiveToken(hash: string, now: number): Promise<AppTokenRow | undefined> {
    const row = await this.db
      .selectFrom('ecology_app_tokens')
      .selectAll()
      .where('token_hash', '=', hash)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    if (!row || row.session_id === null) return row;
    const session = await this.db
      .selectFrom('sessions')
      .select('id')
      .where('id', '=', row.session_id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return session ? row : undefined;
  }

  async updateGrants(hash: string, grants: string): Promise<void> {
    await this.db.updateTable('ecology_app_tokens').set({ grants }).where('token_hash', '=', hash).execute();
  }

  async deleteToken(hash: string): Promise<AppTokenRow | undefined> {
    const row = await this.db
      .selectFrom('ecology_app_tokens')
      .selectAll()
      .where('token_hash', '=', hash)
      .executeTakeFirst();
    if (row) await this.db.deleteFrom('ecology_app_tokens').where('token_hash', '=', hash).execute();
    return row;
  }

  async purgeExpired(now: number): Promise<void> {
    await this.db.deleteFrom('ecology_app_tokens').where('expires_at', '<=', now).execute();
  }
}
