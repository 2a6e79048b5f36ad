import type { Database, Kysely } from '@skyferry/db';

/**
 * One run of a pair of folders at a time, across every worker process sharing the database: a
 * lease row per pair, taken by an insert that only one run can win, renewed while the run goes and
 * deleted when it ends. A lease past its expiry belongs to a run whose worker died and is taken over.
 */
export class SyncPairLocksRepository {
  private readonly db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  /** Takes the lease of `pairKey` for `owner`; answers who holds it when another live run does. */
  async acquire(
    pairKey: string,
    owner: string,
    taskId: string,
    ttlMs: number,
    now = Date.now(),
  ): Promise<{ taken: true } | { taken: false; taskId: string }> {
    // An expired lease goes first (only while it is still expired: a renewal meanwhile keeps it).
    await this.db.deleteFrom('sync_pair_locks').where('pair_key', '=', pairKey).where('expires_at', '<', now).execute();
    await this.db
      .insertInto('sync_pair_locks')
      .values({ pair_key: pairKey, owner, task_id: taskId, acquired_at: now, expires_at: now + ttlMs })
      .onConflict((oc) => oc.column('pair_key').doNothing())
      .execute();
    const row = await this.db
      .selectFrom('sync_pair_locks')
      .select(['owner', 'task_id'])
      .where('pair_key', '=', pairKey)
      .executeTakeFirst();
    if (row?.owner === owner) return { taken: true };
    return { taken: false, taskId: row?.task_id ?? '' };
  }

  /** Extends the lease; false when it is no longer `owner`'s. */
  async renew(pairKey: string, owner: string, ttlMs: number, now = Date.now()): Promise<boolean> {
    const r = await this.db
      .updateTable('sync_pair_locks')
      .set({ expires_at: now + ttlMs })
      .where('pair_key', '=', pairKey)
      .where('owner', '=', owner)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async release(pairKey: string, owner: string): Promise<void> {
    await this.db.deleteFrom('sync_pair_locks').where('pair_key', '=', pairKey).where('owner', '=', owner).execute();
  }
}
