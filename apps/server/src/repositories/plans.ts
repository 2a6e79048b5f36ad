import type { Database, DataPacketsTable, Kysely, LicensesTable, Selectable } from '@skyferry/db';

export type LicenseRow = Selectable<LicensesTable>;
export type DataPacketRow = Selectable<DataPacketsTable>;

/** Licences and data packets of accounts. */
export class PlansRepository {
  private readonly db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  async insertLicense(row: LicenseRow): Promise<void> {
    await this.db.insertInto('licenses').values(row).execute();
  }

  /** Every licence of the user, the latest-ending first. */
  async licenses(userId: string): Promise<LicenseRow[]> {
    return this.db
      .selectFrom('licenses')
      .selectAll()
      .where('user_id', '=', userId)
      .orderBy('expires_at', 'desc')
      .orderBy('created_at', 'desc')
      .execute();
  }

  async updateLicense(
    userId: string,
    id: string,
    patch: Partial<Pick<LicenseRow, 'renewing' | 'expires_at' | 'updated_at' | 'external_id'>>,
  ): Promise<boolean> {
    const result = await this.db
      .updateTable('licenses')
      .set(patch)
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async insertPacket(row: DataPacketRow): Promise<void> {
    await this.db.insertInto('data_packets').values(row).execute();
  }

  /** Packets of a kind that have not ended by `now`, the soonest-ending first. */
  async livePackets(userId: string, now: number, kind?: 'base' | 'additional'): Promise<DataPacketRow[]> {
    let q = this.db
      .selectFrom('data_packets')
      .selectAll()
      .where('user_id', '=', userId)
      .where('ends_at', '>', now)
      .where('starts_at', '<=', now);
    if (kind) q = q.where('kind', '=', kind);
    return q.orderBy('ends_at', 'asc').orderBy('created_at', 'asc').execute();
  }

  async packetsOfLicense(userId: string, licenseId: string): Promise<DataPacketRow[]> {
    return this.db
      .selectFrom('data_packets')
      .selectAll()
      .where('user_id', '=', userId)
      .where('license_id', '=', licenseId)
      .orderBy('starts_at', 'asc')
      .execute();
  }

  /** Adds usage to a packet only while it stays within its size; false when it would not fit. */
  async addUsage(userId: string, packetId: string, bytes: number): Promise<boolean> {
    const result = await this.db
      .updateTable('data_packets')
      .set((eb) => ({ usage: eb('usage', '+', bytes) }))
      .where('id', '=', packetId)
      .where('user_id', '=', userId)
      .where((eb) => eb(eb('usage', '+', bytes), '<=', eb.ref('size')))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async license(id: string): Promise<LicenseRow | undefined> {
    return this.db.selectFrom('licenses').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The licence a provider's subscription pays for. */
  async licenseByExternal(source: string, externalId: string): Promise<LicenseRow | undefined> {
    return this.db
      .selectFrom('licenses')
      .selectAll()
      .where('source', '=', source)
      .where('external_id', '=', externalId)
      .executeTakeFirst();
  }

  /** Licences of a source that renew and have run out by `now` (the test checkout's renewals). */
  async renewingDue(source: string, now: number): Promise<LicenseRow[]> {
    return this.db
      .selectFrom('licenses')
      .selectAll()
      .where('source', '=', source)
      .where('renewing', '=', 1)
      .where('expires_at', '<=', now)
      .execute();
  }

  /** Ends the packets of a licence (and any packet given by id) at `at` when they would run longer. */
  async endPackets(userId: string, at: number, by: { licenseId?: string; packetId?: string }): Promise<void> {
    let q = this.db
      .updateTable('data_packets')
      .set({ ends_at: at })
      .where('user_id', '=', userId)
      .where('ends_at', '>', at);
    if (by.licenseId) q = q.where('license_id', '=', by.licenseId);
    else if (by.packetId) q = q.where('id', '=', by.packetId);
    else return;
    await q.execute();
  }

  /**
   * Charges `bytes` to the packets given (in that order) once per `key`: the key and the usage are
   * written in one transaction, so a file charged before a crash is not charged again when a resumed
   * run copies it once more. Returns what was charged (for a key seen before: what it was charged then).
   */
  async chargeOnce(
    userId: string,
    key: string,
    packetIds: readonly string[],
    bytes: number,
    now: number,
  ): Promise<{ charged: number; repeated: boolean }> {
    return this.db.transaction().execute(async (trx) => {
      const inserted = await trx
        .insertInto('traffic_charges')
        .values({ key, user_id: userId, bytes: 0, created_at: now })
        .onConflict((oc) => oc.column('key').doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0) {
        const row = await trx.selectFrom('traffic_charges').select('bytes').where('key', '=', key).executeTakeFirst();
        return { charged: Number(row?.bytes ?? 0), repeated: true };
      }
      let left = bytes;
      for (const id of packetIds) {
        if (left <= 0) break;
        const p = await trx
          .selectFrom('data_packets')
          .select(['size', 'usage'])
          .where('id', '=', id)
          .executeTakeFirst();
        if (!p) continue;
        const take = Math.min(left, Number(p.size) - Number(p.usage));
        if (take <= 0) continue;
        const r = await trx
          .updateTable('data_packets')
          .set((eb) => ({ usage: eb('usage', '+', take) }))
          .where('id', '=', id)
          .where((eb) => eb(eb('usage', '+', take), '<=', eb.ref('size')))
          .executeTakeFirst();
        if (Number(r.numUpdatedRows) > 0) left -= take;
      }
      await trx
        .updateTable('traffic_charges')
        .set({ bytes: bytes - left })
        .where('key', '=', key)
        .execute();
      return { charged: bytes - left, repeated: false };
    });
  }

  /** Forgets charge keys older than `before` (their runs ended long ago). */
  async purgeCharges(before: number): Promise<void> {
    await this.db.deleteFrom('traffic_charges').where('created_at', '<', before).execute();
  }
}
