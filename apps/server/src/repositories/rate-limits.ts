import type { Database, Kysely } from '@skyferry/db';

/** A growing delay between attempts: `free` attempts at once, then waits doubling up to a cap. */
export interface SlowDownPolicy {
  /** How long after the last attempt the count starts over. */
  windowMs: number;
  /** Attempts allowed without waiting. */
  free: number;
  /** The first wait; each further attempt doubles it. */
  baseDelayMs: number;
  maxDelayMs: number;
}

/** The wait required after `count` attempts. */
export function slowDownDelay(count: number, policy: SlowDownPolicy): number {
  if (count < policy.free) return 0;
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(30, count - policy.free));
}

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

  /**
   * Admits one attempt under a slow-down policy and counts it; answers 0 when admitted, else the
   * milliseconds left to wait (nothing is counted then). The row holds the attempts so far and, as
   * its reset time, the last attempt plus the window. Admission is a compare-and-set on that row,
   * so parallel attempts in any number of processes are admitted one at a time.
   */
  async admit(key: string, policy: SlowDownPolicy, now: number): Promise<number> {
    for (let tries = 0; tries < 8; tries++) {
      const row = await this.db.selectFrom('rate_limits').selectAll().where('key', '=', key).executeTakeFirst();
      if (!row) {
        const inserted = await this.db
          .insertInto('rate_limits')
          .values({ key, count: 1, reset_at: now + policy.windowMs })
          .onConflict((oc) => oc.column('key').doNothing())
          .executeTakeFirst();
        if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) return 0;
        continue;
      }
      const live = row.reset_at > now;
      const count = live ? row.count : 0;
      if (live) {
        const wait = row.reset_at - policy.windowMs + slowDownDelay(count, policy) - now;
        if (wait > 0) return wait;
      }
      const updated = await this.db
        .updateTable('rate_limits')
        .set({ count: count + 1, reset_at: now + policy.windowMs })
        .where('key', '=', key)
        .where('count', '=', row.count)
        .where('reset_at', '=', row.reset_at)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) > 0) return 0;
    }
    // Lost every race for this key: others are hammering it right now.
    return policy.baseDelayMs;
  }

  async reset(key: string): Promise<void> {
    await this.db.deleteFrom('rate_limits').where('key', '=', key).execute();
  }

  async purgeExpired(now: number): Promise<void> {
    await this.db.deleteFrom('rate_limits').where('reset_at', '<=', now).execute();
  }
}
