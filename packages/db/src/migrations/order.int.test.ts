import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Migrator } from 'kysely/migration';
import { expect, it } from 'vitest';
import { createDb } from '../create-db.ts';
import { migrations } from './index.ts';

it('a database that applied later migrations first still starts once an earlier-numbered one lands', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'skyferry-order-'));
  const url = join(dir, 'skyferry.db');
  const db = createDb({ url });
  try {
    // Every migration but 0015 applied (as on an install that ran a build without it).
    const without = Object.fromEntries(Object.entries(migrations).filter(([name]) => name !== '0015_billing'));
    const early = new Migrator({ db: db.kysely, provider: { getMigrations: async () => without } });
    expect((await early.migrateToLatest()).error).toBeUndefined();
    await db.migrate();
    const applied = await db.kysely
      .selectFrom('kysely_migration' as never)
      .select('name' as never)
      .execute();
    expect((applied as Array<{ name: string }>).map((r) => r.name).sort()).toEqual(Object.keys(migrations).sort());
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
