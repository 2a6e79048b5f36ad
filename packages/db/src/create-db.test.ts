import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { describe, expect, it } from 'vitest';
import { reusingStatements } from './create-db.ts';

interface Tables {
  t: { k: string; v: number };
}

/** A database whose `prepare` calls are counted. */
function counted(): { db: Kysely<Tables>; prepared: () => number } {
  const raw = new SQLite(':memory:');
  raw.exec('create table t (k text primary key, v integer)');
  let n = 0;
  const prepare = raw.prepare.bind(raw);
  raw.prepare = ((sql: string) => {
    n++;
    return prepare(sql);
  }) as typeof raw.prepare;
  return {
    db: new Kysely<Tables>({ dialect: new SqliteDialect({ database: reusingStatements(raw, 4) }) }),
    prepared: () => n,
  };
}

describe('SQLite statements', () => {
  it('are prepared once per SQL text and used again (their native memory is not left to the collector)', async () => {
    const { db, prepared } = counted();
    for (let round = 0; round < 50; round++) {
      const rows = Array.from({ length: 400 }, (_, i) => ({ k: `k${i}`, v: round }));
      await db
        .insertInto('t')
        .values(rows)
        .onConflict((oc) => oc.column('k').doUpdateSet((eb) => ({ v: eb.ref('excluded.v') })))
        .execute();
    }
    expect(prepared()).toBe(1);
    const row = await db.selectFrom('t').select(['v']).where('k', '=', 'k399').executeTakeFirst();
    expect(row?.v).toBe(49);
    await db.destroy();
  });

  it('keeps the most recently used texts only, and never shares one still being iterated', async () => {
    const { db, prepared } = counted();
    await db
      .insertInto('t')
      .values([
        { k: 'a', v: 1 },
        { k: 'b', v: 2 },
        { k: 'c', v: 3 },
      ])
      .execute();
    const before = prepared();
    // Six different texts through a cache of four.
    const nth = (i: number) =>
      db
        .selectFrom('t')
        .select('v')
        .where(
          'v',
          'in',
          Array.from({ length: i + 1 }, (_, j) => j),
        )
        .execute();
    for (let i = 0; i < 6; i++) await nth(i);
    expect(prepared() - before).toBe(6);
    // The last four are kept; the first two were let go.
    for (let i = 5; i >= 0; i--) await nth(i);
    expect(prepared() - before).toBe(8);
    await db.destroy();
  });

  it('never hands out a statement still being iterated', () => {
    const raw = new SQLite(':memory:');
    raw.exec("create table t (k text); insert into t values ('a'), ('b'), ('c')");
    const db = reusingStatements(raw);
    const first = db.prepare('select k from t order by k') as SQLite.Statement<[], { k: string }>;
    const rows = first.iterate();
    expect(rows.next().value).toEqual({ k: 'a' });
    const second = db.prepare('select k from t order by k') as SQLite.Statement<[], { k: string }>;
    expect(second).not.toBe(first);
    expect(second.all().map((r) => r.k)).toEqual(['a', 'b', 'c']);
    expect([...rows].map((r) => r.k)).toEqual(['b', 'c']);
    // Done iterating, it is the one kept again.
    expect(db.prepare('select k from t order by k')).toBe(first);
    db.close();
  });
});
