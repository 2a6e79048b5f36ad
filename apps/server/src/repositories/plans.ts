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
    patch: Partial<Pick<LicenseRow, 'renewing' | 'expires_at' | 'updated_at'>>,
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
}
