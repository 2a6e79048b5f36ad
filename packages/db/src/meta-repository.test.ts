import { expect, it } from 'vitest';
import { MetaRepository } from './meta-repository.ts';
import { describeEachDialect } from './testing.ts';

describeEachDialect('MetaRepository', (getDb) => {
  it('stores, reads back and overwrites a value', async () => {
    const repo = new MetaRepository(getDb().kysely);
    expect(await repo.get('instance')).toBeUndefined();
    await repo.set('instance', 'a', 1000);
    expect(await repo.get('instance')).toBe('a');
    await repo.set('instance', 'b', 2000);
    expect(await repo.get('instance')).toBe('b');
  });

  it('keeps the first value when setIfAbsent races', async () => {
    const repo = new MetaRepository(getDb().kysely);
    const results = await Promise.all([repo.setIfAbsent('secret', 'one'), repo.setIfAbsent('secret', 'two')]);
    expect(results[0]).toBe(results[1]);
    expect(['one', 'two']).toContain(results[0]);
    expect(await repo.setIfAbsent('secret', 'three')).toBe(results[0]);
  });

  it('applies migrations idempotently', async () => {
    await getDb().migrate();
    await getDb().migrate();
    const repo = new MetaRepository(getDb().kysely);
    await repo.set('after-remigrate', 'x');
    expect(await repo.get('after-remigrate')).toBe('x');
  });

  it('returns bigint columns as numbers', async () => {
    const now = Date.now();
    const repo = new MetaRepository(getDb().kysely);
    await repo.set('t', 'v', now);
    const row = await getDb()
      .kysely.selectFrom('meta')
      .select('updated_at')
      .where('key', '=', 't')
      .executeTakeFirstOrThrow();
    expect(row.updated_at).toBe(now);
    expect(typeof row.updated_at).toBe('number');
  });
});
