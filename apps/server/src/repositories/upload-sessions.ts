import type { Database, Kysely } from '@skyferry/db';

/** Where an open upload session is held: which API process has its write to the cloud. */
export interface UploadSessionRow {
  id: string;
  owner: string;
  processUrl: string;
  expiresAt: number;
}

/**
 * The open upload sessions of every API process sharing the database, so that a part sent to a
 * process that does not hold its session reaches the one that does.
 */
export class UploadSessionsRepository {
  private readonly db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  async record(row: UploadSessionRow): Promise<void> {
    await this.db
      .insertInto('upload_sessions')
      .values({ id: row.id, owner: row.owner, process_url: row.processUrl, expires_at: row.expiresAt })
      .execute();
  }

  async find(id: string, now = Date.now()): Promise<UploadSessionRow | undefined> {
    const r = await this.db
      .selectFrom('upload_sessions')
      .selectAll()
      .where('id', '=', id)
      .where('expires_at', '>=', now)
      .executeTakeFirst();
    return r && { id: r.id, owner: r.owner, processUrl: r.process_url, expiresAt: Number(r.expires_at) };
  }

  async extend(id: string, expiresAt: number): Promise<void> {
    await this.db.updateTable('upload_sessions').set({ expires_at: expiresAt }).where('id', '=', id).execute();
  }

  async forget(id: string): Promise<void> {
    await this.db.deleteFrom('upload_sessions').where('id', '=', id).execute();
  }

  /** Rows of sessions whose process stopped without ending them. */
  async purgeExpired(now = Date.now()): Promise<void> {
    await this.db.deleteFrom('upload_sessions').where('expires_at', '<', now).execute();
  }
}
