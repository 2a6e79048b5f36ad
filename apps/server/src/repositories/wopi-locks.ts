import type { Database, Kysely } from '@skyferry/db';

/**
 * WOPI locks, one row per document, shared by every API process. Each change is one statement that
 * names the lock it expects, so two clients racing for a document cannot both win; an expired row
 * counts as no lock.
 */
export class WopiLocksRepository {
  private readonly db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  /** The document's lock, undefined when it has none (or it expired). */
  async current(fileId: string, now: number): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('wopi_locks')
      .select('lock_id')
      .where('file_id', '=', fileId)
      .where('expires_at', '>=', now)
      .executeTakeFirst();
    return row?.lock_id;
  }

  /** Takes the lock, or refreshes it when `lockId` already holds it; answers the lock now held. */
  async take(fileId: string, lockId: string, now: number, expiresAt: number): Promise<string> {
    await this.db.deleteFrom('wopi_locks').where('file_id', '=', fileId).where('expires_at', '<', now).execute();
    await this.db
      .insertInto('wopi_locks')
      .values({ file_id: fileId, lock_id: lockId, expires_at: expiresAt })
      .onConflict((oc) => oc.column('file_id').doNothing())
      .execute();
    if (await this.refresh(fileId, lockId, now, expiresAt)) return lockId;
    return (await this.current(fileId, now)) ?? '';
  }

  /** Extends `lockId`'s hold; false when it is not the document's lock. */
  async refresh(fileId: string, lockId: string, now: number, expiresAt: number): Promise<boolean> {
    return this.change(fileId, lockId, now, { expires_at: expiresAt });
  }

  /** Replaces `oldLock` by `newLock` at once (UnlockAndRelock); false when `oldLock` is not held. */
  async swap(fileId: string, oldLock: string, newLock: string, now: number, expiresAt: number): Promise<boolean> {
    return this.change(fileId, oldLock, now, { lock_id: newLock, expires_at: expiresAt });
  }

  /** Releases `lockId`; false when it is not the document's lock. */
  async release(fileId: string, lockId: string, now: number): Promise<boolean> {
    const r = await this.db
      .deleteFrom('wopi_locks')
      .where('file_id', '=', fileId)
      .where('lock_id', '=', lockId)
      .where('expires_at', '>=', now)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  private async change(
    fileId: string,
    lockId: string,
    now: number,
    set: { lock_id?: string; expires_at: number },
  ): Promise<boolean> {
    const r = await this.db
      .updateTable('wopi_locks')
      .set(set)
      .where('file_id', '=', fileId)
      .where('lock_id', '=', lockId)
      .where('expires_at', '>=', now)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }
}
