import type { Database, Kysely, Selectable, VisitorsTable } from '@skyferry/db';

export type VisitorRow = Selectable<VisitorsTable>;

/** Visitors' temporary identities, found by their token's hash. */
export class VisitorsRepository {
  private readonly db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  async insert(row: VisitorRow): Promise<void> {
    await this.db.insertInto('visitors').values(row).execute();
  }

  async findByTokenHash(hash: string): Promise<VisitorRow | undefined> {
    return this.db.selectFrom('visitors').selectAll().where('token_hash', '=', hash).executeTakeFirst();
  }

  async touch(id: string, now: number): Promise<void> {
    await this.db.updateTable('visitors').set({ last_seen_at: now }).where('id', '=', id).execute();
  }

  /**
   * Deletes visitors not seen since `before`, and those without a cloud not seen since
   * `withoutCloudsBefore` (their temporary clouds go with them: the foreign key cascades).
   */
  async purgeIdle(cutoffs: { before: number; withoutCloudsBefore: number }): Promise<number> {
    const result = await this.db
      .deleteFrom('visitors')
      .where((eb) =>
        eb.or([
          eb('last_seen_at', '<', cutoffs.before),
          eb.and([
            eb('last_seen_at', '<', cutoffs.withoutCloudsBefore),
            eb.not(
              eb.exists(eb.selectFrom('clouds').select('clouds.id').whereRef('clouds.visitor_id', '=', 'visitors.id')),
            ),
          ]),
        ]),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
