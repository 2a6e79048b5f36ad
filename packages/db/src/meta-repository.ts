import type { Kysely } from 'kysely';
import type { Database } from './schema/index.ts';

/** Small server-wide values (instance id, key versions). */
export class MetaRepository {
  private readonly db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  async get(key: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('meta').select('value').where('key', '=', key).executeTakeFirst();
    return row?.value;
  }

  async set(key: string, value: string, now = Date.now()): Promise<void> {
    await this.db
      .insertInto('meta')
      .values({ key, value, updated_at: now })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value, updated_at: now }))
      .execute();
  }

  /** Sets the value only when the key is absent; returns the value that is stored afterwards. */
  async setIfAbsent(key: string, value: string, now = Date.now()): Promise<string> {
    await this.db
      .insertInto('meta')
      .values({ key, value, updated_at: now })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
    return (await this.get(key)) ?? value;
  }

  async delete(key: string): Promise<void> {
    await this.db.deleteFrom('meta').where('key', '=', key).execute();
  }
}
