import type { Generated } from 'kysely';

/**
 * Conventions for every table: ids are text (random, opaque), times are integer milliseconds since
 * the epoch, booleans are integers 0/1, structured values are JSON text. This keeps SQLite and
 * PostgreSQL identical to the code above them.
 */
export interface MetaTable {
  key: string;
  value: string;
  updated_at: number;
}

export interface MigrationLockTable {
  id: Generated<number>;
}

export interface FoundationTables {
  meta: MetaTable;
}
