import type { Database, CloudsTable, Kysely, Selectable, Updateable } from '@skyferry/db';

export type CloudRow = Selectable<CloudsTable>;

/** Whose clouds: an account's, or a visitor's temporary ones. */
export type CloudOwner = { userId: string } | { visitorId: string };

export type CloudPatch = Pick<
  Updateable<CloudsTable>,
  | 'alias'
  | 'space'
  | 'used_space'
  | 'status'
  | 'credentials_enc'
  | 'state_enc'
  | 'key_version'
  | 'last_used_at'
  | 'updated_at'
  | 'cloud_account'
>;

/**
 * Connected clouds. Every read and write a request can cause is scoped to the owner, so another
 * owner's cloud is indistinguishable from a missing one. The few `*ById` methods serve workers
 * acting on a cloud they were already given by an owner-scoped call.
 */
export class CloudsRepository {
  private readonly db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  private owned(owner: CloudOwner) {
    const q = this.db.selectFrom('clouds').selectAll();
    return 'userId' in owner ? q.where('user_id', '=', owner.userId) : q.where('visitor_id', '=', owner.visitorId);
  }

  async list(owner: CloudOwner): Promise<CloudRow[]> {
    return this.owned(owner).orderBy('sort', 'asc').orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
  }

  async find(owner: CloudOwner, id: string): Promise<CloudRow | undefined> {
    return this.owned(owner).where('id', '=', id).executeTakeFirst();
  }

  async findByCloudId(owner: CloudOwner, cloudId: string): Promise<CloudRow | undefined> {
    return this.owned(owner).where('cloud_id', '=', cloudId).executeTakeFirst();
  }

  async count(owner: CloudOwner): Promise<number> {
    const q = this.db.selectFrom('clouds').select((eb) => eb.fn.countAll<number>().as('n'));
    const row = await (
      'userId' in owner ? q.where('user_id', '=', owner.userId) : q.where('visitor_id', '=', owner.visitorId)
    ).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async maxSort(owner: CloudOwner): Promise<number> {
    const q = this.db.selectFrom('clouds').select((eb) => eb.fn.max<number | null>('sort').as('m'));
    const row = await (
      'userId' in owner ? q.where('user_id', '=', owner.userId) : q.where('visitor_id', '=', owner.visitorId)
    ).executeTakeFirst();
    return row?.m === null || row?.m === undefined ? -1 : Number(row.m);
  }

  async insert(row: CloudRow): Promise<void> {
    await this.db.insertInto('clouds').values(row).execute();
  }

  /** Updates an owned cloud; false when it is not the owner's. */
  async update(owner: CloudOwner, id: string, patch: CloudPatch): Promise<boolean> {
    let q = this.db.updateTable('clouds').set(patch).where('id', '=', id);
    q = 'userId' in owner ? q.where('user_id', '=', owner.userId) : q.where('visitor_id', '=', owner.visitorId);
    const result = await q.executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async delete(owner: CloudOwner, id: string): Promise<boolean> {
    let q = this.db.deleteFrom('clouds').where('id', '=', id);
    q = 'userId' in owner ? q.where('user_id', '=', owner.userId) : q.where('visitor_id', '=', owner.visitorId);
    const result = await q.executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** Sets each listed cloud's position to its index; ids not owned are ignored. */
  async setOrder(owner: CloudOwner, ids: readonly string[], now: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      for (const [index, id] of ids.entries()) {
        let q = trx.updateTable('clouds').set({ sort: index, updated_at: now }).where('id', '=', id);
        q = 'userId' in owner ? q.where('user_id', '=', owner.userId) : q.where('visitor_id', '=', owner.visitorId);
        await q.execute();
      }
    });
  }

  /**
   * Moves a visitor's temporary clouds to an account (in the given order, after its clouds) and
   * deletes the visitor's others. Runs in one transaction.
   */
  async bindToUser(
    visitorId: string,
    userId: string,
    bindIds: readonly string[],
    firstSort: number,
    now: number,
  ): Promise<{ bound: string[]; discarded: string[] }> {
    return this.db.transaction().execute(async (trx) => {
      const bound: string[] = [];
      for (const [i, id] of bindIds.entries()) {
        const result = await trx
          .updateTable('clouds')
          .set({ user_id: userId, visitor_id: null, sort: firstSort + i, updated_at: now })
          .where('id', '=', id)
          .where('visitor_id', '=', visitorId)
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) > 0) bound.push(id);
      }
      const rest = await trx.selectFrom('clouds').select('id').where('visitor_id', '=', visitorId).execute();
      if (rest.length > 0) await trx.deleteFrom('clouds').where('visitor_id', '=', visitorId).execute();
      return { bound, discarded: rest.map((r) => r.id) };
    });
  }

  /** Worker-side access by id (the caller already holds this cloud through an owner-scoped call). */
  async findById(id: string): Promise<CloudRow | undefined> {
    return this.db.selectFrom('clouds').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async updateById(id: string, patch: CloudPatch): Promise<boolean> {
    const result = await this.db.updateTable('clouds').set(patch).where('id', '=', id).executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Deletes visitors' temporary clouds unused since `before`. */
  async purgeUnusedTemporary(before: number): Promise<number> {
    const result = await this.db
      .deleteFrom('clouds')
      .where('visitor_id', 'is not', null)
      .where('last_used_at', '<', before)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
