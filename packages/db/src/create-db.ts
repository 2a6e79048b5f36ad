import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, type SqliteDatabase } from 'kysely';
import { Migrator, type MigrationProvider } from 'kysely/migration';
import pg from 'pg';
import { migrations } from './migrations/index.ts';
import type { Database } from './schema/index.ts';

export type Dialect = 'sqlite' | 'postgres';

export interface DbOptions {
  /** A postgres:// URL, a SQLite file path, `sqlite:<path>` or `:memory:`. */
  url: string;
  /** Connection pool size for PostgreSQL. */
  poolSize?: number;
}

export interface Db {
  readonly kysely: Kysely<Database>;
  readonly dialect: Dialect;
  migrate(): Promise<void>;
  close(): Promise<void>;
}

// PostgreSQL returns int8 and numeric as strings; every bigint we store is a millisecond time or a
// byte count, well inside Number's exact range.
pg.types.setTypeParser(20, (v) => Number(v));
pg.types.setTypeParser(1700, (v) => Number(v));

/**
 * Keeps a SQLite database private to the server's user: the file is created 0600 before SQLite
 * opens it (SQLite gives its -wal and -shm files the database file's mode), and an existing
 * database, WAL or shared-memory file is set to 0600.
 */
function keepPrivate(file: string): void {
  closeSync(openSync(file, 'a', 0o600));
  for (const path of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) {
    try {
      chmodSync(path, 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
}

/** SQL texts whose prepared statements are kept (`reusingStatements`). */
const KEPT_STATEMENTS = 100;

/**
 * The database as Kysely takes it, preparing each SQL text once and using the statement again.
 * better-sqlite3 keeps a statement's compiled program in native memory (about 120 KB for an insert
 * of 400 rows) until its JavaScript object is collected, and V8, seeing a small heap, collects it
 * rarely: a task writing its records a batch at a time grew the process by hundreds of MB. The
 * most recently used texts are kept; a statement still being iterated is not shared.
 */
export function reusingStatements(db: SQLite.Database, keep = KEPT_STATEMENTS): SqliteDatabase {
  const kept = new Map<string, SQLite.Statement>();
  return {
    close: () => db.close(),
    prepare(sql: string) {
      const found = kept.get(sql);
      if (found && !found.busy) {
        kept.delete(sql);
        kept.set(sql, found);
        return found;
      }
      const statement = db.prepare(sql);
      if (found) return statement;
      kept.set(sql, statement);
      if (kept.size > keep) kept.delete(kept.keys().next().value as string);
      return statement;
    },
  };
}

export function dialectOf(url: string): Dialect {
  return /^postgres(ql)?:\/\//i.test(url) ? 'postgres' : 'sqlite';
}

export function createDb(options: DbOptions): Db {
  const dialect = dialectOf(options.url);
  let kysely: Kysely<Database>;
  if (dialect === 'postgres') {
    const pool = new pg.Pool({ connectionString: options.url, max: options.poolSize ?? 10 });
    kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  } else {
    const file = options.url.replace(/^sqlite:(\/\/)?/, '');
    if (file !== ':memory:') {
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      keepPrivate(file);
    }
    const sqlite = new SQLite(file);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('synchronous = NORMAL');
    kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: reusingStatements(sqlite) }) });
  }
  const provider: MigrationProvider = { getMigrations: async () => migrations };
  return {
    kysely,
    dialect,
    async migrate() {
      // Areas add migrations side by side, so one may land with a number below one already applied
      // (each touches its own tables): apply it too, rather than refuse to start.
      const migrator = new Migrator({ db: kysely, provider, allowUnorderedMigrations: true });
      const { error, results } = await migrator.migrateToLatest();
      const failed = results?.find((r) => r.status === 'Error');
      if (error || failed) {
        throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${String(error)}`);
      }
    },
    async close() {
      await kysely.destroy();
    },
  };
}
