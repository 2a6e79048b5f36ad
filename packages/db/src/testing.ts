import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDatabase } from '@skyferry/testing';
import { afterAll, beforeAll, describe, inject } from 'vitest';
import { createDb, type Db, type Dialect } from './create-db.ts';

/** A fresh, migrated database of the given dialect: a temp SQLite file, or a new PostgreSQL database. */
export async function freshDb(dialect: Dialect): Promise<{ db: Db; url: string; cleanup: () => Promise<void> }> {
  if (dialect === 'postgres') {
    const url = await createDatabase(inject('postgresUrl'));
    const db = createDb({ url });
    await db.migrate();
    return { db, url, cleanup: () => db.close() };
  }
  const dir = mkdtempSync(join(tmpdir(), 'skyferry-sqlite-'));
  const url = join(dir, 'skyferry.db');
  const db = createDb({ url });
  await db.migrate();
  return {
    db,
    url,
    cleanup: async () => {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Runs a suite once on SQLite and once on PostgreSQL, each with its own fresh database.
 * `get()` returns the database inside tests.
 */
export function describeEachDialect(name: string, suite: (get: () => Db, dialect: Dialect) => void): void {
  for (const dialect of ['sqlite', 'postgres'] as const) {
    describe(`${name} [${dialect}]`, () => {
      let current: Awaited<ReturnType<typeof freshDb>> | undefined;
      beforeAll(async () => {
        current = await freshDb(dialect);
      });
      afterAll(async () => {
        await current?.cleanup();
      });
      suite(() => {
        if (!current) throw new Error('database not ready');
        return current.db;
      }, dialect);
    });
  }
}
