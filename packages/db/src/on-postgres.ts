import { PostgresAdapter, type Kysely } from 'kysely';

/** Whether a database handle talks to PostgreSQL (rather than SQLite). */
export function onPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
