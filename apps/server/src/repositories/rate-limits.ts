import type { Database, Kysely } from '@skyferry/db';

/**
 * Fixed-window counters kept in the database, so every API process of a deployment shares them.
 */
export class RateLimitsRepository {
  private readonly db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  /** The current count of a key (0 when its window has passed) and when the window ends. */
  async get(key: string, now: number): Promise<{ count: number; resetAt: number }> {
    const row = await this.db.selectFrom('rate_limits').selectAll().where('key', '=', key).executeTakeFirst();
    if (!row || row.reset_at <= now) return { count: 0, resetAt: now };
    return { count: row.count, resetAt: row.reset_at };
  }

  /** Adds one to a key's count, starting a new window when the last one has passed. */
  async hit(key: string, windowMs: number, now: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('rate_limits').selectAll().where('key', '=', key).executeTakeFirst();
      if (!row) {
        await trx
          .insertInto('rate_limits')
          .values({ key, count: 1, reset_at: now + windowMs })
          .onConflict((oc) => oc.column('key').doUpdateSet((eb) => ({ count: eb('rate_limits.count', '+', 1) })))
          .execute();
      } else if (row.reset_at <= now) {
        await trx
          .updateTable('rate_limits')
          .set({ count: 1, reset_at: now + windowMs })
          .where('key', '=', key)
          .execute();
      } else {
        await trx
          .updateTable('rate_limits')
          .set((eb) => ({ count: eb('count', '+', 1) }))
          .where('key', '=', key)
          .execute();
      }
    });
  }

  async reset(key: string): Promise<void> {
    await this.db.deleteFrom('rate_limits').where('key', '=', key).execute();
  }

  async purgeExpired(now: number): Promise<void> {
    await this.db.deleteFrom('rate_limits').where('reset_at', '<=', now).execute();
  }
}
